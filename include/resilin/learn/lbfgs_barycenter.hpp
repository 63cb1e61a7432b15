#pragma once
// Barycentres for any measure with a differentiable cost model (soft-DTW, soft-MSM, soft-CDTW,
// their divergences, ...): minimise L(z) = sum_k w_k M(z, x_k) over z (length, channels) by
// L-BFGS (LBFGS++ with a strong-Wolfe line search) on the analytic gradient of
// values_and_grads. The optimisation runs in double whatever T is; every evaluation rounds z
// to T first, so the returned values and loss are exactly those of an evaluated point: the
// lowest loss seen, never worse than the initialisation.
#include <cmath>
#include <concepts>
#include <cstddef>
#include <exception>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>
#include <Eigen/Core>
#include <LBFGS.h>
#include <resilin/core/concepts.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/loss.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn {

namespace detail {
/// The objective LBFGS++ calls: f(x) and its gradient, remembering the best point evaluated.
/// LBFGS++ has no per-iteration hook, so progress is reported at each evaluation that lowers
/// the loss (one per accepted step of a monotone line search).
template <class Measure, class T>
struct lbfgs_objective {
  Measure const& m;
  batch_view<T const> series;
  std::span<double const> w;
  index_t length, channels;
  int threads;
  progress_callback const& progress;

  loss_workspace<T> ws{};
  std::vector<T> z{};
  std::vector<T> best{};
  double best_loss = 0;
  int evaluations = 0;
  int improvements = 0;

  double operator()(Eigen::VectorXd const& x, Eigen::VectorXd& grad) {
    z.resize(static_cast<std::size_t>(x.size()));
    grad.resize(x.size());
    bool finite = true;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      z[static_cast<std::size_t>(i)] = static_cast<T>(x[i]);
      finite = finite && std::isfinite(z[static_cast<std::size_t>(i)]);
    }
    if (!finite) {  // a line-search trial gone astray (e.g. interpolation in float): reject it
      grad.setZero();
      return math::infinity<double>();
    }
    double const f = weighted_loss_and_grad(
        m, series_view<T const>{z.data(), length, channels}, series, w,
        std::span<double>(grad.data(), static_cast<std::size_t>(grad.size())), threads, ws);
    if (evaluations++ == 0 || f < best_loss) {
      if (evaluations > 1) {
        ++improvements;
        if (progress) progress("lbfgs", improvements, f);
      }
      best_loss = f;
      best = z;
    }
    return f;
  }
};
}  // namespace detail

/// The L-BFGS barycentre of a measure with a differentiable cost model (any smoothing; soft_min
/// is the intended one, the hard measures have their own methods in dba.hpp and mba.hpp).
/// weights: one per series, >= 0, not all 0 (empty: uniform). iterations: the L-BFGS
/// iterations, or, when the line search gives up (the loss is flat to working precision), the
/// number of steps that lowered the loss until then.
template <alignment_measure Measure, std::floating_point T>
barycenter_result<T> lbfgs_barycenter(Measure const& m, batch_view<T const> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  static_assert(differentiable_cost_model<typename Measure::cost_type, T>,
                "lbfgs_barycenter needs a cost model with step_grad");
  m.smooth.validate();
  detail::check_options(opt);
  detail::check_inputs(series, "barycenter");
  auto const w = detail::normalised_weights(weights, series.batch);
  index_t const length = detail::target_length(series, opt.length);
  index_t const channels = series.channels;
  std::vector<T> const z0 = detail::initial_barycenter(m, series, std::span<double const>(w), length, opt);

  detail::lbfgs_objective<Measure, T> f{m, series, std::span<double const>(w), length, channels,
                                        opt.threads, opt.progress};
  Eigen::VectorXd x(static_cast<Eigen::Index>(z0.size()));
  for (std::size_t i = 0; i < z0.size(); ++i) x[static_cast<Eigen::Index>(i)] = static_cast<double>(z0[i]);
  int iterations = 0;
  if (opt.max_iter == 0) {
    Eigen::VectorXd g;
    f(x, g);
  } else {
    LBFGSpp::LBFGSParam<double> param;
    param.m = 10;
    param.epsilon = opt.tolerance;
    param.epsilon_rel = opt.tolerance;
    param.max_iterations = opt.max_iter;
    param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
    param.max_linesearch = 40;
    LBFGSpp::LBFGSSolver<double, LBFGSpp::LineSearchNocedalWright> solver(param);
    double fx = 0;
    try {
      iterations = solver.minimize(f, x, fx);
    } catch (resilin::invalid_argument const&) {
      throw;
    } catch (resilin::runtime_error const&) {
      throw;
    } catch (std::exception const&) {
      // LBFGS++ throws when the line search cannot make progress (flat to working precision,
      // typically near the optimum in float): the best point evaluated is the answer.
      iterations = f.improvements;
    }
  }
  barycenter_result<T> r;
  r.values = std::move(f.best);
  r.length = length;
  r.channels = channels;
  r.loss = f.best_loss;
  r.iterations = iterations;
  return r;
}

}  // namespace resilin::learn

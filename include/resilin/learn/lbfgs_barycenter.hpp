#pragma once
// Barycentres for any measure with a differentiable cost model (soft-DTW, soft-MSM, soft-CDTW,
// their divergences, ...): minimise L(z) = sum_k w_k M(z, x_k) over z (length, channels) by
// L-BFGS (LBFGS++ with a strong-Wolfe line search) on the analytic gradient of
// values_and_grads. The optimisation runs in double whatever T is; every evaluation rounds z
// to T first, so the returned values and loss are exactly those of an evaluated point: the
// lowest loss seen, never worse than the initialisation.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <exception>
#include <limits>
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
/// The objective LBFGS++ calls: f(x) and its gradient through `evaluate(z, grad)` (the
/// summed loss at z and its gradient, on the host or a device), remembering the best point.
/// LBFGS++ has no per-iteration hook, so progress is reported at each evaluation that lowers
/// the loss (one per accepted step of a monotone line search).
template <class Evaluate, class T>
struct lbfgs_objective {
  Evaluate& evaluate;
  index_t length, channels;
  progress_callback const& progress;

  std::vector<T> z{};
  Eigen::VectorXd best{};  // the lowest-loss z (values of T), empty before a finite loss
  Eigen::VectorXd best_grad{};
  double best_loss = 0;
  int improvements = 0;
  int line_searches = 0;  // completed: the solver's iterations (counted_line_search)

  std::exception_ptr raised{};  // what the evaluation or the progress callback threw

  /// LBFGS++ calls this; whatever it throws is kept, so that minimise_lbfgs tells it apart from
  /// LBFGS++'s own exceptions (a line search that cannot progress) and rethrows it.
  double operator()(Eigen::VectorXd const& x, Eigen::VectorXd& grad) {
    try {
      return evaluate_at(x, grad);
    } catch (...) {
      raised = std::current_exception();
      throw;
    }
  }

  double evaluate_at(Eigen::VectorXd const& x, Eigen::VectorXd& grad) {
    z.resize(static_cast<std::size_t>(x.size()));
    grad.resize(x.size());
    bool finite = true;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      z[static_cast<std::size_t>(i)] = static_cast<T>(x[i]);
      finite = finite && std::isfinite(z[static_cast<std::size_t>(i)]);
    }
    if (!finite) {  // a line-search trial gone astray (e.g. interpolation in float): reject it
      grad.setZero();
      return std::numeric_limits<double>::infinity();
    }
    double const f = evaluate(series_view<T const>{z.data(), length, channels},
                              std::span<double>(grad.data(), static_cast<std::size_t>(grad.size())));
    // A point whose loss is not a number (float overflow far from the data) is never kept.
    if (std::isfinite(f) && (best.size() == 0 || f < best_loss)) {
      if (best.size() != 0) {
        ++improvements;
        if (progress) progress("lbfgs", improvements, f);
      }
      best_loss = f;
      best = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1> const>(z.data(), x.size()).template cast<double>();
      best_grad = grad;
    }
    return std::isfinite(f) ? f : std::numeric_limits<double>::infinity();
  }
};

/// LBFGS++'s strong-Wolfe line search, counting the searches that complete in the objective:
/// the solver's iterations, also when a later search throws (several trials of one search may
/// lower the loss, so the lowering evaluations overcount them about fourfold).
template <class Scalar>
struct counted_line_search {
  template <class Objective, class Vector>
  static void LineSearch(Objective& f, Scalar& fx, Vector& x, Vector& grad, Scalar& step,
                         Vector const& drt, Vector const& xp, LBFGSpp::LBFGSParam<Scalar> const& param) {
    LBFGSpp::LineSearchNocedalWright<Scalar>::LineSearch(f, fx, x, grad, step, drt, xp, param);
    ++f.line_searches;
  }
};

/// What an L-BFGS barycentre starts from: the normalised weights, the length, the first z.
template <class T>
struct lbfgs_start {
  std::vector<double> w;
  index_t length = 0;
  std::vector<T> z0;
};

/// Checks the measure, inputs and options, and computes the start.
template <class Measure, std::floating_point T>
lbfgs_start<T> prepare_lbfgs(Measure const& m, batch_view<T const> series,
                             std::span<T const> weights, barycenter_options const& opt) {
  static_assert(differentiable_cost_model<typename Measure::cost_type, T>,
                "lbfgs_barycenter needs a cost model with step_grad");
  m.template validate<T>();
  check_options(opt);
  check_inputs(series, "barycenter");
  lbfgs_start<T> s;
  s.w = normalised_weights(weights, series.batch);
  s.length = target_length(series, opt);
  s.z0 = initial_barycenter(m, series, std::span<double const>(s.w), s.length, opt);
  return s;
}

/// Whether LBFGS++'s gradient test holds at x: |g| <= max(epsilon, epsilon_rel |x|).
inline bool stationary(Eigen::VectorXd const& x, Eigen::VectorXd const& g, double tolerance) {
  return g.norm() <= std::max(tolerance, tolerance * x.norm());
}

/// L-BFGS from z0 on evaluate(z, grad) -> loss; the lowest-loss point evaluated is the result.
/// Where a run ends away from a stationary point (a line search that fails: soft-MSM's gate is
/// stiff where two samples of z nearly meet, and the fit stopped with |grad| 0.125, 2e-5 above
/// the optimum; or one that returns its last trial), the solver starts again from the best
/// point with its memory cleared, its first step along the steepest descent, as long as each
/// run lowers the loss by more than tolerance * |loss|.
template <std::floating_point T, class Evaluate>
barycenter_result<T> minimise_lbfgs(Evaluate&& evaluate, std::vector<T> const& z0,
                                    index_t length, index_t channels,
                                    barycenter_options const& opt) {
  lbfgs_objective<std::remove_reference_t<Evaluate>, T> f{evaluate, length, channels,
                                                          opt.progress};
  Eigen::VectorXd x(static_cast<Eigen::Index>(z0.size()));
  for (std::size_t i = 0; i < z0.size(); ++i) x[static_cast<Eigen::Index>(i)] = static_cast<double>(z0[i]);
  int iterations = 0;
  Eigen::VectorXd g;
  f(x, g);  // the start: always a candidate
  require(f.best.size() != 0, "barycenter: the loss at the initial barycentre is not finite");
  // at most max_iter runs: a run that gains before its first line search completes counts none
  for (int run = 0; run < opt.max_iter && iterations < opt.max_iter; ++run) {
    LBFGSpp::LBFGSParam<double> param;
    param.m = 10;
    param.epsilon = opt.tolerance;
    param.epsilon_rel = opt.tolerance;
    param.max_iterations = opt.max_iter - iterations;
    param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
    param.max_linesearch = 40;
    LBFGSpp::LBFGSSolver<double, counted_line_search> solver(param);
    x = f.best;
    double const start_loss = f.best_loss;
    double fx = 0;
    // LBFGS++ returns 1 also when the start already meets the gradient test, before any step:
    // the completed line searches are the iterations made
    f.line_searches = 0;
    try {
      (void)solver.minimize(f, x, fx);
    } catch (std::exception const&) {
      // thrown by the evaluation or the user's progress callback (a cancel, bad_alloc): passed
      // on; it was taken for a failed line search and the fit returned normally
      if (f.raised) std::rethrow_exception(f.raised);
      // else LBFGS++'s line search could not make progress
    }
    iterations += f.line_searches;
    // A normal return is not proof of a stationary point either: after max_linesearch trials
    // the line search returns whatever its last trial gave, and in float a trial past float's
    // range (loss inf, gradient 0) made the interpolated steps NaN, whose zero gradient passed
    // the test (soft-MSM float fits stopped at |grad| 1.6 for a test of 3e-5). So every run
    // ends the same way: start again from the best point where this run gained something and
    // that point is not stationary (in float near the optimum, the loss is flat to working
    // precision: no gain, the fit ends).
    bool const gained = f.best_loss < start_loss - opt.tolerance * std::abs(start_loss);
    if (!gained || stationary(f.best, f.best_grad, opt.tolerance)) break;
  }
  barycenter_result<T> r;
  r.values.assign(f.best.data(), f.best.data() + f.best.size());  // exact: values of T
  r.length = length;
  r.channels = channels;
  r.loss = f.best_loss;
  r.iterations = iterations;
  return r;
}
}  // namespace detail

/// The L-BFGS barycentre of a measure with a differentiable cost model (any smoothing; soft_min
/// is the intended one, the hard measures have their own methods in dba.hpp and mba.hpp).
/// weights: one per series, >= 0, not all 0 (empty: uniform). iterations: the L-BFGS
/// iterations (completed line searches), over every run (a run that ends away from a stationary
/// point is followed by another from the best point; see minimise_lbfgs). The gradients of all
/// pairs (z, x_k) of an evaluation run as one batch on the host threads; learn/cuda.cuh runs
/// them on a GPU.
template <alignment_measure Measure, std::floating_point T>
barycenter_result<T> lbfgs_barycenter(Measure const& m, batch_view<T const> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  auto const start = detail::prepare_lbfgs(m, series, weights, opt);
  detail::loss_workspace<T> ws;
  auto evaluate = [&](series_view<T const> z, std::span<double> grad) {
    return detail::weighted_loss_and_grad(m, z, series, std::span<double const>(start.w), grad,
                                          opt.threads, opt.objective, ws);
  };
  return detail::minimise_lbfgs<T>(evaluate, start.z0, start.length, series.channels, opt);
}

}  // namespace resilin::learn

#pragma once
// The barycentre loss L(z) = sum_k w_k M(z, x_k) (weights normalised to sum 1) and its analytic
// gradient, both through the batched host front end: the pairs (z, x_k) run in parallel and
// the per-pair results are summed in k order, so the result does not depend on the threads.
// A divergence D(z, x) = S(z, x) - S(z, z)/2 - S(x, x)/2 is summed as its three parts:
// sum_k w_k S(z, x_k), then z's own term once (sum_k w_k) S(z, z)/2 with its gradient, then the
// series' own terms, constant in z, whose values one workspace keeps: n + 1 recursions per
// evaluation where the pairs' divergences took 3n (the same value up to rounding).
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/objective.hpp>

namespace resilin::learn {

namespace detail {
/// Buffers reused across the evaluations of one optimisation.
template <class T>
struct loss_workspace {
  std::vector<T> zs;        // (n, length, channels): z repeated once per series
  std::vector<T> out;       // (n)
  std::vector<T> gz;        // (n, length, channels)
  std::vector<T> gx;        // (n, max_length, channels): the unused gradients of the inputs
  std::vector<T> upstream;  // (n): the weights in T
  std::vector<T> self_gz;   // (length, channels): the gradient of a divergence's S(z, z) term
  // sum_k w_k S(x_k, x_k) of a divergence under the objective, kept for the series (by address
  // and shape: one optimisation does not change them in place), weights and objective it was
  // computed for (self_series.data null: none yet), and computed again for others
  double series_self = 0;
  batch_view<T const> self_series{};
  std::vector<double> self_weights;
  barycenter_objective self_objective = barycenter_objective::value;
};

/// The measure without its divergence flag: the S of D(x, y) = S(x, y) - S(x, x)/2 - S(y, y)/2.
template <alignment_measure Measure>
Measure without_divergence(Measure m) {
  m.divergence = false;
  return m;
}

/// sum_k w_k S(x_k, x_k) under the objective (plain: the divergence's S), kept in ws.
template <alignment_measure Measure, class T>
double series_self_terms(Measure const& plain, batch_view<T const> series, std::span<double const> w,
                         int threads, barycenter_objective o, loss_workspace<T>& ws) {
  bool const same = ws.self_series.data == series.data && ws.self_objective == o &&
                    ws.self_series.batch == series.batch && ws.self_series.max_length == series.max_length &&
                    ws.self_series.channels == series.channels && ws.self_series.lengths == series.lengths &&
                    std::equal(w.begin(), w.end(), ws.self_weights.begin(), ws.self_weights.end());
  if (!same) {
    std::vector<T> self(static_cast<std::size_t>(series.batch));
    objective_values(o, threads, plain, series, series, std::span<T>(self));
    double sum = 0;
    for (std::size_t k = 0; k < self.size(); ++k) sum += w[k] * static_cast<double>(self[k]);
    ws.series_self = sum;
    ws.self_series = series;
    ws.self_weights.assign(w.begin(), w.end());
    ws.self_objective = o;
  }
  return ws.series_self;
}

/// The sum of the weights (1 up to rounding: normalised_weights).
inline double weight_sum(std::span<double const> w) {
  double sum = 0;
  for (double v : w) sum += v;
  return sum;
}

template <class T>
void check_barycenter_shape(series_view<T const> z, batch_view<T const> series) {
  require(z.data != nullptr && z.length >= 1, "barycenter: z is empty (length ", z.length, ")");
  require(z.channels == series.channels, "barycenter: z has ", z.channels,
          " channels, the series have ", series.channels);
  resilin::detail::check_series(z, "z");  // named here: the replicated batch is internal
}

/// The checks of barycenter_loss_and_grad(); returns the normalised weights.
template <class T>
std::vector<double> check_loss_and_grad_call(series_view<T const> z, batch_view<T const> series,
                                             std::span<T const> weights, std::span<double> grad) {
  check_inputs(series, "barycenter_loss_and_grad");
  check_barycenter_shape(z, series);
  require(static_cast<index_t>(grad.size()) == z.size(), "grad has ", grad.size(),
          " entries, expected z.size() = ", z.size());
  return normalised_weights(weights, series.batch);
}

template <alignment_measure Measure, class T>
double weighted_loss(Measure const& m, series_view<T const> z, batch_view<T const> series,
                     std::span<double const> w, int threads, barycenter_objective o,
                     loss_workspace<T>& ws) {
  if (m.divergence) {  // its three parts (top of the file)
    auto const plain = without_divergence(m);
    double const series_self = series_self_terms(plain, series, w, threads, o, ws);
    double const cross = weighted_loss(plain, z, series, w, threads, o, ws);
    batch_view<T const> const one{z.data, 1, z.length, z.channels, nullptr};
    T self = 0;
    objective_values(o, threads, plain, one, one, std::span<T>(&self, 1));
    return cross - 0.5 * weight_sum(w) * static_cast<double>(self) - 0.5 * series_self;
  }
  index_t const n = series.batch;
  replicate(std::span<T const>(z.data, static_cast<std::size_t>(z.size())), n, ws.zs);
  ws.out.resize(static_cast<std::size_t>(n));
  batch_view<T const> const zb{ws.zs.data(), n, z.length, z.channels, nullptr};
  objective_values(o, threads, m, zb, series, std::span<T>(ws.out));
  double loss = 0;
  for (index_t k = 0; k < n; ++k)
    loss += w[static_cast<std::size_t>(k)] * static_cast<double>(ws.out[static_cast<std::size_t>(k)]);
  return loss;
}

template <alignment_measure Measure, class T>
double weighted_loss_and_grad(Measure const& m, series_view<T const> z, batch_view<T const> series,
                              std::span<double const> w, std::span<double> grad, int threads,
                              barycenter_objective o, loss_workspace<T>& ws) {
  auto const size = static_cast<std::size_t>(z.size());
  if (m.divergence) {  // its three parts (top of the file)
    auto const plain = without_divergence(m);
    double const series_self = series_self_terms(plain, series, w, threads, o, ws);
    double const cross = weighted_loss_and_grad(plain, z, series, w, grad, threads, o, ws);
    // z's own term and its gradient through both arguments, into one buffer (Y = X)
    double const half_weight = 0.5 * weight_sum(w);
    batch_view<T const> const one{z.data, 1, z.length, z.channels, nullptr};
    ws.self_gz.resize(size);
    batch_view<T> const g{ws.self_gz.data(), 1, z.length, z.channels, nullptr};
    T self = 0;
    T const seed = static_cast<T>(-half_weight);
    objective_values_and_grads(o, threads, plain, one, one, std::span<T>(&self, 1), g, g,
                               std::span<T const>(&seed, 1));
    for (std::size_t i = 0; i < size; ++i) grad[i] += static_cast<double>(ws.self_gz[i]);
    return cross - half_weight * static_cast<double>(self) - 0.5 * series_self;
  }
  index_t const n = series.batch;
  replicate(std::span<T const>(z.data, size), n, ws.zs);
  ws.out.resize(static_cast<std::size_t>(n));
  ws.gz.resize(ws.zs.size());
  ws.gx.resize(static_cast<std::size_t>(n * series.max_length * series.channels));
  ws.upstream.assign(w.begin(), w.end());
  batch_view<T const> const zb{ws.zs.data(), n, z.length, z.channels, nullptr};
  objective_values_and_grads(o, threads, m, zb, series, std::span<T>(ws.out),
                             batch_view<T>{ws.gz.data(), n, z.length, z.channels, nullptr},
                             batch_view<T>{ws.gx.data(), n, series.max_length, series.channels, series.lengths},
                             std::span<T const>(ws.upstream));
  double loss = 0;
  std::fill(grad.begin(), grad.end(), 0.0);
  for (index_t k = 0; k < n; ++k) {
    loss += w[static_cast<std::size_t>(k)] * static_cast<double>(ws.out[static_cast<std::size_t>(k)]);
    T const* g = ws.gz.data() + static_cast<std::size_t>(k) * size;
    for (std::size_t i = 0; i < size; ++i) grad[i] += static_cast<double>(g[i]);
  }
  return loss;
}
}  // namespace detail

/// sum_k w_k M(z, x_k) with the weights normalised to sum 1 (empty: uniform); M is the sharp
/// value for objective sharp (barycenter_objective).
template <alignment_measure Measure, std::floating_point T>
double barycenter_loss(Measure const& m, series_view<T const> z, batch_view<T const> series,
                       std::type_identity_t<std::span<T const>> weights = {}, int threads = 0,
                       barycenter_objective objective = barycenter_objective::value) {
  detail::check_inputs(series, "barycenter_loss");
  detail::check_barycenter_shape(z, series);
  detail::require(threads >= 0, "threads must be >= 0 (0 = all cores), got ", threads);
  detail::check_objective(objective);
  auto const w = detail::normalised_weights(weights, series.batch);
  detail::loss_workspace<T> ws;
  return detail::weighted_loss(m, z, series, std::span<double const>(w), threads, objective, ws);
}

/// barycenter_loss() and its gradient with respect to z, written to grad (z.size() entries,
/// row-major like z). Needs a cost model with step_grad.
template <alignment_measure Measure, std::floating_point T>
double barycenter_loss_and_grad(Measure const& m, series_view<T const> z,
                                batch_view<T const> series,
                                std::type_identity_t<std::span<T const>> weights,
                                std::span<double> grad, int threads = 0,
                                barycenter_objective objective = barycenter_objective::value) {
  auto const w = detail::check_loss_and_grad_call(z, series, weights, grad);
  detail::require(threads >= 0, "threads must be >= 0 (0 = all cores), got ", threads);
  detail::check_objective(objective);
  detail::loss_workspace<T> ws;
  return detail::weighted_loss_and_grad(m, z, series, std::span<double const>(w), grad, threads,
                                        objective, ws);
}

namespace detail {
/// Whether z or the series are views of mutable values (the overloads below make them const).
template <class Z, class B>
inline constexpr bool any_mutable_view =
    !std::is_const_v<typename Z::element_type> || !std::is_const_v<typename B::element_type>;
}  // namespace detail

/// barycenter_loss() of mutable views (z, the series or both), as barycenter() takes them.
template <alignment_measure Measure, series_like Z, batch_like B>
  requires std::same_as<value_of<Z>, value_of<B>> && detail::any_mutable_view<Z, B>
double barycenter_loss(Measure const& m, Z z, B series,
                       std::type_identity_t<std::span<value_of<Z> const>> weights = {}, int threads = 0,
                       barycenter_objective objective = barycenter_objective::value) {
  return barycenter_loss(m, as_const(z), as_const(series), weights, threads, objective);
}

/// barycenter_loss_and_grad() of mutable views (z, the series or both).
template <alignment_measure Measure, series_like Z, batch_like B>
  requires std::same_as<value_of<Z>, value_of<B>> && detail::any_mutable_view<Z, B>
double barycenter_loss_and_grad(Measure const& m, Z z, B series,
                                std::type_identity_t<std::span<value_of<Z> const>> weights,
                                std::span<double> grad, int threads = 0,
                                barycenter_objective objective = barycenter_objective::value) {
  return barycenter_loss_and_grad(m, as_const(z), as_const(series), weights, grad, threads, objective);
}

}  // namespace resilin::learn

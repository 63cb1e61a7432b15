#pragma once
// The FastCDTW outer solver (spec/cdtw.md B.3.8, B.4.1): Adam on the warp logits for a fixed
// number of steps, then D = F at the final warp. The gradient of D with respect to the series
// is taken at that fixed warp (envelope / Danskin), as the barycentre M-step does.
//
// D DEPENDS ON THE BUDGET: the softplus-cumsum warp can keep degenerating, so F keeps falling
// and the fit never "converges". `steps` and `lr` are the regulariser; distances computed with
// different (steps, lr) are not comparable. Nothing here iterates to convergence.
//
// fit_options, fit_workspace and detail::adam_fit() are RESILIN_HD-safe (a kernel can run one
// fit per thread with its own workspace); fit(), distances(), distances_and_grads() and
// pairwise_distances() are the host API: validated, threaded over pairs, deterministic (every
// pair is one task that writes only its own outputs).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/core/validate.hpp>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/grid_start.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/warp.hpp>

namespace resilin::fcdtw {

/// Where a fit starts: the identity warp (zero logits, the paper's choice) or the hard grid
/// CDTW alignment of the pair (grid_start.hpp; host only, O(n m) per pair).
enum class warp_init { identity, grid };

namespace detail {
/// "" for one of warp_init's values, else why not (an integer cast to it).
inline std::string option_error(warp_init i) {
  if (i == warp_init::identity || i == warp_init::grid) return {};
  return resilin::detail::message("init must be identity or grid, got ", static_cast<int>(i));
}
}  // namespace detail

/// Settings of the fit. Defaults follow the paper's repository (README: 300 steps; lr from
/// {1e-3, 5e-3, 1e-2} by cross-validation; torch Adam defaults).
struct fit_options {
  index_t steps = 300;
  double lr = 1e-2;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  warp_map map = warp_map::softplus_cumsum;
  path_norm norm = path_norm::l2;
  index_t segments = 0;  // K, the warp's segments; 0: len(y) - 1 ("one knot per timestamp")
  warp_init init = warp_init::identity;  // the host APIs' start (fit(): unless initial_logits)
  int threads = 0;       // batch APIs: 0 = every hardware thread
  /// The most segments accepted (2^40, beyond any memory: a fit's buffers take 8 K + 2 values).
  static constexpr index_t max_segments = index_t{1} << 40;
};

/// Caller-provided buffers of one fit with K segments. r holds the initial logits on entry
/// (zeros: the identity) and the final ones on exit; v the final warp knots.
template <class T>
struct fit_workspace {
  T* r;   // (K)
  T* v;   // (K + 1)
  T* dv;  // (K + 1)
  T* dr;  // (K)
  T* m;   // (K) Adam first moment
  T* s;   // (K) Adam second moment
  T* p;   // (K) the current increments, kept for the backward
  T* e;   // (K) exp(-|r_i|) of the current logits, kept for the backward
};

/// Values of T a fit with K segments needs (fit_workspace_in).
RESILIN_HD constexpr index_t fit_workspace_size(index_t K) noexcept { return 8 * K + 2; }

/// The workspace of a fit with K segments in fit_workspace_size(K) values at p.
template <class T>
RESILIN_HD fit_workspace<T> fit_workspace_in(T* p, index_t K) noexcept {
  return {p, p + K, p + 2 * K + 1, p + 3 * K + 2, p + 4 * K + 2, p + 5 * K + 2, p + 6 * K + 2, p + 7 * K + 2};
}

namespace detail {

/// Runs o.steps Adam steps on ws.r from its current value; returns F at the final logits, with
/// the final knots in ws.v. No allocation, no exceptions.
template <class T>
RESILIN_HD T adam_fit(interpolant<T> const& x, interpolant<T> const& y, index_t K,
                      fit_options const& o, fit_workspace<T> ws) noexcept {
  T const lr = static_cast<T>(o.lr), b1 = static_cast<T>(o.beta1), b2 = static_cast<T>(o.beta2);
  T const eps = static_cast<T>(o.eps);
  for (index_t i = 0; i < K; ++i) ws.m[i] = ws.s[i] = T(0);
  T b1t = T(1), b2t = T(1);  // beta^t, by products (no pow on the device path)
  for (index_t step = 0; step < o.steps; ++step) {
    T const total = warp_from_logits_kept(o.map, ws.r, K, ws.v, ws.p, ws.e);
    for (index_t j = 0; j <= K; ++j) ws.dv[j] = T(0);
    value_and_grad(x, y, uniform_warp<T>(ws.v, K), objective_grads<T>{ws.dv}, o.norm);
    if (total > T(0)) logits_backward_kept(ws.r, K, ws.dv, ws.p, ws.e, total, ws.dr);
    else logits_backward(o.map, ws.r, K, ws.dv, ws.dr);
    b1t *= b1;
    b2t *= b2;
    for (index_t i = 0; i < K; ++i) {
      T const g = ws.dr[i];
      ws.m[i] = b1 * ws.m[i] + (T(1) - b1) * g;
      ws.s[i] = b2 * ws.s[i] + (T(1) - b2) * g * g;
      T const mhat = ws.m[i] / (T(1) - b1t), shat = ws.s[i] / (T(1) - b2t);
      ws.r[i] -= lr * mhat / (math::sqrt(shat) + eps);
    }
  }
  warp_from_logits(o.map, ws.r, K, ws.v);
  return value(x, y, uniform_warp<T>(ws.v, K), o.norm);
}

/// The options of fits in value type T: their domains, and values that stay in them once cast
/// to T (the fit runs in T: lr = 1e39, eps = 1e-50 or beta = 1 - 1e-9 became inf, 0 or 1 in
/// float and the logits NaN).
template <class T = double>
std::string options_error(fit_options const& o) {
  using resilin::detail::message;
  if (!(o.steps >= 0)) return message("steps must be >= 0, got ", o.steps);
  if (!(std::isfinite(o.lr) && o.lr > 0)) return message("lr must be finite and > 0, got ", o.lr);
  if (!(o.beta1 >= 0 && o.beta1 < 1)) return message("beta1 must be in [0, 1), got ", o.beta1);
  if (!(o.beta2 >= 0 && o.beta2 < 1)) return message("beta2 must be in [0, 1), got ", o.beta2);
  if (!(std::isfinite(o.eps) && o.eps > 0)) return message("eps must be finite and > 0, got ", o.eps);
  if (!(o.segments >= 0 && o.segments <= fit_options::max_segments))
    return message("segments must be in [0, 2^40] (0: len(y) - 1), got ", o.segments);
  if (!(o.threads >= 0)) return message("threads must be >= 0 (0 = all cores), got ", o.threads);
  for (std::string e : {option_error(o.map), option_error(o.norm), option_error(o.init)})
    if (!e.empty()) return e;
  if (!(std::isfinite(static_cast<T>(o.lr)) && static_cast<T>(o.lr) > T(0)))
    return message("lr must be finite and > 0 in the value type, got ", o.lr);
  if (!(static_cast<T>(o.eps) > T(0))) return message("eps must be > 0 in the value type, got ", o.eps);
  if (!(static_cast<T>(o.beta1) < T(1) && static_cast<T>(o.beta2) < T(1)))
    return message("beta1 and beta2 must stay below 1 in the value type, got ", o.beta1, " and ", o.beta2);
  return {};
}

template <class T = double>
void check_options(fit_options const& o) {
  require_no_error(options_error<T>(o));
}

/// Whether a fit's logits stayed finite: Adam with a huge lr overflows them (to inf, then NaN,
/// and the warp with them), which is refused rather than returned as a distance.
template <class T>
RESILIN_HD bool finite_logits(fit_workspace<T> const& ws, index_t K) noexcept {
  for (index_t i = 0; i < K; ++i)
    if (!(ws.r[i] - ws.r[i] == T(0))) return false;  // inf - inf and NaN are NaN
  return true;
}

/// Whether a fit converged: its logits and its value F stayed finite. F alone overflows where
/// the samples are near max_sample_magnitude, also with steps = 0 (no gradient to overflow the
/// logits), and is refused as a diverged fit rather than returned as an infinite distance.
template <class T>
RESILIN_HD bool converged(fit_workspace<T> const& ws, index_t K, T value) noexcept {
  return finite_logits(ws, K) && value - value == T(0);
}

/// Adam from the logits in ws.r (detail::adam_fit): F at the final warp into `value`, and
/// whether the fit converged.
template <class T>
RESILIN_HD bool fit_from_logits(interpolant<T> const& x, interpolant<T> const& y, index_t K,
                                fit_options const& o, fit_workspace<T> ws, T& value) noexcept {
  value = adam_fit(x, y, K, o, ws);
  return converged(ws, K, value);
}

/// One fit of a batch from the identity (zero logits) into ws (fit_from_logits).
template <class T>
RESILIN_HD bool fit_from_identity(interpolant<T> const& x, interpolant<T> const& y, index_t K,
                       fit_options const& o, fit_workspace<T> ws, T& value) noexcept {
  for (index_t i = 0; i < K; ++i) ws.r[i] = T(0);
  return fit_from_logits(x, y, K, o, ws, value);
}

/// fit_from_identity(), or from the grid CDTW alignment when o.init says so (host only).
template <class T>
bool fit_from_start(interpolant<T> const& x, interpolant<T> const& y, index_t K,
                    fit_options const& o, fit_workspace<T> ws, T& value) {
  if (o.init == warp_init::identity) return fit_from_identity(x, y, K, o, ws, value);
  grid_start_logits(o.map, x, y, K, ws.r);
  return fit_from_logits(x, y, K, o, ws, value);
}

/// Throws resilin::invalid_argument naming the first diverged fit (job index into `diverged`).
inline void check_converged(std::vector<unsigned char> const& diverged, fit_options const& o,
                            std::string_view what) {
  auto const first = std::find(diverged.begin(), diverged.end(), 1);
  resilin::detail::require(first == diverged.end(), what, ": the Adam fit of pair ",
                           first - diverged.begin(), " diverged (non-finite logits or distance after ", o.steps,
                           " steps with lr = ", o.lr, "): lower lr (or, for samples near ",
                           "max_sample_magnitude, rescale the series: the objective overflowed)");
}

RESILIN_HD inline index_t segments_for(fit_options const& o, index_t y_length) noexcept {
  return o.segments > 0 ? o.segments : y_length - 1;
}

/// Owned buffers for fits of up to K segments (one per worker on the host).
template <class T>
struct fit_buffers {
  std::vector<T> data;
  fit_workspace<T> at(index_t K) {
    auto const n = static_cast<std::size_t>(fit_workspace_size(K));
    if (data.size() < n) data.resize(n);
    return fit_workspace_in(data.data(), K);
  }
};

template <class T>
void check_pair(interpolant<T> const& x, interpolant<T> const& y) {
  check_interpolant(x, "x");
  check_interpolant(y, "y");
  resilin::detail::require(x.channels() == y.channels(), "channel mismatch: x has ", x.channels(),
                           ", y has ", y.channels());
}

template <class T>
void check_pl_batch(batch_view<T const> b, std::string_view name) {
  resilin::detail::check_batch(b, name);
  for (index_t i = 0; i < b.batch; ++i) {
    resilin::detail::require(b.length(i) >= 2, name, ": series ", i,
                             " needs >= 2 samples for a piecewise-linear interpolant, got ",
                             b.length(i));
    std::string const series = resilin::detail::message(" series ", i);
    check_sample_range(b[i].data, b[i].size(), b.channels, name, series);
    check_uniform_resolution<T>(b.length(i), name, series);
  }
}

template <class T>
void zero(series_view<T> g) {
  for (index_t k = 0; k < g.size(); ++k) g.data[k] = T(0);
}
}  // namespace detail

/// The outcome of one fit: D = F at the final warp, the final logits r* (K) and knots v* (K + 1).
template <class T>
struct fit_result {
  T distance;
  std::vector<T> logits;
  std::vector<T> knots;
};

/// Fits a warp of x onto y's axis by Adam from `initial_logits` (K of them; for a warm start
/// from given knots use logits_from_knots()), else from o.init (the identity, or the grid CDTW
/// alignment), and returns D, r*, v*. If gx / gy are given (shapes of x / y), they receive
/// dD/dx and dD/dy at the fixed final warp (overwritten).
template <class T>
fit_result<T> fit(interpolant<T> const& x, interpolant<T> const& y, fit_options const& o = {},
                  std::span<T const> initial_logits = {}, series_view<T> gx = {},
                  series_view<T> gy = {}) {
  using resilin::detail::require;
  detail::check_options<T>(o);
  detail::check_pair(x, y);
  index_t const K = detail::segments_for(o, y.length());
  require(initial_logits.empty() || static_cast<index_t>(initial_logits.size()) == K,
          "initial_logits has ", initial_logits.size(), " entries, expected K = ", K);
  for (std::size_t i = 0; i < initial_logits.size(); ++i)
    require(std::isfinite(initial_logits[i]), "initial_logits[", i, "] is not finite: ",
            initial_logits[i]);
  require(!gx.data || (gx.length == x.length() && gx.channels == x.channels()),
          "gx must have the shape of x (", x.length(), ", ", x.channels(), "), got (", gx.length,
          ", ", gx.channels, ")");
  require(!gy.data || (gy.length == y.length() && gy.channels == y.channels()),
          "gy must have the shape of y (", y.length(), ", ", y.channels(), "), got (", gy.length,
          ", ", gy.channels, ")");
  {
    using resilin::detail::region;
    std::string e = resilin::detail::gradients_overlap_error(
        region(x.values, "x"), region(y.values, "y"), region(gx, "gx"), region(gy, "gy"), {},
        region(initial_logits, "initial_logits"));
    // explicit knots are read again after gx and gy are zeroed (gx over them gave NaN
    // gradients); each output alone, as gx = gy is allowed above
    auto const x_knots = region(x.grid.knots, x.grid.knots ? x.length() : 0, "x's knots");
    auto const y_knots = region(y.grid.knots, y.grid.knots ? y.length() : 0, "y's knots");
    if (e.empty()) e = resilin::detail::disjoint_error({region(gx, "gx")}, {x_knots, y_knots});
    if (e.empty()) e = resilin::detail::disjoint_error({region(gy, "gy")}, {x_knots, y_knots});
    require(e.empty(), e);
  }
  detail::fit_buffers<T> buf;
  fit_workspace<T> const ws = buf.at(K);
  if (initial_logits.empty() && o.init == warp_init::grid) grid_start_logits(o.map, x, y, K, ws.r);
  else
    for (index_t i = 0; i < K; ++i)
      ws.r[i] = initial_logits.empty() ? T(0) : initial_logits[static_cast<std::size_t>(i)];
  fit_result<T> res{detail::adam_fit(x, y, K, o, ws), std::vector<T>(ws.r, ws.r + K),
                    std::vector<T>(ws.v, ws.v + K + 1)};
  detail::check_converged({static_cast<unsigned char>(!detail::converged(ws, K, res.distance))}, o, "fit");
  if (gx.data || gy.data) {
    if (gx.data) detail::zero(gx);
    if (gy.data) detail::zero(gy);
    value_and_grad(x, y, uniform_warp<T>(ws.v, K), objective_grads<T>{nullptr, gx, gy}, o.norm);
  }
  return res;
}

/// fit() on uniform grids (linspace(0, 1, length)) from plain series views (optionally from
/// initial_logits, as fit()).
template <series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
fit_result<value_of<X>> fit(X x, Y y, fit_options const& o = {},
                            std::span<value_of<X> const> initial_logits = {}) {
  using T = value_of<X>;
  return fit(uniform_interpolant(series_view<T const>{x.data, x.length, x.channels}),
             uniform_interpolant(series_view<T const>{y.data, y.length, y.channels}), o,
             initial_logits);
}

namespace detail {
template <class XB, class YB>
void check_paired(XB X, YB Y, std::size_t out_size) {
  check_pl_batch(X, "X");
  check_pl_batch(Y, "Y");
  resilin::detail::require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch,
                           " and ", Y.batch);
  resilin::detail::require(X.channels == Y.channels, "channel mismatch: X has ", X.channels,
                           ", Y has ", Y.channels);
  resilin::detail::require(static_cast<index_t>(out_size) == X.batch, "out has ", out_size,
                           " entries, expected batch = ", X.batch);
}
template <class T>
index_t max_segments(fit_options const& o, batch_view<T const> Y) {
  index_t k = 1;
  for (index_t b = 0; b < Y.batch; ++b) k = std::max(k, segments_for(o, Y.length(b)));
  return k;
}
}  // namespace detail

/// out[b] = D(X[b], Y[b]) for a paired batch on uniform grids (ragged lengths allowed; each
/// warp has K = options.segments or len(Y[b]) - 1 segments).
template <batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void distances(fit_options const& o, XB xs, YB ys, std::span<value_of<XB>> out) {
  using T = value_of<XB>;
  detail::check_options<T>(o);
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  detail::check_paired(X, Y, out.size());
  resilin::detail::check_disjoint({resilin::detail::region(out, "out")},
                                  {resilin::detail::region(X, "X"), resilin::detail::region(Y, "Y")});
  std::vector<detail::fit_buffers<T>> bufs(
      static_cast<std::size_t>(resolve_threads(o.threads, X.batch)));
  std::vector<unsigned char> diverged(static_cast<std::size_t>(X.batch), 0);
  parallel_for(X.batch, o.threads, [&](index_t b, int w) {
    index_t const K = detail::segments_for(o, Y.length(b));
    diverged[static_cast<std::size_t>(b)] =
        !detail::fit_from_start(uniform_interpolant(X[b]), uniform_interpolant(Y[b]), K, o,
                                bufs[static_cast<std::size_t>(w)].at(K), out[static_cast<std::size_t>(b)]);
  });
  detail::check_converged(diverged, o, "distances");
}

/// distances() plus GX[b] = upstream[b] dD/dX[b] and GY[b] likewise, at each pair's fixed final
/// warp; padding beyond a series' length gets exactly 0. upstream defaults to ones.
template <batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void distances_and_grads(fit_options const& o, XB xs, YB ys, std::span<value_of<XB>> out,
                         batch_view<value_of<XB>> gxs, batch_view<value_of<XB>> gys,
                         std::span<value_of<XB> const> upstream = {}) {
  using T = value_of<XB>;
  detail::check_options<T>(o);
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  detail::check_paired(X, Y, out.size());
  resilin::detail::require(upstream.empty() || static_cast<index_t>(upstream.size()) == X.batch,
                           "upstream has ", upstream.size(), " entries, expected batch = ",
                           X.batch);
  for (std::size_t b = 0; b < upstream.size(); ++b)
    resilin::detail::require(std::isfinite(upstream[b]), "upstream[", b, "] is not finite: ",
                             upstream[b]);
  resilin::detail::check_same_shape(gxs, X, "GX", "X");
  resilin::detail::check_same_shape(gys, Y, "GY", "Y");
  {
    using resilin::detail::region;
    std::string const e = resilin::detail::gradients_overlap_error(
        region(X, "X"), region(Y, "Y"), region(gxs, "GX"), region(gys, "GY"),
        region(out, "out"), region(upstream, "upstream"));
    resilin::detail::require(e.empty(), e);
  }
  std::vector<detail::fit_buffers<T>> bufs(
      static_cast<std::size_t>(resolve_threads(o.threads, X.batch)));
  std::vector<unsigned char> diverged(static_cast<std::size_t>(X.batch), 0);
  parallel_for(X.batch, o.threads, [&](index_t b, int w) {
    index_t const K = detail::segments_for(o, Y.length(b));
    fit_workspace<T> const ws = bufs[static_cast<std::size_t>(w)].at(K);
    auto const xi = uniform_interpolant(X[b]), yi = uniform_interpolant(Y[b]);
    diverged[static_cast<std::size_t>(b)] =
        !detail::fit_from_start(xi, yi, K, o, ws, out[static_cast<std::size_t>(b)]);
    series_view<T> const gx{gxs.data + b * X.max_length * X.channels, X.max_length, X.channels};
    series_view<T> const gy{gys.data + b * Y.max_length * Y.channels, Y.max_length, Y.channels};
    detail::zero(gx);
    detail::zero(gy);
    T const seed = upstream.empty() ? T(1) : upstream[static_cast<std::size_t>(b)];
    value_and_grad(xi, yi, uniform_warp<T>(ws.v, K),
                   objective_grads<T>{nullptr, {gx.data, X.length(b), X.channels},
                                      {gy.data, Y.length(b), Y.channels}, seed},
                   o.norm);
  });
  detail::check_converged(diverged, o, "distances_and_grads");
}

/// The pairwise (cdist) form: out(a, b) = D(X[a], Y[b]), one warp fitted per pair; out is
/// (|X|, |Y|). X[a] is warped onto Y[b]'s axis (1-NN: X = train, Y = test gives D(test, train)).
template <batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise_distances(fit_options const& o, XB xs, YB ys, matrix_view<value_of<XB>> out) {
  using T = value_of<XB>;
  detail::check_options<T>(o);
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  detail::check_pl_batch(X, "X");
  detail::check_pl_batch(Y, "Y");
  resilin::detail::require(X.channels == Y.channels, "channel mismatch: X has ", X.channels,
                           ", Y has ", Y.channels);
  resilin::detail::require((out.data || X.batch * Y.batch == 0) && out.rows == X.batch &&
                               out.cols == Y.batch,
                           "out must be a non-null (", X.batch, ", ", Y.batch, "), got (",
                           out.rows, ", ", out.cols, ")");
  resilin::detail::check_disjoint({resilin::detail::region(out, "out")},
                                  {resilin::detail::region(X, "X"), resilin::detail::region(Y, "Y")});
  index_t const pairs = X.batch * Y.batch;
  std::vector<detail::fit_buffers<T>> bufs(
      static_cast<std::size_t>(resolve_threads(o.threads, pairs)));
  std::vector<unsigned char> diverged(static_cast<std::size_t>(pairs), 0);
  parallel_for(pairs, o.threads, [&](index_t k, int w) {
    index_t const a = k / Y.batch, b = k % Y.batch;
    index_t const K = detail::segments_for(o, Y.length(b));
    diverged[static_cast<std::size_t>(k)] =
        !detail::fit_from_start(uniform_interpolant(X[a]), uniform_interpolant(Y[b]), K, o,
                                bufs[static_cast<std::size_t>(w)].at(K), out(a, b));
  });
  detail::check_converged(diverged, o, "pairwise_distances (row-major pair index)");
}

}  // namespace resilin::fcdtw

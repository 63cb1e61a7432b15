#pragma once
// The host front end of the alignment recursion: one pair, paired batches (ragged allowed),
// and the pairwise (cdist) form, for any measure (cost model x smoothing x band, plain or
// divergence). Every entry point validates its input and throws resilin::invalid_argument.
#include <array>
#include <cmath>
#include <concepts>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>
#include <resilin/backend/host.hpp>
#include <resilin/backend/host/batch.hpp>
#include <resilin/backend/host/pair.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/core/validate.hpp>

namespace resilin {

/// A series view over a contiguous range of (length * channels) values.
template <std::ranges::contiguous_range R>
auto view(R& r, index_t channels = 1) {
  using U = std::remove_reference_t<std::ranges::range_reference_t<R>>;
  auto const size = static_cast<index_t>(std::ranges::size(r));
  detail::require(channels >= 1, "channels must be >= 1, got ", channels);
  detail::require(size % channels == 0, "a series of ", size,
                  " values cannot have ", channels, " channels");
  return series_view<U>{std::ranges::data(r), size / channels, channels};
}

/// A validated batch view over a contiguous range (batch, max_length, channels).
template <std::ranges::contiguous_range R>
auto make_batch(R& r, index_t batch, index_t max_length, index_t channels = 1,
                std::span<index_t const> lengths = {}) {
  using U = std::remove_reference_t<std::ranges::range_reference_t<R>>;
  return make_batch(std::span<U>(std::ranges::data(r), std::ranges::size(r)), batch, max_length,
                    channels, lengths);
}

namespace detail {
template <class Cost, class Smooth, class T>
void check_measure(measure<Cost, Smooth> const& m) {
  m.validate();
  static_assert(cost_model<Cost, T>, "the measure's cost model does not model cost_model<T>");
  static_assert(smoothing_rule<Smooth, T>, "the smoothing does not model smoothing_rule<T>");
}
using resilin::as_const;
template <class T>
void zero(series_view<T> g) { for (index_t k = 0; k < g.size(); ++k) g.data[k] = T(0); }

/// The checks of every call that returns one alignment of one pair (a matrix or a path): the
/// measure, not a divergence ("what: a divergence has no single <noun>"), the pair, and one
/// channel for independent-channel measures.
template <class T, class Cost, class Smooth>
void check_single_alignment(measure<Cost, Smooth> const& m, series_view<T const> x,
                            series_view<T const> y, char const* what, char const* noun) {
  check_measure<Cost, Smooth, T>(m);
  require(!m.divergence, what, ": a divergence has no single ", noun);
  check_pair(x, y);
  require(!m.independent_channels || x.channels == 1, what, ": independent channels have one "
          "alignment each; pass one channel, got ", x.channels);
}
}  // namespace detail

// --- one pair -------------------------------------------------------------------------------

/// S(x, y), or the divergence for a divergence measure. O(min(n, m)) working memory.
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> value(measure<Cost, Smooth> const& m, X x, Y y) {
  using T = value_of<X>;
  detail::check_measure<Cost, Smooth, T>(m);
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_pair(xc, yc);
  host_detail::workspace<T> ws;
  return host_detail::value(m, xc, yc, ws);
}

/// The value, with its gradient written to gx (shape of x) and gy (shape of y). Stores R only.
/// gx and gy must not overlap x, y or each other (resilin::invalid_argument), except that for
/// y = x (the same view) they may be one buffer, which then receives the derivative of S(x, x)
/// with respect to x (the sum of both).
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> value_and_grad(measure<Cost, Smooth> const& m, X x, Y y,
                           series_view<value_of<X>> gx, series_view<value_of<X>> gy) {
  using T = value_of<X>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  detail::check_measure<Cost, Smooth, T>(m);
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_pair(xc, yc);
  detail::require(gx.data && gx.length == xc.length && gx.channels == xc.channels,
                  "gx must have the shape of x (", xc.length, ", ", xc.channels, "), got (",
                  gx.length, ", ", gx.channels, ")");
  detail::require(gy.data && gy.length == yc.length && gy.channels == yc.channels,
                  "gy must have the shape of y (", yc.length, ", ", yc.channels, "), got (",
                  gy.length, ", ", gy.channels, ")");
  std::string const overlap = detail::gradients_overlap_error(
      detail::region(xc, "x"), detail::region(yc, "y"), detail::region(gx, "gx"), detail::region(gy, "gy"));
  detail::require(overlap.empty(), overlap);
  detail::zero(gx);
  detail::zero(gy);
  host_detail::workspace<T> ws;
  return host_detail::value_and_grad(m, xc, yc, gx, gy, T(1), ws);
}

/// S(x, y) and the soft alignment matrix E (n, m): E(i, j) = dS / dR(i, j), the probability
/// that the alignment visits (i, j); for hard_min, the indicator of the optimal path.
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> alignment_matrix(measure<Cost, Smooth> const& m, X x, Y y,
                             matrix_view<value_of<X>> e) {
  using T = value_of<X>;
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "alignment_matrix", "alignment matrix");
  detail::require(e.data && e.rows == xc.length && e.cols == yc.length, "e must be (",
                  xc.length, ", ", yc.length, "), got (", e.rows, ", ", e.cols, ")");
  detail::check_disjoint({detail::region(e, "e")}, {detail::region(xc, "x"), detail::region(yc, "y")});
  host_detail::workspace<T> ws;
  return host_detail::alignment_matrix(m, xc, yc, e, ws);
}

/// S(x, y) and the expected number of uses of each move into (i, j): diag (the match / move
/// occupancy), up (advance in x only) and left (advance in y only), each (n, m) or a null view
/// to skip. Their sum is alignment_matrix(). For MSM costs, diag is the soft alignment matrix.
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> move_occupancy(measure<Cost, Smooth> const& m, X x, Y y, matrix_view<value_of<X>> diag,
                           matrix_view<value_of<X>> up = {}, matrix_view<value_of<X>> left = {}) {
  using T = value_of<X>;
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "move_occupancy", "alignment");
  for (auto [o, name] : {std::pair{diag, "diag"}, std::pair{up, "up"}, std::pair{left, "left"}})
    detail::require(!o.data || (o.rows == xc.length && o.cols == yc.length), name, " must be (",
                    xc.length, ", ", yc.length, "), got (", o.rows, ", ", o.cols, ")");
  detail::check_disjoint(
      {detail::region(diag, "diag"), detail::region(up, "up"), detail::region(left, "left")},
      {detail::region(xc, "x"), detail::region(yc, "y")});
  host_detail::workspace<T> ws;
  return host_detail::move_occupancy(m, xc, yc, diag, up, left, ws);
}

/// The hard alignment path [(0, 0), ..., (n-1, m-1)] of a hard_min measure.
template <class Cost, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
std::vector<std::array<index_t, 2>> alignment_path(measure<Cost, hard_min> const& m, X x, Y y,
                                                   value_of<X>* value_out = nullptr) {
  using T = value_of<X>;
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "alignment_path", "path");
  host_detail::workspace<T> ws;
  return host_detail::alignment_path(m, xc, yc, value_out, ws);
}

// --- batches --------------------------------------------------------------------------------

/// out[b] = M(X[b], Y[b]) for every pair of a paired batch (ragged lengths allowed).
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void values(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
            std::span<value_of<XB>> out) {
  using T = value_of<XB>;
  detail::check_measure<Cost, Smooth, T>(m);
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_batch(X, "X");
  detail::check_batch(Y, "Y");
  detail::require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch, " and ",
                  Y.batch);
  detail::require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ",
                  Y.channels);
  detail::require(static_cast<index_t>(out.size()) == X.batch, "out has ", out.size(),
                  " entries, expected batch = ", X.batch);
  detail::check_disjoint({detail::region(out, "out")}, {detail::region(X, "X"), detail::region(Y, "Y")});
  std::vector<host_detail::workspace<T>> ws(
      static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  host_detail::batch_values<T>(
      m, X.batch, exec.threads, [&](index_t b) { return std::pair{X[b], Y[b]}; },
      [&](index_t b, T v) { out[static_cast<std::size_t>(b)] = v; }, ws);
}

/// values() plus the gradients: GX[b] = upstream[b] dM(X[b], Y[b]) / dX[b] (GY likewise);
/// padding samples beyond a series' length get exactly 0. upstream defaults to ones and must be
/// finite. The outputs must not overlap the inputs or each other, except GX = GY for Y = X (as
/// value_and_grad).
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void values_and_grads(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                      std::span<value_of<XB>> out, batch_view<value_of<XB>> gxs,
                      batch_view<value_of<XB>> gys,
                      std::span<value_of<XB> const> upstream = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  detail::check_measure<Cost, Smooth, T>(m);
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_batch(X, "X");
  detail::check_batch(Y, "Y");
  detail::require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch, " and ",
                  Y.batch);
  detail::require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ",
                  Y.channels);
  detail::require(static_cast<index_t>(out.size()) == X.batch, "out has ", out.size(),
                  " entries, expected batch = ", X.batch);
  detail::require(upstream.empty() || static_cast<index_t>(upstream.size()) == X.batch,
                  "upstream has ", upstream.size(), " entries, expected batch = ", X.batch);
  detail::check_same_shape(gxs, X, "GX", "X");
  detail::check_same_shape(gys, Y, "GY", "Y");
  for (std::size_t b = 0; b < upstream.size(); ++b)
    detail::require(std::isfinite(upstream[b]), "upstream[", b, "] is not finite: ", upstream[b]);
  std::string const overlap = detail::gradients_overlap_error(
      detail::region(X, "X"), detail::region(Y, "Y"), detail::region(gxs, "GX"), detail::region(gys, "GY"),
      detail::region(out, "out"), detail::region(upstream, "upstream"));
  detail::require(overlap.empty(), overlap);
  std::vector<host_detail::workspace<T>> ws(
      static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  parallel_for(X.batch, exec.threads, [&](index_t b, int w) {
    series_view<T> const gx{gxs.data + b * X.max_length * X.channels, X.max_length, X.channels};
    series_view<T> const gy{gys.data + b * Y.max_length * Y.channels, Y.max_length, Y.channels};
    detail::zero(gx);
    detail::zero(gy);
    T const seed = upstream.empty() ? T(1) : upstream[static_cast<std::size_t>(b)];
    series_view<T> const gxb{gx.data, X.length(b), X.channels};
    series_view<T> const gyb{gy.data, Y.length(b), Y.channels};
    out[static_cast<std::size_t>(b)] =
        host_detail::value_and_grad(m, X[b], Y[b], gxb, gyb, seed, ws[static_cast<std::size_t>(w)]);
  });
}

/// The pairwise (cdist) form: out(a, b) = M(X[a], Y[b]); out is (|X|, |Y|).
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
              matrix_view<value_of<XB>> out) {
  using T = value_of<XB>;
  detail::check_measure<Cost, Smooth, T>(m);
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_batch(X, "X");
  detail::check_batch(Y, "Y");
  detail::require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ",
                  Y.channels);
  detail::require((out.data || X.batch * Y.batch == 0) && out.rows == X.batch && out.cols == Y.batch,
                  "out must be a non-null (",
                  X.batch, ", ", Y.batch, "), got (", out.rows, ", ", out.cols, ")");
  detail::check_disjoint({detail::region(out, "out")}, {detail::region(X, "X"), detail::region(Y, "Y")});
  int const threads = resolve_threads(exec.threads, X.batch * Y.batch);
  std::vector<host_detail::workspace<T>> ws(static_cast<std::size_t>(threads));
  // A divergence needs each series' self-similarity once, not once per pair.
  std::vector<T> self_x, self_y;
  if (m.divergence && m.independent_channels && X.channels > 1) {
    // per channel, and the per-channel divergences summed as value() sums them (same bits)
    index_t const d = X.channels;
    self_x.resize(static_cast<std::size_t>(X.batch * d));
    self_y.resize(static_cast<std::size_t>(Y.batch * d));
    parallel_for(X.batch + Y.batch, threads, [&](index_t k, int w) {
      auto& wsw = ws[static_cast<std::size_t>(w)];
      if (k < X.batch) host_detail::channel_self_values(m, X[k], self_x.data() + k * d, wsw);
      else host_detail::channel_self_values(m, Y[k - X.batch], self_y.data() + (k - X.batch) * d, wsw);
    });
    parallel_for(X.batch * Y.batch, threads, [&](index_t k, int w) {
      index_t const a = k / Y.batch, b = k % Y.batch;
      out(a, b) = host_detail::independent_channels_value(m, X[a], Y[b], self_x.data() + a * d,
                                                          self_y.data() + b * d,
                                                          ws[static_cast<std::size_t>(w)]);
    });
    return;
  }
  auto plain = m;
  plain.divergence = false;
  if (m.divergence) {
    self_x.resize(static_cast<std::size_t>(X.batch));
    self_y.resize(static_cast<std::size_t>(Y.batch));
    parallel_for(X.batch + Y.batch, threads, [&](index_t k, int w) {
      auto& wsw = ws[static_cast<std::size_t>(w)];
      if (k < X.batch) self_x[static_cast<std::size_t>(k)] = host_detail::value(plain, X[k], X[k], wsw);
      else self_y[static_cast<std::size_t>(k - X.batch)] =
          host_detail::value(plain, Y[k - X.batch], Y[k - X.batch], wsw);
    });
  }
  host_detail::batch_values<T>(
      plain, X.batch * Y.batch, threads,
      [&](index_t k) { return std::pair{X[k / Y.batch], Y[k % Y.batch]}; },
      [&](index_t k, T v) {
        index_t const a = k / Y.batch, b = k % Y.batch;
        if (m.divergence)
          v = divergence_of(v, self_x[static_cast<std::size_t>(a)], self_y[static_cast<std::size_t>(b)]);
        out(a, b) = v;
      },
      ws);
}

/// GX[a] = sum_b weights(a, b) dM(X[a], Y[b]) / dX[a] (weights default to ones), and, when
/// out is given, out(a, b) = M(X[a], Y[b]). Each X[a] is owned by one task: deterministic.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise_grads(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                    batch_view<value_of<XB>> gxs, matrix_view<value_of<XB>> out = {},
                    matrix_view<value_of<XB> const> weights = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  detail::check_measure<Cost, Smooth, T>(m);
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_batch(X, "X");
  detail::check_batch(Y, "Y");
  detail::require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ",
                  Y.channels);
  detail::check_pairwise_grads_shapes(gxs, X, Y, out, weights);
  detail::check_pairwise_grads_inputs(gxs, X, Y, out, weights);
  std::vector<host_detail::workspace<T>> ws(
      static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  parallel_for(X.batch, exec.threads, [&](index_t a, int w) {
    auto& wsw = ws[static_cast<std::size_t>(w)];
    series_view<T> const gpad{gxs.data + a * X.max_length * X.channels, X.max_length, X.channels};
    detail::zero(gpad);
    series_view<T> const gx{gpad.data, X.length(a), X.channels};
    std::vector<T> gy_scratch;
    for (index_t b = 0; b < Y.batch; ++b) {
      T const seed = weights.data ? weights(a, b) : T(1);
      gy_scratch.assign(static_cast<std::size_t>(Y.length(b) * Y.channels), T(0));
      series_view<T> const gy{gy_scratch.data(), Y.length(b), Y.channels};
      T const v = host_detail::value_and_grad(m, X[a], Y[b], gx, gy, seed, wsw);
      if (out.data) out(a, b) = v;
    }
  });
}

// --- one-liners -----------------------------------------------------------------------------

/// Soft-DTW of two univariate series (squared Euclidean cost).
template <std::ranges::contiguous_range R1, std::ranges::contiguous_range R2>
auto soft_dtw(R1 const& x, R2 const& y, std::ranges::range_value_t<R1> gamma) {
  return value(measures::soft_dtw(gamma), view(x), view(y));
}

/// Exact DTW of two univariate series (sum of squared differences along the best path).
template <std::ranges::contiguous_range R1, std::ranges::contiguous_range R2>
auto dtw(R1 const& x, R2 const& y) {
  return value(measures::dtw(), view(x), view(y));
}

}  // namespace resilin

#pragma once
// The host front end of the alignment recursion: one pair, paired batches (ragged allowed),
// and the pairwise (cdist) form, for any measure (cost model x smoothing x band, plain or
// divergence). Every entry point validates its input and throws resilin::invalid_argument.
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <resilin/backend/host.hpp>
#include <resilin/backend/host/batch.hpp>
#include <resilin/backend/host/pair.hpp>
#include <resilin/backend/host/tangent.hpp>
#include <resilin/core/function_ref.hpp>
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

/// A validated batch view over a contiguous range (batch, max_length, channels); the range and
/// the lengths must outlive it.
template <std::ranges::contiguous_range R>
auto make_batch(R& r, index_t batch, index_t max_length, index_t channels = 1,
                std::span<index_t const> lengths = {}) {
  using U = std::remove_reference_t<std::ranges::range_reference_t<R>>;
  return make_batch(std::span<U>(std::ranges::data(r), std::ranges::size(r)), batch, max_length,
                    channels, lengths);
}
/// Lengths in a temporary container: refused at compile time (see validate.hpp's make_batch).
template <std::ranges::contiguous_range R, std::ranges::contiguous_range L>
  requires(!std::ranges::borrowed_range<L>)
batch_view<std::remove_reference_t<std::ranges::range_reference_t<R>>> make_batch(
    R& r, index_t batch, index_t max_length, index_t channels, L&& temporary_lengths) = delete;

namespace detail {
template <class Cost, class Smooth, class T>
void check_measure(measure<Cost, Smooth> const& m) {
  m.template validate<T>();
  static_assert(cost_model<Cost, T>, "the measure's cost model does not model cost_model<T>");
  static_assert(smoothing_rule<Smooth, T>, "the smoothing does not model smoothing_rule<T>");
}
using resilin::as_const;
template <class T>
void zero(series_view<T> g) { for (index_t k = 0; k < g.size(); ++k) g.data[k] = T(0); }

/// gx of x's shape and gy of y's (value_and_grad, expected_penalty).
template <class T>
void check_gradient_shapes(series_view<T> gx, series_view<T> gy, series_view<T const> x,
                           series_view<T const> y) {
  require(gx.data != nullptr, "gx is null");
  require(gy.data != nullptr, "gy is null");
  require(gx.length == x.length && gx.channels == x.channels,
          "gx must have the shape of x (", x.length, ", ", x.channels, "), got (", gx.length, ", ",
          gx.channels, ")");
  require(gy.length == y.length && gy.channels == y.channels,
          "gy must have the shape of y (", y.length, ", ", y.channels, "), got (", gy.length, ", ",
          gy.channels, ")");
}

/// The checks of a call that writes the gradients of one pair (value_and_grad, expected_penalty,
/// sharp_value_and_grad): the pair, gx of x's shape and gy of y's, apart from x, y and each
/// other unless y = x.
template <class T>
void check_gradient_call(series_view<T const> x, series_view<T const> y, series_view<T> gx,
                         series_view<T> gy) {
  check_pair(x, y);
  check_gradient_shapes(gx, gy, x, y);
  std::string const overlap =
      gradients_overlap_error(region(x, "x"), region(y, "y"), region(gx, "gx"), region(gy, "gy"));
  require(overlap.empty(), overlap);
}

/// A penalty omega(i, j) finite at every cell of the n x k problem inside m's band (of pair
/// `pair` of a batch when it is >= 0).
template <class M, class Read>
void check_penalty(M const& m, index_t n, index_t k, Read const& omega, index_t pair = -1) {
  band_geometry const band = m.band.geometry(n, k);
  for (index_t i = 0; i < n; ++i) {
    index_range const cols = band.row(i);
    for (index_t j = cols.lo; j <= cols.hi; ++j) {
      auto const o = omega(i, j);
      if (std::isfinite(o)) continue;
      if (pair >= 0) require(false, "omega is not finite (", o, ") at pair ", pair, ", cell (", i, ", ", j, ")");
      require(false, "omega is not finite (", o, ") at cell (", i, ", ", j, ")");
    }
  }
}

/// The checks of a paired batch of values (values, sharp_values): X and Y paired, out with one
/// entry per pair, apart from both.
template <class T>
void check_value_batch(batch_view<T const> X, batch_view<T const> Y, std::span<T> out) {
  check_batch(X, "X");
  check_batch(Y, "Y");
  require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch, " and ", Y.batch);
  require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ", Y.channels);
  require(static_cast<index_t>(out.size()) == X.batch, "out has ", out.size(),
          " entries, expected batch = ", X.batch);
  check_disjoint({region(out, "out")}, {region(X, "X"), region(Y, "Y")});
}

/// The checks of a pairwise (cdist) call (pairwise, sharp_pairwise): the measure, X and Y with
/// the same channels, out (|X|, |Y|) apart from both.
template <class Cost, class Smooth, class T>
void check_pairwise_call(measure<Cost, Smooth> const& m, batch_view<T const> X, batch_view<T const> Y,
                         matrix_view<T> out) {
  check_measure<Cost, Smooth, T>(m);
  check_batch(X, "X");
  check_batch(Y, "Y");
  require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ", Y.channels);
  require((out.data || X.batch * Y.batch == 0) && out.rows == X.batch && out.cols == Y.batch,
          "out must be a non-null (", X.batch, ", ", Y.batch, "), got (", out.rows, ", ", out.cols, ")");
  check_disjoint({region(out, "out")}, {region(X, "X"), region(Y, "Y")});
}

/// The checks of a pairwise gradient call (pairwise_grads, sharp_pairwise_grads): the measure,
/// X and Y with the same channels, GX of X's shape, out and weights (when given) of (|X|, |Y|),
/// the weights finite, the outputs apart from the inputs and each other.
template <class Cost, class Smooth, class T>
void check_pairwise_grads_call(measure<Cost, Smooth> const& m, batch_view<T> gxs, batch_view<T const> X,
                               batch_view<T const> Y, matrix_view<T> out, matrix_view<T const> weights) {
  check_measure<Cost, Smooth, T>(m);
  check_batch(X, "X");
  check_batch(Y, "Y");
  require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ", Y.channels);
  check_pairwise_grads_shapes(gxs, X, Y, out, weights);
  check_pairwise_grads_inputs(gxs, X, Y, out, weights);
}

/// The checks of a paired training batch (values_and_grads, expected_penalties): X and Y paired,
/// out and upstream (when given) with one finite entry per pair, GX and GY of X's and Y's
/// shapes, the outputs apart from the inputs and each other (GX = GY allowed for Y = X).
template <class T>
void check_training_batch(batch_view<T const> X, batch_view<T const> Y, std::span<T> out,
                          batch_view<T> gxs, batch_view<T> gys, std::span<T const> upstream) {
  check_value_batch(X, Y, out);
  require(upstream.empty() || static_cast<index_t>(upstream.size()) == X.batch, "upstream has ",
          upstream.size(), " entries, expected batch = ", X.batch);
  check_same_shape(gxs, X, "GX", "X");
  check_same_shape(gys, Y, "GY", "Y");
  for (std::size_t b = 0; b < upstream.size(); ++b)
    require(std::isfinite(upstream[b]), "upstream[", b, "] is not finite: ", upstream[b]);
  std::string const overlap = gradients_overlap_error(
      region(X, "X"), region(Y, "Y"), region(gxs, "GX"), region(gys, "GY"), region(out, "out"),
      region(upstream, "upstream"));
  require(overlap.empty(), overlap);
  // one gradient buffer is for Y = X: the same memory, and the same series in it (X and Y over
  // one buffer with other lengths are other series, and GX = GY summed their gradients)
  if (gxs.data != nullptr && gxs.data == gys.data) {
    bool same = X.batch == Y.batch;
    for (index_t b = 0; same && b < X.batch; ++b) same = X.length(b) == Y.length(b);
    require(same, "GY overlaps GX (pass separate buffers: one buffer is for Y = X, with the same lengths)");
  }
}

/// Pair b's gradient rows of GX and GY, zeroed (padding included), viewed at the pair's lengths.
template <class T>
std::pair<series_view<T>, series_view<T>> zeroed_gradients(batch_view<T> gxs, batch_view<T> gys,
                                                           batch_view<T const> X,
                                                           batch_view<T const> Y, index_t b) {
  series_view<T> const gx{gxs.data + b * X.max_length * X.channels, X.max_length, X.channels};
  series_view<T> const gy{gys.data + b * Y.max_length * Y.channels, Y.max_length, Y.channels};
  zero(gx);
  zero(gy);
  return {{gx.data, X.length(b), X.channels}, {gy.data, Y.length(b), Y.channels}};
}

/// upstream[b], or 1 when no upstream is given.
template <class T>
T seed_of(std::span<T const> upstream, index_t b) {
  return upstream.empty() ? T(1) : upstream[static_cast<std::size_t>(b)];
}

template <class O>
inline constexpr bool is_matrix_view_v = false;
template <class U>
inline constexpr bool is_matrix_view_v<matrix_view<U>> = true;

/// The checks of every call that works on the alignment of one pair (a matrix, a path, a
/// penalty): the measure, not a divergence ("what: a divergence has no single <noun>"), the
/// pair, and one channel for independent-channel measures unless `per_channel` (a result that
/// is a sum over the channels' alignments).
template <class T, class Cost, class Smooth>
void check_single_alignment(measure<Cost, Smooth> const& m, series_view<T const> x,
                            series_view<T const> y, char const* what, char const* noun,
                            bool per_channel = false) {
  check_measure<Cost, Smooth, T>(m);
  require(!m.divergence, what, ": a divergence has no single ", noun);
  check_pair(x, y);
  require(per_channel || !m.independent_channels || x.channels == 1, what,
          ": independent channels have one alignment each; pass one channel, got ", x.channels);
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
  detail::check_gradient_call(xc, yc, gx, gy);
  detail::zero(gx);
  detail::zero(gy);
  host_detail::workspace<T> ws;
  return host_detail::value_and_grad(m, xc, yc, gx, gy, T(1), ws);
}

/// S(x, y) and the soft alignment matrix E (n, m): E(i, j) = dS / dR(i, j), the probability
/// that the alignment visits (i, j); for hard_min, the indicator of the optimal path. Where S is
/// +inf (every alignment's cost overflows) E is no distribution and no path (alignment_path
/// still gives a path, through the ties).
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> alignment_matrix(measure<Cost, Smooth> const& m, X x, Y y,
                             matrix_view<value_of<X>> e) {
  using T = value_of<X>;
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "alignment_matrix", "alignment matrix");
  detail::require(e.data != nullptr, "e is null");
  detail::require(e.rows == xc.length && e.cols == yc.length, "e must be (",
                  xc.length, ", ", yc.length, "), got (", e.rows, ", ", e.cols, ")");
  detail::check_disjoint({detail::region(e, "e")}, {detail::region(xc, "x"), detail::region(yc, "y")});
  host_detail::workspace<T> ws;
  return host_detail::alignment_matrix(m, xc, yc, e, ws);
}

/// L = sum_ij E(i, j) omega(i, j): the expected penalty of the soft alignment E
/// (alignment_matrix) under a per-cell penalty omega, with dL/dx written to gx and dL/dy to gy.
/// It is the temporal term of DILATE (omega(i, j) = (i - j)^2 / n^2 there) and any other loss on
/// where the alignment goes; for soft-DTW its gradient is the Hessian-vector product of S with
/// omega (spec/softdtw.md §3.9), pulled back to the series. omega: an (n, m) matrix_view or a
/// callable omega(i, j) returning a number, finite at every cell inside the band (the cells
/// outside have E = 0 and are not read). For hard_min, L is omega summed along the optimal path
/// and its gradient is 0 (E is piecewise constant). Independent channels (soft-MSM with several):
/// the sum over the channels of each one's L. value_out, when not null, receives S(x, y).
/// Host only, scalar; stores R and its tangent at the cells of the band (two values per cell) up
/// to 256 MiB, beyond that the row above every segment of ceil(sqrt(n)) rows of the longer series
/// (n; the problem transposed when y is longer, hard measures' ties mirrored there), recomputing
/// one segment at a time in the backward (one more forward: 16384 x 16384 in
/// double holds about 70 MB instead of 4.1 GB), and up to 32 MB the move weights of the table or
/// segment (three more values per cell). omega is read again where a segment is recomputed (it
/// must not change during the call). gx and gy follow value_and_grad's rules (overwritten; apart
/// from x, y and each other unless y = x); value_out apart from all of them and omega.
template <class Cost, class Smooth, series_like X, series_like Y, class Omega>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> expected_penalty(measure<Cost, Smooth> const& m, X x, Y y, Omega const& omega,
                             series_view<value_of<X>> gx, series_view<value_of<X>> gy,
                             value_of<X>* value_out = nullptr) {
  using T = value_of<X>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  static_assert(second_order_smoothing<Smooth, T>, "the smoothing has no weights_tangent");
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "expected_penalty", "alignment", true);
  detail::check_gradient_call(xc, yc, gx, gy);
  index_t const n = xc.length, k = yc.length;
  detail::memory_region omega_region{};  // a callable's memory is not ours to check
  if constexpr (detail::is_matrix_view_v<Omega>) {
    detail::require(omega.data != nullptr, "omega is null");
    detail::require(omega.rows == n && omega.cols == k, "omega must be (", n, ", ", k, "), got (",
                    omega.rows, ", ", omega.cols, ")");
    omega_region = detail::region(omega, "omega");
  } else {
    static_assert(std::is_invocable_v<Omega const&, index_t, index_t>,
                  "omega must be a matrix_view or callable as omega(i, j)");
  }
  // each output apart from omega (gx and gy may be one buffer for y = x: checked above)
  for (auto const& g : {detail::region(gx, "gx"), detail::region(gy, "gy")})
    detail::check_disjoint({g}, {omega_region});
  if (value_out)
    detail::check_disjoint({detail::region(static_cast<T const*>(value_out), 1, "value_out")},
                           {detail::region(xc, "x"), detail::region(yc, "y"), detail::region(gx, "gx"),
                            detail::region(gy, "gy"), omega_region});
  auto const read = [&](index_t i, index_t j) { return static_cast<T>(omega(i, j)); };
  detail::check_penalty(m, n, k, read);
  detail::zero(gx);
  detail::zero(gy);
  return host_detail::expected_penalty_of(m, xc, yc, read, gx, gy, T(1), value_out);
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

/// The hard alignment path [(0, 0), ..., (n-1, m-1)] of a hard_min measure, inside its band (where
/// the value is +inf, the path the ties diag > up > left give); its value to *value_out when
/// that is not null (apart from x and y).
template <class Cost, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
std::vector<std::array<index_t, 2>> alignment_path(measure<Cost, hard_min> const& m, X x, Y y,
                                                   value_of<X>* value_out = nullptr) {
  using T = value_of<X>;
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "alignment_path", "path");
  if (value_out)
    detail::check_disjoint({detail::region(static_cast<T const*>(value_out), 1, "value_out")},
                           {detail::region(xc, "x"), detail::region(yc, "y")});
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
  detail::check_value_batch(X, Y, out);
  std::vector<host_detail::workspace<T>> ws(
      static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  host_detail::batch_values<T>(
      m, X.batch, exec.threads, [&](index_t b) { return std::pair{X[b], Y[b]}; },
      [&](index_t b, T v) { out[static_cast<std::size_t>(b)] = v; }, ws);
}

/// values() plus the gradients: GX[b] = upstream[b] dM(X[b], Y[b]) / dX[b] (GY likewise);
/// padding samples beyond a series' length get exactly 0. upstream defaults to ones and must be
/// finite. The outputs must not overlap the inputs or each other, except GX = GY for Y = X (as
/// value_and_grad). Every pair gets the bits of value_and_grad on it, whatever the threads:
/// soft-DTW and soft-MSM pairs of one shape (soft-DTW's of alike shapes too, in a full band)
/// train in lock-step groups with its arithmetic (backend/host/lockstep_groups.hpp).
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
  detail::check_training_batch(X, Y, out, gxs, gys, upstream);
  std::vector<host_detail::workspace<T>> ws(
      static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  host_detail::batch_values_and_grads<T>(
      m, X.batch, exec.threads, [&](index_t b) { return std::pair{X[b], Y[b]}; },
      [&](index_t b) { return detail::zeroed_gradients(gxs, gys, X, Y, b); },
      [&](index_t b) { return detail::seed_of(upstream, b); },
      [&](index_t b, T v) { out[static_cast<std::size_t>(b)] = v; }, ws);
}

/// The batch form of expected_penalty: out[b] = L(X[b], Y[b]) = sum_ij E_b(i, j) omega(b, i, j),
/// GX[b] = upstream[b] dL / dX[b] (GY likewise), with the rules of values_and_grads (padding
/// gradients exactly 0, upstream finite, defaulting to ones). omega(b, i, j) is a callable read at
/// the cells inside pair b's band, where it must be finite. Host only, pairs in parallel, each
/// pair's tables as in expected_penalty.
template <class Cost, class Smooth, batch_like XB, batch_like YB, class Omega>
  requires std::same_as<value_of<XB>, value_of<YB>> &&
           std::is_invocable_v<Omega const&, index_t, index_t, index_t>
void expected_penalties(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                        Omega const& omega, std::span<value_of<XB>> out,
                        batch_view<value_of<XB>> gxs, batch_view<value_of<XB>> gys,
                        std::span<value_of<XB> const> upstream = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  static_assert(second_order_smoothing<Smooth, T>, "the smoothing has no weights_tangent");
  detail::check_measure<Cost, Smooth, T>(m);
  detail::require(!m.divergence, "expected_penalties: a divergence has no single alignment");
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_training_batch(X, Y, out, gxs, gys, upstream);
  for (index_t b = 0; b < X.batch; ++b)
    detail::check_penalty(m, X.length(b), Y.length(b), [&](index_t i, index_t j) {
      return static_cast<T>(omega(b, i, j));
    }, b);
  std::vector<host_detail::tangent_workspace<T>> ws(static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  parallel_for(X.batch, exec.threads, [&](index_t b, int w) {
    auto const [gx, gy] = detail::zeroed_gradients(gxs, gys, X, Y, b);
    auto const read = [&](index_t i, index_t j) { return static_cast<T>(omega(b, i, j)); };
    out[static_cast<std::size_t>(b)] = host_detail::expected_penalty_of(
        m, X[b], Y[b], read, gx, gy, detail::seed_of(upstream, b), static_cast<T*>(nullptr),
        &ws[static_cast<std::size_t>(w)]);
  });
}

/// The pairwise (cdist) form: out(a, b) = M(X[a], Y[b]); out is (|X|, |Y|).
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
              matrix_view<value_of<XB>> out) {
  using T = value_of<XB>;
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_pairwise_call(m, X, Y, out);
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

namespace detail {

/// How many blocks of Y each row of pairwise_grads is split into: one where X alone gives
/// enough tasks, else enough for about pairwise_grads_row_tasks in all (a gradient of one series
/// against many ran on one thread), their partial sums within pairwise_grads_block_bytes (64
/// blocks of a 10^6-sample row would take 512 MB), each of block_pairs pairs at least (a
/// lock-step group's: pairwise_grads_block_pairs). From the shapes alone, so the bits do not
/// depend on the thread count. row_bytes: one padded gradient row of X.
inline constexpr index_t pairwise_grads_row_tasks = 64;
inline constexpr std::size_t pairwise_grads_block_bytes = std::size_t(64) << 20;
inline index_t pairwise_grads_blocks(index_t x_batch, index_t y_batch, std::size_t row_bytes,
                                     index_t block_pairs = 1) noexcept {
  if (x_batch <= 0 || x_batch >= pairwise_grads_row_tasks || y_batch <= 1) return 1;
  auto const rows_fit = static_cast<index_t>(pairwise_grads_block_bytes / std::max<std::size_t>(row_bytes, 1));
  index_t const by_memory = std::max<index_t>(1, rows_fit / x_batch);
  index_t const by_groups = std::max<index_t>(1, y_batch / std::max<index_t>(block_pairs, 1));
  return std::min({y_batch, (pairwise_grads_row_tasks + x_batch - 1) / x_batch, by_memory, by_groups});
}
/// The measure pairwise_grads_rows runs its cross and self terms with: one channel of an
/// independent-channels measure of several, and no divergence (combined afterwards).
template <class Cost, class Smooth>
measure<Cost, Smooth> pairwise_grads_pair_measure(measure<Cost, Smooth> const& m, index_t channels) {
  auto one = m.independent_channels && channels > 1 ? m.single_channel() : m;
  one.divergence = false;
  return one;
}
/// The pairs of a lock-step training group where pairwise_grads' longest pairs would train in
/// one (so that blocks of Y hold whole groups: 26 rows against 67 series of 24 samples split each
/// row into 3 blocks of 23 pairs, fewer than a double group's 32, and no group formed), else 1.
template <class T, class Cost, class Smooth>
index_t pairwise_grads_block_pairs(measure<Cost, Smooth> const& m, batch_view<T const> X, batch_view<T const> Y) {
  if constexpr (host_detail::lockstep_trains<T, Cost, Smooth>) {
    bool const split = m.independent_channels && X.channels > 1;
    if (host_detail::lockstep_shape_fits<T>(pairwise_grads_pair_measure(m, X.channels), X.max_length, Y.max_length,
                                            split ? 1 : X.channels, true))
      return host_detail::lockstep_pairs<T>;
  }
  return 1;
}
/// The most tasks pairwise_grads_rows runs at once (its callers' worker count).
template <class T>
index_t pairwise_grads_tasks(batch_view<T const> X, index_t y_batch, index_t block_pairs) noexcept {
  auto const row_bytes = static_cast<std::size_t>(X.max_length * X.channels) * sizeof(T);
  return std::max(X.batch * pairwise_grads_blocks(X.batch, y_batch, row_bytes, block_pairs), y_batch);
}

/// The body of pairwise_grads and sharp_pairwise_grads, their arguments checked, for a measure
/// `one` with a single alignment and no divergence (the cross and self terms of m):
/// - jobs(one, count, pair_at, grads_at, seed_at, store, worker) stores S(x_k, y_k) and puts
///   seed_k dS/dx_k and seed_k dS/dy_k into grads_at(k)'s zeroed views, for k < count, each
///   pair with value_and_grad's bits (pairwise_grads: batch_values_and_grads on one thread,
///   whose lock-step groups train alike pairs together);
/// - pass(one, x, y, gx, gy, seed, worker) adds seed dS/dx to gx and seed dS/dy to gy (one
///   buffer for y = x: both partials) and returns S(x, y): the self terms.
/// GX[a] = sum_b w(a, b) dM(X[a], Y[b]) / dX[a] and out(a, b) = M(X[a], Y[b]), combined as
/// value_and_grad combines them (per channel for independent channels: the same values). A row's
/// pairs add their gradients to it in the order of b, each computed on its own from zero (but a
/// pair of a million samples or more, which pass adds directly: cross_terms), so a row's bits do
/// not depend on which pairs trained together. Each row is one task (or a few rows, where Y holds
/// fewer pairs than block_pairs), or, for few rows (pairwise_grads_blocks), blocks of
/// consecutive b, each summed in order into its own buffer, the buffers then in order:
/// deterministic for any thread count. A divergence's self terms are computed once per series, not once per pair: S(y, y) for
/// every series of Y when out is given, and S(x, x) with its gradient once per series of X,
/// seeded with -sum_b w(a, b) / 2 (where that leaves GX[a] not finite, as weights near the
/// largest finite value can, the row again with S(x, x) per pair, as value_and_grad interleaves
/// them). `workers` (the worker ids are below it): resolve_threads of pairwise_grads_tasks;
/// block_pairs: pairwise_grads_blocks'.
template <class Cost, class Smooth, class T>
using pairwise_grads_jobs =
    function_ref<void(measure<Cost, Smooth> const&, index_t, host_detail::pair_source<T>, host_detail::gradient_source<T>,
                      host_detail::seed_source<T>, host_detail::value_sink<T>, int)>;
template <class Cost, class Smooth, class T>
using pairwise_grads_pass = function_ref<T(measure<Cost, Smooth> const&, series_view<T const>, series_view<T const>,
                                           series_view<T>, series_view<T>, T, int)>;

/// The scratch of one worker's cross terms (pairwise_grads_rows): a chunk's gradients and values,
/// and for independent channels the row's channels, copied.
template <class T>
struct pairwise_grads_scratch {
  std::vector<T> grads, values, row;
  std::vector<index_t> offsets, row_at;
};
/// The most scratch a chunk of cross terms takes, unless one pair alone needs more.
inline constexpr std::size_t pairwise_grads_chunk_bytes = std::size_t(8) << 20;

template <class Cost, class Smooth, class T>
void pairwise_grads_rows(host_backend exec, measure<Cost, Smooth> const& m, batch_view<T const> X,
                         batch_view<T const> Y, batch_view<T> gxs, matrix_view<T> out,
                         matrix_view<T const> weights, int workers, index_t block_pairs,
                         std::type_identity_t<pairwise_grads_jobs<Cost, Smooth, T>> jobs,
                         std::type_identity_t<pairwise_grads_pass<Cost, Smooth, T>> pass) {
  bool const split = m.independent_channels && X.channels > 1;
  index_t const terms = split ? X.channels : 1, width = split ? 1 : X.channels;
  auto const one = pairwise_grads_pair_measure(m, X.channels);
  std::vector<std::vector<T>> buffers(static_cast<std::size_t>(workers));
  std::vector<std::vector<T>> gy_scratch(static_cast<std::size_t>(workers));
  std::vector<pairwise_grads_scratch<T>> scratch(static_cast<std::size_t>(workers));
  // f(x_c, y_c, gx_c, gy_c, c) summed over the channels c of an independent-channels measure
  // (sum_over_channels: each channel copied, its gradients added back), else f on the series
  auto const channels = [&](series_view<T const> x, series_view<T const> y, series_view<T> gx,
                            series_view<T> gy, int w, auto&& f) -> T {
    if (!split) return f(x, y, gx, gy, index_t(0));
    index_t c = 0;
    return host_detail::sum_over_channels(x, y, gx, gy, buffers[static_cast<std::size_t>(w)],
                                          [&](auto xc, auto yc, auto gxc, auto gyc) { return f(xc, yc, gxc, gyc, c++); });
  };
  // S(y, y) of every series of Y, which only out needs (a pass with seed 0: value_and_grad's bits)
  bool const self_values = m.divergence && out.data && X.batch > 0;
  std::vector<T> self_y(self_values ? static_cast<std::size_t>(Y.batch * terms) : 0);
  if (self_values) {
    parallel_for(Y.batch, exec.threads, [&](index_t b, int w) {
      std::vector<T> g(static_cast<std::size_t>(Y.length(b) * Y.channels));  // not used
      series_view<T> const gv{g.data(), Y.length(b), Y.channels};
      channels(Y[b], Y[b], gv, gv, w, [&](auto y, auto y2, auto gy, auto gy2, index_t c) {
        self_y[static_cast<std::size_t>(b * terms + c)] = pass(one, y, y2, gy, gy2, T(0), w);
        return T(0);
      });
    });
  }
  auto const seed_of = [&](index_t a, index_t b) { return weights.data ? weights(a, b) : T(1); };
  std::vector<T> self_x(static_cast<std::size_t>(X.batch * terms));
  // S(x, x) of row a with its gradient added to gx, seeded with the row's weights halved and summed
  auto const self_term = [&](index_t a, series_view<T> gx, int w) {
    if (!m.divergence || Y.batch == 0) return;
    T half = T(0);
    for (index_t b = 0; b < Y.batch; ++b) half += seed_of(a, b) / T(2);
    channels(X[a], X[a], gx, gx, w, [&](auto x, auto x2, auto g, auto g2, index_t c) {
      self_x[static_cast<std::size_t>(a * terms + c)] = pass(one, x, x2, g, g2, -half, w);
      return T(0);
    });
  };
  // channel c's term of M(X[a], Y[b]) from its S(x, y); M is their sum in channel order (as
  // sum_over_channels sums them) or the one term
  auto const term = [&](index_t a, index_t b, index_t c, T sxy) {
    if (!m.divergence) return sxy;
    return divergence_of(sxy, self_x[static_cast<std::size_t>(a * terms + c)],
                         self_values ? self_y[static_cast<std::size_t>(b * terms + c)] : T(0));
  };
  auto const combined = [&](index_t a, index_t b, T const* s) {
    if (!split) return term(a, b, 0, s[0]);
    T sum = T(0);
    for (index_t c = 0; c < terms; ++c) sum += term(a, b, c, s[c]);
    return sum;
  };
  // pair (a, b) added to gx directly (pass), its y gradient into the worker's scratch; per_pair:
  // with its own S(x, x) seeded -w(a, b) / 2, as value_and_grad seeds it
  auto const direct = [&](index_t a, index_t b, series_view<T> gx, bool per_pair, int w) {
    std::vector<T>& gy_buffer = gy_scratch[static_cast<std::size_t>(w)];
    gy_buffer.assign(static_cast<std::size_t>(Y.length(b) * Y.channels), T(0));
    series_view<T> const gy{gy_buffer.data(), Y.length(b), Y.channels};
    T const v = channels(X[a], Y[b], gx, gy, w, [&](auto x, auto y, auto gxc, auto gyc, index_t c) {
      T const sxy = pass(one, x, y, gxc, gyc, seed_of(a, b), w);
      if (per_pair) self_x[static_cast<std::size_t>(a * terms + c)] = pass(one, x, x, gxc, gxc, -seed_of(a, b) / T(2), w);
      return term(a, b, c, sxy);
    });
    if (out.data) out(a, b) = v;
  };
  // Y channel by channel (split): channel c of Y[b] at ((b terms + c) Y.max_length)
  std::vector<T> y_channels(split ? static_cast<std::size_t>(Y.batch * terms * Y.max_length) : 0);
  if (split)
    for (index_t b = 0; b < Y.batch; ++b)
      for (index_t c = 0; c < terms; ++c)
        host_detail::copy_channel(Y[b], c, y_channels.data() + (b * terms + c) * Y.max_length);
  // the cross terms (a, b) of rows [a0, a1) and b in [b0, b1), each added to its row's gx_of(a),
  // a chunk of pairs at a time: jobs puts each pair's gradients (per channel: each channel's)
  // into scratch, which is then added to its row in the order of b. Rows share the chunks where
  // Y holds fewer pairs than a lock-step group. A pair whose gradients alone take more than the
  // chunk's scratch (about a million samples: no lock-step group takes it) adds its own to gx
  // directly, so that the scratch never holds a copy of such rows per worker.
  auto const cross_terms = [&](index_t a0, index_t a1, index_t b0, index_t b1, auto&& gx_of, int w) {
    pairwise_grads_scratch<T>& s = scratch[static_cast<std::size_t>(w)];
    index_t const span = b1 - b0, total = (a1 - a0) * span;
    auto const a_of = [&](index_t p) { return a0 + p / span; };
    auto const b_of = [&](index_t p) { return b0 + p % span; };
    if (split) {  // the rows' channels: row a's channel c at row_at[a - a0] + c length(a)
      s.row_at.resize(static_cast<std::size_t>(a1 - a0 + 1));
      s.row_at[0] = 0;
      for (index_t a = a0; a < a1; ++a)
        s.row_at[static_cast<std::size_t>(a - a0 + 1)] = s.row_at[static_cast<std::size_t>(a - a0)] + terms * X.length(a);
      s.row.resize(static_cast<std::size_t>(s.row_at.back()));
      for (index_t a = a0; a < a1; ++a)
        for (index_t c = 0; c < terms; ++c)
          host_detail::copy_channel(X[a], c, s.row.data() + s.row_at[static_cast<std::size_t>(a - a0)] + c * X.length(a));
    }
    auto const pair_bytes = [&](index_t p) {
      return static_cast<std::size_t>((X.length(a_of(p)) + Y.length(b_of(p))) * X.channels) * sizeof(T);
    };
    for (index_t first = 0; first < total;) {
      if (pair_bytes(first) > pairwise_grads_chunk_bytes) {
        index_t const a = a_of(first);
        direct(a, b_of(first), gx_of(a), false, w);
        ++first;
        continue;
      }
      index_t last = first;  // the chunk of pairs [first, last)
      std::size_t bytes = 0;
      do bytes += pair_bytes(last++);
      while (last < total && last - first < host_detail::batch_plan_pairs &&
             bytes + pair_bytes(last) <= pairwise_grads_chunk_bytes);
      index_t const count = (last - first) * terms;  // jobs: (pair, channel)
      auto const p_of = [&](index_t k) { return first + k / terms; };
      s.offsets.resize(static_cast<std::size_t>(count + 1));
      s.offsets[0] = 0;
      for (index_t k = 0; k < count; ++k)
        s.offsets[static_cast<std::size_t>(k + 1)] =
            s.offsets[static_cast<std::size_t>(k)] + (X.length(a_of(p_of(k))) + Y.length(b_of(p_of(k)))) * width;
      s.grads.assign(static_cast<std::size_t>(s.offsets.back()), T(0));
      s.values.resize(static_cast<std::size_t>(count));
      jobs(
          one, count,
          [&](index_t k) {
            index_t const a = a_of(p_of(k)), b = b_of(p_of(k)), c = k % terms, n = X.length(a);
            if (!split) return std::pair{X[a], Y[b]};
            T const* const row = s.row.data() + s.row_at[static_cast<std::size_t>(a - a0)];
            return std::pair{series_view<T const>{row + c * n, n, 1},
                             series_view<T const>{y_channels.data() + (b * terms + c) * Y.max_length, Y.length(b), 1}};
          },
          [&](index_t k) {
            index_t const n = X.length(a_of(p_of(k)));
            T* const g = s.grads.data() + s.offsets[static_cast<std::size_t>(k)];
            return std::pair{series_view<T>{g, n, width}, series_view<T>{g + n * width, Y.length(b_of(p_of(k))), width}};
          },
          [&](index_t k) { return seed_of(a_of(p_of(k)), b_of(p_of(k))); },
          [&](index_t k, T v) { s.values[static_cast<std::size_t>(k)] = v; }, w);
      for (index_t p = first; p < last; ++p) {
        index_t const a = a_of(p), b = b_of(p), n = X.length(a), k0 = (p - first) * terms;
        series_view<T> const gx = gx_of(a);
        for (index_t c = 0; c < terms; ++c) {
          T const* const g = s.grads.data() + s.offsets[static_cast<std::size_t>(k0 + c)];
          if (split)
            for (index_t i = 0; i < n; ++i) gx(i, c) += g[i];
          else
            for (index_t e = 0; e < n * width; ++e) gx.data[e] += g[e];
        }
        if (out.data) out(a, b) = combined(a, b, s.values.data() + k0);
      }
      first = last;
    }
  };
  auto const padded = [&](index_t a) {
    return series_view<T>{gxs.data + a * X.max_length * X.channels, X.max_length, X.channels};
  };
  // weights near the largest finite value can overflow the summed seed or the cross terms'
  // sum, which the pairs' interleaving cancels: then the row again, pair by pair, each with its
  // own S(x, x)
  auto const redo_if_overflowed = [&](index_t a, int w) {
    series_view<T> const gpad = padded(a);
    series_view<T> const gx{gpad.data, X.length(a), X.channels};
    auto const finite = [](T g) { return std::isfinite(g); };
    if (!m.divergence || std::all_of(gx.data, gx.data + gx.length * gx.channels, finite)) return;
    zero(gpad);
    for (index_t b = 0; b < Y.batch; ++b) direct(a, b, gx, true, w);
  };
  // block k of row a sums its pairs into partial (a, k), block 0 after the self term (which
  // every block's values need first); each row then sums its blocks in order. One block: the
  // row's own GX, nothing to sum
  index_t const row = X.max_length * X.channels;
  index_t const blocks =
      pairwise_grads_blocks(X.batch, Y.batch, static_cast<std::size_t>(row) * sizeof(T), block_pairs);
  index_t const per_block = (Y.batch + blocks - 1) / blocks;
  std::vector<T> partial(blocks > 1 ? static_cast<std::size_t>(X.batch * blocks * row) : 0, T(0));
  auto const partial_of = [&](index_t a, index_t k) {
    T* const data = blocks > 1 ? partial.data() + (a * blocks + k) * row : padded(a).data;
    return series_view<T>{data, X.length(a), X.channels};
  };
  parallel_for(X.batch, exec.threads, [&](index_t a, int w) {
    if (blocks == 1) zero(padded(a));
    self_term(a, partial_of(a, 0), w);
  });
  // rows per task: one, or where a row's pairs are fewer than a lock-step group's, enough rows
  // for one (as the blocks, from the shapes alone)
  index_t const rows_per_task =
      blocks == 1 && Y.batch > 0 && Y.batch < block_pairs ? (block_pairs + Y.batch - 1) / Y.batch : 1;
  index_t const row_tasks = (X.batch + rows_per_task - 1) / rows_per_task;
  parallel_for(row_tasks * blocks, exec.threads, [&](index_t task, int w) {
    index_t const r = task / blocks, k = task % blocks;
    index_t const a0 = r * rows_per_task, a1 = std::min(X.batch, a0 + rows_per_task);
    index_t const b0 = std::min(Y.batch, k * per_block), b1 = std::min(Y.batch, b0 + per_block);
    cross_terms(a0, a1, b0, b1, [&](index_t a) { return partial_of(a, k); }, w);
  });
  parallel_for(X.batch, exec.threads, [&](index_t a, int w) {
    if (blocks > 1) {
      series_view<T> const gpad = padded(a);
      zero(gpad);
      index_t const size = X.length(a) * X.channels;
      for (index_t k = 0; k < blocks; ++k) {
        T const* const p = partial_of(a, k).data;
        for (index_t e = 0; e < size; ++e) gpad.data[e] += p[e];
      }
    }
    redo_if_overflowed(a, w);
  });
}

}  // namespace detail

/// GX[a] = sum_b weights(a, b) dM(X[a], Y[b]) / dX[a] (weights default to ones), and, when
/// out is given, out(a, b) = M(X[a], Y[b]) (value_and_grad's values). The rows of X run in
/// parallel, and for fewer than 64 rows blocks of Y too; deterministic for any thread count.
/// Alike soft-DTW and soft-MSM pairs train in lock-step groups; each pair's gradient is
/// computed on its own and added to its row in the order of b. A divergence's self terms S(x, x)
/// and S(y, y) are computed once per series, not once per pair.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise_grads(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                    batch_view<value_of<XB>> gxs, matrix_view<value_of<XB>> out = {},
                    matrix_view<value_of<XB> const> weights = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_pairwise_grads_call(m, gxs, X, Y, out, weights);
  index_t const block_pairs = detail::pairwise_grads_block_pairs(m, X, Y);
  int const workers = resolve_threads(exec.threads, detail::pairwise_grads_tasks(X, Y.batch, block_pairs));
  // one workspace per worker (batch_values_and_grads on one thread takes a vector of one)
  std::vector<std::vector<host_detail::workspace<T>>> ws(static_cast<std::size_t>(workers));
  for (auto& one : ws) one.resize(1);
  using namespace host_detail;
  detail::pairwise_grads_rows(
      exec, m, X, Y, gxs, out, weights, workers, block_pairs,
      [&](auto const& one, index_t count, pair_source<T> pair_at, gradient_source<T> grads_at,
          seed_source<T> seed_at, value_sink<T> store, int w) {
        batch_values_and_grads<T>(one, count, 1, pair_at, grads_at, seed_at, store, ws[static_cast<std::size_t>(w)]);
      },
      [&](auto const& one, series_view<T const> x, series_view<T const> y, series_view<T> gx, series_view<T> gy,
          T seed, int w) { return plain_value_and_grad(one, x, y, gx, gy, seed, ws[static_cast<std::size_t>(w)][0]); });
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

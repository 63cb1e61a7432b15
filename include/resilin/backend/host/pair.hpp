#pragma once
// One pair on the host: value, value and gradient, alignment matrix, hard path. Inputs are
// already validated; every buffer comes from the caller's workspace, reused between pairs.
#include <algorithm>
#include <array>
#include <vector>
#include <resilin/backend/host/exp_domain.hpp>
#include <resilin/backend/host/exp_domain_grad.hpp>
#include <resilin/backend/host/lane_cost_cdtw.hpp>
#include <resilin/backend/host/lane_cost_msm.hpp>
#include <resilin/backend/host/lane_cost_soft_msm.hpp>
#include <resilin/backend/host/lane_cost_warp_penalty.hpp>
#include <resilin/backend/host/lockstep.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/backend/host/single_path.hpp>
#include <resilin/backend/host/strip.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Up to this size a training forward keeps its whole table for the backward (its fresh pages
/// cost less than recomputing, and a batch reuses them); beyond, the backward recomputes.
inline constexpr std::size_t kept_table_bytes = std::size_t(32) << 20;

/// Beyond this size a log-domain training forward keeps only the slot of the row above every
/// strip (row_slices.hpp: at most 1/H of R) and the backward recomputes each strip from it: one
/// more forward, for long pairs that would not fit otherwise.
inline constexpr std::size_t checkpoint_table_bytes = std::size_t(256) << 20;

/// Beyond this size of those slots (about 16384 x 8192 without a band in double, AVX2) it keeps only
/// every k-th of them, k about sqrt(strips), and the backward recomputes the slots of k strips at
/// a time first: one more forward, and about 2 sqrt(strips) slots held (row_checkpoint_interval).
inline constexpr std::size_t checkpoint_rows_bytes = std::size_t(64) << 20;

/// The checkpoint interval of a training forward that keeps the band's part of the rows
/// between its strips (strip_row_slices), `arrays` values of T per entry: 1 (the slot above
/// every strip, about 1/H of the table) while they take at most checkpoint_rows_bytes, else
/// about sqrt(strips) (two levels: about 2 sqrt(strips) slots held).
template <class T>
index_t row_checkpoint_interval(band_geometry const& band, index_t n, int arrays) {
  strip_row_slices<T> slices;
  slices.plan(band, n);
  std::size_t const bytes = static_cast<std::size_t>(slices.total() * arrays) * sizeof(T);
  return bytes <= checkpoint_rows_bytes ? 1 : ceil_sqrt(slices.slots());
}

/// The checkpoint interval of a log-domain forward that keeps R alone for an n-row problem
/// whose R takes r_bytes: 0 (R whole) up to checkpoint_table_bytes, else
/// row_checkpoint_interval's.
template <class T>
index_t log_domain_checkpoint(band_geometry const& band, index_t n, std::size_t r_bytes) {
  return r_bytes <= checkpoint_table_bytes ? 0 : row_checkpoint_interval<T>(band, n, 1);
}

/// Whether a table of `packs` SIMD packs of T is kept whole (at most kept_table_bytes).
template <class T>
constexpr bool kept_whole(std::size_t packs) noexcept {
  return packs * sizeof(simd::pack<T>) <= kept_table_bytes;
}

template <class T>
struct workspace {
  std::vector<T> rowbuf, g_up, g_diag;
  exp_rows<T> exp;  // the exponential-domain forward's rows (exp_domain.hpp)
  std::vector<T> channel;  // independent channels: one channel of x, y, gx, gy, contiguous
  std::vector<T> self_values;  // an independent-channel divergence's per-channel S(x_c, x_c), S(y_c, y_c)
  strip_table<T> table;
  table_buffer<simd::pack<T>> strip_cells;  // one strip of the exponential-domain backward
  lockstep_workspace<T> lockstep;             // groups of short pairs (lockstep.hpp)
  single_path_workspace<T> path;              // bands that hold one path (single_path.hpp)
};

/// Copies channel c of s to out (s.length values) and views it as a one-channel series.
template <class T>
series_view<T const> copy_channel(series_view<T const> s, index_t c, T* out) {
  for (index_t i = 0; i < s.length; ++i) out[i] = s(i, c);
  return {out, s.length, 1};
}

template <class T, class Cost, class Smooth>
pair_problem<T, Cost, Smooth> make_problem(measure<Cost, Smooth> const& m, series_view<T const> x,
                                           series_view<T const> y) {
  return {m.cost, m.smooth, x, y,
          m.band.geometry(x.length, y.length)};
}

/// Soft-DTW with a vector point distance (not other costs that name a distance): the problems of
/// the exponential domain, whose costs are symmetric in x and y.
template <class T, class Cost, class Smooth>
inline constexpr bool soft_dtw_problem = false;
template <class T, class D>
inline constexpr bool soft_dtw_problem<T, dtw_cost<D>, soft_min<T>> = vector_distance<D>;

/// Where the band holds one path (and the smoothing is the soft-min or the min), S(x, y) from the
/// walk of single_path.hpp to `out`, with grad its gradient added to gx and gy, and true; every
/// value of such a pair comes from here (its costs may round differently from the strips' lanes).
template <class T, class Cost, class Smooth>
bool walked_single_path(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                        bool grad, series_view<T> gx, series_view<T> gy, T seed, workspace<T>& ws, T& out) {
  if constexpr (walks_single_path<Smooth>) {
    band_geometry const band = m.band.geometry(x.length, y.length);
    if (!band.single_path()) return false;
    out = single_path_walk(m.cost, band, x, y, grad, gx, gy, seed, ws.path);
    return true;
  }
  return false;
}

/// S(x, y) alone, in O(min(n, m)) memory: the rolling buffer runs along the shorter series.
template <class T, class Cost, class Smooth>
T plain_value(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
              workspace<T>& ws) {
  if (T walked; walked_single_path(m, x, y, false, series_view<T>{}, series_view<T>{}, T(0), ws, walked)) return walked;
  if constexpr (soft_dtw_problem<T, Cost, Smooth>) {  // the exponential domain where it is exact
    using D = typename Cost::distance_type;
    if (exp_domain_applies<T, D>(x, y, m.smooth.gamma, m.band.geometry(x.length, y.length))) {
      // the rolling rows along the shorter series, as the lock-step groups orient pairs
      auto const o = oriented_pair<T>::of(x, y);
      auto const p = make_problem(m, o.x, o.y);
      dtw_lane_cost<T, D> lanes;
      T const v = forward_exp_domain(p, lanes, ws.exp);
      if (exp_domain_accurate(v, m.smooth.gamma, x.length, y.length)) return v;
      // else the log domain below, whose error scales with |S|
    }
  }
  if (y.length > x.length) {
    auto const mt = transposed(m);
    lane_cost<T, transposed_cost<Cost>> lanes;
    return forward(make_problem(mt, y, x), lanes, ws.rowbuf, static_cast<strip_table<T>*>(nullptr));
  }
  lane_cost<T, Cost> lanes;
  return forward(make_problem(m, x, y), lanes, ws.rowbuf, static_cast<strip_table<T>*>(nullptr));
}

/// An independent-channels measure's self-similarity of each channel of s, S(s_c, s_c), to
/// out[c] (the divergence's terms; m.divergence is ignored).
template <class T, class Cost, class Smooth>
void channel_self_values(measure<Cost, Smooth> const& m, series_view<T const> s, T* out,
                         workspace<T>& ws) {
  auto one = m.single_channel();
  one.divergence = false;
  ws.channel.resize(static_cast<std::size_t>(s.length));
  for (index_t c = 0; c < s.channels; ++c) {
    auto const sc = copy_channel(s, c, ws.channel.data());
    out[c] = plain_value(one, sc, sc, ws);
  }
}

/// The value of an independent-channels measure (several channels): the sum over channels of
/// S(x_c, y_c), or of the divergence S(x_c, y_c) - S(x_c, x_c)/2 - S(y_c, y_c)/2 when
/// m.divergence, with the self-similarities from sxx[c] and syy[c] (channel_self_values), so that
/// a batch computes them once per series and gets the bits of value().
template <class T, class Cost, class Smooth>
T independent_channels_value(measure<Cost, Smooth> const& m, series_view<T const> x,
                             series_view<T const> y, T const* sxx, T const* syy,
                             workspace<T>& ws) {
  auto const one = m.single_channel();
  ws.channel.resize(static_cast<std::size_t>(x.length + y.length));
  T sum = T(0);
  for (index_t c = 0; c < x.channels; ++c) {
    T const sxy = plain_value(one, copy_channel(x, c, ws.channel.data()),
                              copy_channel(y, c, ws.channel.data() + x.length), ws);
    sum += m.divergence ? divergence_of(sxy, sxx[c], syy[c]) : sxy;
  }
  return sum;
}

/// The measure's value: S(x, y), or the divergence when m.divergence.
template <class T, class Cost, class Smooth>
T value(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
        workspace<T>& ws) {
  if (m.independent_channels && x.channels > 1) {  // the sum of per-channel measures
    std::vector<T>& self = ws.self_values;
    if (m.divergence) {
      self.resize(static_cast<std::size_t>(2 * x.channels));
      channel_self_values(m, x, self.data(), ws);
      channel_self_values(m, y, self.data() + x.channels, ws);
    }
    return independent_channels_value(m, x, y, self.data(), self.data() + x.channels, ws);
  }
  T const sxy = plain_value(m, x, y, ws);
  if (!m.divergence) return sxy;
  return divergence_of(sxy, plain_value(m, x, x, ws), plain_value(m, y, y, ws));
}

/// hard_min with the ties of the transposed problem, where the up and left moves trade places:
/// diag > left > up there picks the moves that hard_min's diag > up > left picks in x's
/// orientation (value_and_grad's and alignment_path's path). The same minimum. RESILIN_HD as
/// the cell functions that call it (nvcc warned where a CUDA program takes a host path).
struct hard_min_transposed_ties {
  void validate() const noexcept {}
  template <class V>
  RESILIN_HD V combine(step3<V> v) const noexcept { return hard_min{}.combine(v); }
  template <class V>
  RESILIN_HD step3<V> weights(step3<V> v) const noexcept {
    step3<V> const w = hard_min{}.weights(step3<V>{v.diag, v.left, v.up});
    return {w.diag, w.left, w.up};
  }
  template <class V>
  RESILIN_HD step3<V> weights_tangent(step3<V> const&, step3<V> const&) const noexcept { return {V(0), V(0), V(0)}; }
  template <class V>
  RESILIN_HD step3<V> weights_tangent_along_costs(step3<V> const&, step3<V> const&, step3<V> const&) const noexcept {
    return {V(0), V(0), V(0)};
  }
  template <class V>
  RESILIN_HD value_weights_and_entropy<V> combine_weights_and_entropy(step3<V> v) const noexcept {
    return {combine(v), weights(v), V(0)};
  }
};

/// The transposed problem with the same ties: transposed(m), hard_min's ties mirrored (the
/// training and second-order passes that run y's rows along x's).
template <class Cost, class Smooth>
auto tie_preserving_transposed(measure<Cost, Smooth> const& m) {
  if constexpr (std::is_same_v<Smooth, hard_min>)
    return measure<transposed_cost<Cost>, hard_min_transposed_ties>{{m.cost}, {}, m.band, false, false};
  else
    return transposed(m);
}

/// plain_value_and_grad with the strips across x as given (rows along y).
template <class T, class Cost, class Smooth>
T oriented_value_and_grad(measure<Cost, Smooth> const& m, series_view<T const> x,
                          series_view<T const> y, series_view<T> gx, series_view<T> gy, T seed,
                          workspace<T>& ws) {
  auto const p = make_problem(m, x, y);
  if constexpr (soft_dtw_problem<T, Cost, Smooth>) {  // the exponential domain where it is exact
    using D = typename Cost::distance_type;
    if (exp_domain_applies<T, D>(x, y, m.smooth.gamma, p.band)) {
      dtw_lane_cost<T, D> lanes;
      // the table whole up to kept_table_bytes; beyond, each strip recomputed in the backward
      // from the row above it, and beyond checkpoint_rows_bytes of rows, two levels
      auto const packs = static_cast<std::size_t>(exp_table_packs<T>(p.band, x.length));
      bool const whole = kept_whole<T>(packs);
      index_t const every = whole ? 1 : row_checkpoint_interval<T>(p.band, x.length, 2);
      T const v = forward_exp_domain(p, lanes, ws.exp, every, whole ? ws.strip_cells.reserve(packs) : nullptr);
      // unreachable: the log domain gives zero weights; inaccurate: its error scales with |S|
      if (v < math::infinity<T>() && exp_domain_accurate(v, m.smooth.gamma, x.length, y.length)) {
        backward_exp_domain(p, ws.exp, ws.strip_cells, whole, seed, lanes, ws.g_up, ws.g_diag, gx, gy);
        return v;
      }
    }
  }
  lane_cost<T, Cost> lanes;
  if constexpr (requires { lanes.sums_self; })  // S(x, x), both gradients into one buffer
    lanes.sums_self = x.data == y.data && x.length == y.length && gx.data != nullptr && gx.data == gy.data;
  auto const r_packs = static_cast<std::size_t>(strip_vectors<T> * strip_steps<T>(p.band, x.length));
  index_t side = 0;  // lanes that cache partials: keep every cell's backward data where it fits
  if constexpr (caches_partials<lane_cost<T, Cost>>) {
    index_t const per_vector = 3 + lane_cost<T, Cost>::gradient_term_packs(x.channels);
    if (kept_whole<T>(static_cast<std::size_t>(per_vector) * r_packs)) side = per_vector;
  }
  // R itself (one pack per vector and step), or checkpoints (log_domain_checkpoint)
  index_t const every = side == 0 ? log_domain_checkpoint<T>(p.band, x.length, r_packs * sizeof(simd::pack<T>)) : 0;
  T const v = forward(p, lanes, ws.rowbuf, &ws.table, side, every);
  backward(p, ws.table, seed, lanes, ws.g_up, ws.g_diag, nullptr, gx, gy);
  return v;
}

/// Adds seed * dS(x,y)/dx to gx and seed * dS(x,y)/dy to gy (gx and gy may alias when x and y
/// are the same series: both partials then land in one buffer). Returns S(x, y). The strips cut
/// the longer series, as plain_value's rows run along the shorter: with x the shorter, one strip
/// spanned all of y, and the checkpointed backward recomputed that strip whole (4 x 4e6 soft-DTW
/// kept 1026 MB where R is 128 MB, against 0.31 MB the other way round). The transposed problem
/// has R's bits (the soft-min is symmetric in its candidates and the costs are exact transposes)
/// and hard_min's ties mirrored, so values and the moves taken stay those of x's orientation.
template <class T, class Cost, class Smooth>
T plain_value_and_grad(measure<Cost, Smooth> const& m, series_view<T const> x,
                       series_view<T const> y, series_view<T> gx, series_view<T> gy, T seed,
                       workspace<T>& ws) {
  if (T walked; walked_single_path(m, x, y, true, gx, gy, seed, ws, walked)) return walked;
  if (y.length <= x.length) return oriented_value_and_grad(m, x, y, gx, gy, seed, ws);
  // soft-DTW's costs are symmetric in x and y: the pair swapped keeps its exponential domain
  if constexpr (soft_dtw_problem<T, Cost, Smooth>) return oriented_value_and_grad(m, y, x, gy, gx, seed, ws);
  return oriented_value_and_grad(tie_preserving_transposed(m), y, x, gy, gx, seed, ws);
}

/// The sum over the channels c of one(x_c, y_c, gx_c, gy_c), each channel of x and y copied to a
/// one-channel series in `buffer` and the gradients one adds to gx_c and gy_c (zeroed first)
/// added to column c of gx and gy: how an independent-channels measure is differentiated. S(x,
/// x) into one gradient buffer stays that within each channel (one copy, one buffer), as the
/// soft-MSM lanes' self terms need it (sums_self). one must not resize `buffer`.
template <class T, class One>
T sum_over_channels(series_view<T const> x, series_view<T const> y, series_view<T> gx,
                    series_view<T> gy, std::vector<T>& buffer, One&& one) {
  index_t const n = x.length, k = y.length;
  bool const self = x.data == y.data && n == k && gx.data != nullptr && gx.data == gy.data;
  buffer.resize(static_cast<std::size_t>(2 * (n + k)));
  T* const base = buffer.data();
  series_view<T> const gxc{base + n + k, n, 1}, gyc{base + 2 * n + k, k, 1};
  T sum = T(0);
  for (index_t c = 0; c < x.channels; ++c) {
    std::fill(gxc.data, gxc.data + n + k, T(0));  // gxc and gyc are adjacent
    series_view<T const> const xc = copy_channel(x, c, base);
    sum += self ? one(xc, xc, gxc, gxc) : one(xc, copy_channel(y, c, base + n), gxc, gyc);
    for (index_t i = 0; i < n; ++i) gx(i, c) += gxc.data[i];
    if (!self)
      for (index_t j = 0; j < k; ++j) gy(j, c) += gyc.data[j];
  }
  return sum;
}

/// The measure's value, adding seed times its gradient to gx and gy.
template <class T, class Cost, class Smooth>
T value_and_grad(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                 series_view<T> gx, series_view<T> gy, T seed, workspace<T>& ws) {
  if (m.independent_channels && x.channels > 1) {  // the sum of per-channel measures
    auto const one = m.single_channel();
    return sum_over_channels(x, y, gx, gy, ws.channel, [&](auto xc, auto yc, auto gxc, auto gyc) {
      return value_and_grad(one, xc, yc, gxc, gyc, seed, ws);
    });
  }
  T const sxy = plain_value_and_grad(m, x, y, gx, gy, seed, ws);
  if (!m.divergence) return sxy;
  // D = S(x,y) - S(x,x)/2 - S(y,y)/2; S(x,x) depends on x through both of its arguments.
  T const sxx = plain_value_and_grad(m, x, x, gx, gx, -seed / T(2), ws);
  T const syy = plain_value_and_grad(m, y, y, gy, gy, -seed / T(2), ws);
  return divergence_of(sxy, sxx, syy);
}

/// The forward of the alignment passes below: R alone, or checkpoints where R would be large
/// (every < 0: log_domain_checkpoint; else that interval, 0 for R whole, as tests force it).
template <class T, class P, class Lanes>
T alignment_forward(P const& p, Lanes& lanes, workspace<T>& ws, index_t every) {
  if (every < 0) {
    auto const r_packs = static_cast<std::size_t>(strip_vectors<T> * strip_steps<T>(p.band, p.x.length));
    every = log_domain_checkpoint<T>(p.band, p.x.length, r_packs * sizeof(simd::pack<T>));
  }
  return forward(p, lanes, ws.rowbuf, &ws.table, 0, every);
}

/// One(m', x', y', transposed) with the strips across the longer series, as the training pass
/// orients them: the pair as given when y is not longer, else swapped with the tie-preserving
/// transpose, which has R's bits (plain_value_and_grad); `transposed` says which, for the
/// caller to map (i, j) and the up and left moves back. With x the shorter, each strip of H
/// rows spanned all of y with H - 1 rows of padding (a 1 x 4e6 path kept 1194 MB for an R of
/// 32 MB).
template <class T, class Cost, class Smooth, class One>
decltype(auto) along_longer(measure<Cost, Smooth> const& m, series_view<T const> x,
                            series_view<T const> y, One&& one) {
  if (y.length <= x.length) return one(m, x, y, std::false_type{});
  return one(tie_preserving_transposed(m), y, x, std::true_type{});
}

/// S(x, y), calling visit(i, j, A, G) for every in-band cell with its adjoint A = dS/dR(i, j)
/// and G the expected use of each move into it, in x's orientation (backward's visit), whichever
/// series the strips run along (transposed, up and left trade places back).
template <class T, class Cost, class Smooth, class Visit>
T visit_alignment(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                  workspace<T>& ws, index_t every, Visit&& visit) {
  T const strips = along_longer(m, x, y, [&](auto const& mo, series_view<T const> xo, series_view<T const> yo, auto swapped) {
    auto const p = make_problem(mo, xo, yo);
    lane_cost<T, typename std::remove_cvref_t<decltype(mo)>::cost_type> lanes;
    T const v = alignment_forward(p, lanes, ws, every);
    backward(p, ws.table, T(1), lanes, ws.g_up, ws.g_diag,
             [&](index_t i, index_t j, T a, step3<T> g) {
               if constexpr (decltype(swapped)::value) visit(j, i, a, step3<T>{g.diag, g.left, g.up});
               else visit(i, j, a, g);
             },
             series_view<T>{}, series_view<T>{});
    return v;
  });
  T walked;  // a band of one path: value()'s bits
  return walked_single_path(m, x, y, false, series_view<T>{}, series_view<T>{}, T(0), ws, walked) ? walked : strips;
}

/// S(x, y) and the soft alignment matrix E(i, j) = dS/dR(i, j), the probability that the
/// alignment passes through (i, j) (for DTW costs: dS/dDelta(i, j)). E is (n, m), overwritten.
/// every: as alignment_forward's.
template <class T, class Cost, class Smooth>
T alignment_matrix(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                   matrix_view<T> e, workspace<T>& ws, index_t every = -1) {
  for (index_t k = 0; k < e.rows * e.cols; ++k) e.data[k] = T(0);
  return visit_alignment(m, x, y, ws, every, [&](index_t i, index_t j, T a, step3<T>) { e(i, j) = a; });
}

/// S(x, y) and the expected use of each move into every cell: diag(i, j), up(i, j) and
/// left(i, j) (each (n, m), overwritten; a null view is skipped). For MSM-type costs, diag is
/// the soft alignment (move occupancy) matrix and up / left the split-merge occupancies.
template <class T, class Cost, class Smooth>
T move_occupancy(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                 matrix_view<T> diag, matrix_view<T> up, matrix_view<T> left, workspace<T>& ws,
                 index_t every = -1) {
  for (matrix_view<T> o : {diag, up, left})
    if (o.data) for (index_t k = 0; k < o.rows * o.cols; ++k) o.data[k] = T(0);
  return visit_alignment(m, x, y, ws, every, [&](index_t i, index_t j, T, step3<T> g) {
    if (diag.data) diag(i, j) = g.diag;
    if (up.data) up(i, j) = g.up;
    if (left.data) left(i, j) = g.left;
  });
}

/// The optimal path of a hard measure from (0, 0) to (n-1, m-1), ties broken diag > up > left
/// (where the value is +inf, a path in the band through those ties). The traceback reads R
/// strip by strip, recomputed from checkpoints where R would be large (a 16000 x 16000 path
/// kept 1962 MB; value_and_grad of the same pair, 69 MB).
template <class T, class Cost>
std::vector<std::array<index_t, 2>> alignment_path(measure<Cost, hard_min> const& m,
                                                   series_view<T const> x, series_view<T const> y,
                                                   T* value_out, workspace<T>& ws,
                                                   index_t every = -1) {
  std::vector<std::array<index_t, 2>> path;
  T const v = along_longer(m, x, y, [&](auto const& mo, series_view<T const> xo, series_view<T const> yo, auto swapped) {
    constexpr bool t = decltype(swapped)::value;
    constexpr index_t H = strip_rows<T>;
    auto const p = make_problem(mo, xo, yo);
    lane_cost<T, typename std::remove_cvref_t<decltype(mo)>::cost_type> lanes;
    T const value = alignment_forward(p, lanes, ws, every);
    strip_table<T>& table = ws.table;
    lanes.begin_pair(p.cost, p.x, p.y);
    table.segment_first = -1;
    index_t loaded = -1;  // the strip whose cells the table holds (checkpointed)
    row_slot<T> above;  // R(loaded * H - 1, j) at row index j + 1
    // checkpointed: the strip of the path's row i in the table (the path's rows never
    // increase: strips load last to first), and the row above it
    auto const focus = [&](index_t i) {
      if (!table.checkpointed() || i / H == loaded) return;
      loaded = i / H;
      above = load_strip(p, lanes, table, loaded, strip_geometry<T>(p.band, p.x.length, loaded * H));
    };
    auto const r_at = [&](index_t i, index_t j) -> T {  // i in row focus()'s strip, or just above
      if (table.checkpointed() && i >= 0 && i + 1 == loaded * H) return above.at(j + 1, math::infinity<T>());
      return table.at(i, j);
    };
    index_t i = xo.length - 1, j = yo.length - 1;
    path.reserve(static_cast<std::size_t>(i + j + 1));  // a path has at most n + m - 1 cells
    auto const emit = [&] { path.push_back(t ? std::array<index_t, 2>{j, i} : std::array<index_t, 2>{i, j}); };
    emit();
    while (i > 0 || j > 0) {
      focus(i);
      step3<T> const c = mo.cost.step(xo, yo, i, j);
      T const rd = r_at(i - 1, j - 1), ru = r_at(i - 1, j), rl = r_at(i, j - 1);
      step3<T> const w = cell_weights(mo.smooth, c, rd, ru, rl);
      // the chosen move where it stays in the band; where every candidate is +inf (step costs
      // that overflow) the ties took the diagonal off the grid's first row or column, and moves
      // out of the band. An in-band cell has an in-band predecessor: the rows' ends never
      // decrease and consecutive rows touch. Transposed, x's up moves are its left ones: the
      // fallbacks keep x's order diag > up > left.
      bool const diag_in = i > 0 && j > 0 && p.band.contains(i - 1, j - 1);
      bool const up_in = i > 0 && p.band.contains(i - 1, j);
      bool const left_in = j > 0 && p.band.contains(i, j - 1);
      if (w.diag == T(1) && diag_in) { --i; --j; }
      else if (w.up == T(1) && up_in) { --i; }
      else if (w.left == T(1) && left_in) { --j; }
      else if (diag_in) { --i; --j; }
      else if (t ? left_in : up_in) { if (t) --j; else --i; }
      else { if (t) --i; else --j; }
      emit();
    }
    lanes.end_pair();
    return value;
  });
  // last: the traceback reads x and y; a band of one path: value()'s bits
  if (value_out && !walked_single_path(m, x, y, false, series_view<T>{}, series_view<T>{}, T(0), ws, *value_out))
    *value_out = v;
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace resilin::host_detail

#pragma once
// DTW and soft-DTW values of many pairs in lock-step: one pair per SIMD lane, G = K * W pairs
// of equal shape traversed together row by row. The strip wavefront (strip.hpp) puts the rows of
// one pair in the lanes and pays a skew of H - 1 steps per strip of H rows, plus lane shifts
// and band masks; for short series that skew is a large share of the work (15 of 79 steps at
// m = 64). Here every lane computes the same cell (i, j) of its own pair: no skew, no shifts,
// no masks, and the K vectors of a cell are independent chains that hide the latency of the
// cell (soft: the exponential-domain cell of exp_domain.hpp; hard: min-plus).
// The arithmetic is the strip forward's, operation for operation (the same point distance
// summed over channels in order, the same cell, the same final conversion), so a pair's
// value does not depend on which traversal ran it: bit for bit equal.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>
#include <resilin/backend/host/exp_domain.hpp>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/smoothing/hard_min.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Vectors per lock-step group: K independent cells per step, G = K * W pairs per group.
template <class T>
inline constexpr int lockstep_vectors = 4;
template <class T>
inline constexpr int lockstep_pairs = lockstep_vectors<T> * simd::pack<T>::width;

/// Pairs whose longer series is at most this long go in lock-step: a group's interleaved
/// series and two rows stay within a few MiB. (Measured at (16, 1024, 1024, 8): 217 Mcells/s
/// in lock-step against 187 for the strip traversal; longer single pairs rarely come in groups.)
inline constexpr index_t lockstep_max_length = 4096;

/// The cell of a lock-step group for soft-DTW: the exponential-domain cell of exp_domain.hpp.
template <class T>
struct lockstep_soft_cell {
  using V = simd::pack<T>;
  using state = exp_value<T>;
  T gamma, scale;
  explicit lockstep_soft_cell(soft_min<T> const& s) noexcept
      : gamma(s.gamma), scale(exp_domain_scale<T>(s)) {}
  static state unreachable() noexcept { return {V(T(1)), V(unreachable_k<T>)}; }
  static state origin() noexcept { return {V(T(1)), V(T(0))}; }
  RESILIN_INLINE state operator()(state const& d, state const& u, state const& l, V delta) const noexcept {
    return exp_cell(d, u, l, delta * scale);
  }
  T result(state const& e, int lane) const noexcept {
    return exp_domain_result(gamma, e.m[lane], e.k[lane]);
  }
};

/// The cell of a lock-step group for DTW: the recursion's cell function with hard_min.
template <class T>
struct lockstep_hard_cell {
  using V = simd::pack<T>;
  using state = V;
  explicit lockstep_hard_cell(hard_min const&) noexcept {}
  static state unreachable() noexcept { return V(math::infinity<T>()); }
  static state origin() noexcept { return V(T(0)); }
  RESILIN_INLINE state operator()(V d, V u, V l, V delta) const noexcept {
    return cell_value(hard_min{}, step3<V>{delta, delta, delta}, d, u, l);
  }
  static T result(V const& e, int lane) noexcept { return e[lane]; }
};

/// The lock-step cell of a measure (void: the measure does not run in lock-step). DTW costs
/// with a vector distance, soft (values in the exponential domain) or hard.
template <class T, class Cost, class Smooth>
struct lockstep_cell_for { using type = void; };
template <class T, vector_distance D>
struct lockstep_cell_for<T, dtw_cost<D>, soft_min<T>> { using type = lockstep_soft_cell<T>; };
template <class T, vector_distance D>
struct lockstep_cell_for<T, dtw_cost<D>, hard_min> { using type = lockstep_hard_cell<T>; };

template <class T, class Cost, class Smooth>
inline constexpr bool lockstep_measure =
    !std::is_void_v<typename lockstep_cell_for<T, Cost, Smooth>::type>;

/// Buffers of one worker, reused between groups.
template <class T>
struct lockstep_workspace {
  using V = simd::pack<T>;
  std::vector<V> xs, ys;                    // interleaved: (row, channel, vector), lanes = pairs
  std::vector<exp_value<T>> soft_rows[2];   // (column + 1, vector): the row above and this row
  std::vector<V> hard_rows[2];
  // training (lockstep_training.hpp): every cell's state, the moves' adjoint shares of the row
  // below, and the gradient sums of x's row and of y
  std::vector<exp_value<T>> table;
  std::vector<V> g_up, g_diag, gx_row, gy;
  std::vector<V> e_col, e_row;  // soft-MSM (lockstep_soft_msm.hpp): the columns' and the row's exponentials
  std::vector<V> side, pending_a;  // soft-MSM training: weights and terms; adjoints whose y terms wait
  std::vector<T> idle_gradients;   // a group's idle lanes' gradients (group_partial), dropped

  template <class State>
  std::vector<State>* rows() noexcept {
    if constexpr (std::same_as<State, V>) return hard_rows;
    else return soft_rows;
  }
};

/// v.resize(size) that grows to exactly `size`, the old storage freed first: a training group's
/// table after a smaller group's (groups run in ascending shape order) took twice its cap
/// (vector's growth, and the old buffer alive while the new one fills).
template <class V>
void resize_exactly(std::vector<V>& v, std::size_t size) {
  if (size > v.capacity()) {
    v = std::vector<V>();
    v.reserve(size);
  }
  v.resize(size);
}

/// The rows and columns of a group: the longest x and y of its pairs (a ragged group's pairs,
/// in a full band, may be shorter: lockstep_corner_forward, lockstep_adjoint_sweep).
struct group_extent {
  index_t n, m;
  template <class Pair>
  static group_extent of(Pair const* pairs, int count) noexcept {
    group_extent e{0, 0};
    for (int g = 0; g < count; ++g) {
      e.n = std::max(e.n, pairs[g].x.length);
      e.m = std::max(e.m, pairs[g].y.length);
    }
    return e;
  }
};

/// Interleaves the G pairs' series into ws.xs and ws.ys: entry (row * d + c) * K + q holds
/// channel c of that row of the pairs q W .. q W + W - 1, one per lane, and 0 past a shorter
/// pair's samples (a ragged group's padding, read only by cells past its corner).
template <class T, class Pair>
void interleave_group(Pair const* pairs, lockstep_workspace<T>& ws) {
  constexpr int W = simd::pack<T>::width, K = lockstep_vectors<T>, G = K * W;
  auto const [n, m] = group_extent::of(pairs, G);
  index_t const d = pairs[0].x.channels;
  auto const at = [d](index_t row, index_t c, int q) { return static_cast<std::size_t>((row * d + c) * K + q); };
  ws.xs.resize(static_cast<std::size_t>(n * d * K));
  ws.ys.resize(static_cast<std::size_t>(m * d * K));
  for (int g = 0; g < G; ++g) {
    int const q = g / W, k = g % W;
    series_view<T const> const x = pairs[g].x, y = pairs[g].y;
    for (index_t i = 0; i < n; ++i)
      for (index_t c = 0; c < d; ++c) ws.xs[at(i, c, q)].set(k, i < x.length ? x(i, c) : T(0));
    for (index_t j = 0; j < m; ++j)
      for (index_t c = 0; c < d; ++c) ws.ys[at(j, c, q)].set(k, j < y.length ? y(j, c) : T(0));
  }
}

/// The lock-step forward of an n x m group: row(i), i >= -1, gives the (m + 1) K states of row
/// i, column j of vector q at (j + 1) K + q, with row(-1) all unreachable but the origin. Cells:
/// begin_row(i) before row i; costs(i, j, q), the step costs of vector q's cells at (i, j); and
/// combine(i, j, costs, diag, up, left), the K cells' states from their predecessors', into
/// left (the cell function: one vector at a time or several as one value). Rolling rows (Table
/// false): row(i) and row(i - 2) may share storage, and entries past a row's band are never
/// written, since the band's rows only move right. Table (every row its own): entries past the
/// band are set unreachable, so that a backward reads the predecessors of any cell in the band.
template <class T, bool Table, class S, class Rows, class Cells>
void lockstep_forward(index_t n, index_t m, band_geometry const& band, S const& unreachable, Rows&& row,
                      Cells&& cells) {
  constexpr int K = lockstep_vectors<T>;
  for (index_t i = 0; i < n; ++i) {
    S const* const above = row(i - 1);  // above[(j + 1) * K + q] = R(i - 1, j)
    S* const here = row(i);
    index_range const r = band.row(i);
    // (i, lo - 1) is outside the band; columns before lo - 1 are never read again
    for (int q = 0; q < K; ++q) here[r.lo * K + q] = unreachable;
    if constexpr (Table)
      for (index_t j = r.hi + 1; j < m; ++j)
        for (int q = 0; q < K; ++q) here[(j + 1) * K + q] = unreachable;
    S left[K], diag[K];
    for (int q = 0; q < K; ++q) {
      left[q] = unreachable;
      diag[q] = above[r.lo * K + q];
    }
    cells.begin_row(i);
    for (index_t j = r.lo; j <= r.hi; ++j) {
      S const* const up = above + (j + 1) * K;
      S* const out_j = here + (j + 1) * K;
      // the costs of all K vectors first: they do not depend on R, so the K recursion chains
      // that follow sit next to each other in the instruction stream and overlap
      typename std::remove_cvref_t<Cells>::costs_type c[K];
RESILIN_UNROLL(8)
      for (int q = 0; q < K; ++q) c[q] = cells.costs(i, j, q);
      S u[K];
RESILIN_UNROLL(8)
      for (int q = 0; q < K; ++q) u[q] = up[q];
      cells.combine(i, j, c, diag, u, left);  // left[q]: the cell's new state
RESILIN_UNROLL(8)
      for (int q = 0; q < K; ++q) {
        diag[q] = u[q];
        out_j[q] = left[q];
      }
    }
  }
}

/// lockstep_forward on two rolling rows (rows[0], rows[1]: O(m) memory, as the values need):
/// returns row n - 1, column j of vector q at (j + 1) K + q.
template <class T, class S, class Cells>
S const* lockstep_rolling_forward(index_t n, index_t m, band_geometry const& band, S const& unreachable,
                                  S const& origin, std::vector<S>* rows, Cells&& cells) {
  constexpr int K = lockstep_vectors<T>;
  auto const row_size = static_cast<std::size_t>((m + 1) * K);
  rows[0].assign(row_size, unreachable);
  rows[1].assign(row_size, unreachable);
  for (int q = 0; q < K; ++q) rows[0][static_cast<std::size_t>(q)] = origin;  // R(-1, -1) = 0
  lockstep_forward<T, false>(n, m, band, unreachable, [&](index_t i) { return rows[(i + 1) & 1].data(); }, cells);
  return rows[n & 1].data();
}

/// Cells (lockstep_forward) that call at_row_end(i) once row i is complete, before row i + 1
/// begins (the last row's: the caller's, after the forward).
template <class Cells, class AtRowEnd>
struct row_end_hook {
  using costs_type = typename std::remove_cvref_t<Cells>::costs_type;
  Cells& inner;
  AtRowEnd& at_row_end;
  void begin_row(index_t i) {
    if (i > 0) at_row_end(i - 1);
    inner.begin_row(i);
  }
  RESILIN_INLINE costs_type costs(index_t i, index_t j, int q) { return inner.costs(i, j, q); }
  template <class... A>
  RESILIN_INLINE void combine(A&&... a) {
    inner.combine(std::forward<A>(a)...);
  }
};

/// lockstep_rolling_forward of a group's values: each pair's value is the state of its own
/// corner (n_g - 1, m_g - 1), the group's last cell for equal shapes. In a ragged group (pairs
/// shorter than the group's n x m, in a full band) that cell and its predecessors are the
/// pair's alone, with the arithmetic of its own n_g x m_g group; the padded rows and columns
/// past it are computed and never read. read(state, lane, g) takes
/// pair g's corner state when its row is complete.
template <class T, class S, class Pair, class Cells, class Read>
void lockstep_corner_forward(Pair const* pairs, band_geometry const& band, S const& unreachable, S const& origin,
                             std::vector<S>* rows, Cells&& cells, Read&& read) {
  constexpr int W = simd::pack<T>::width, K = lockstep_vectors<T>, G = K * W;
  auto const [n, m] = group_extent::of(pairs, G);
  auto const at_row_end = [&](index_t i) {
    S const* const row = rows[(i + 1) & 1].data();  // lockstep_rolling_forward's row(i)
    for (int g = 0; g < G; ++g)
      if (pairs[g].x.length - 1 == i) read(row[static_cast<std::size_t>(pairs[g].y.length * K + g / W)], g % W, g);
  };
  row_end_hook<std::remove_reference_t<Cells>, decltype(at_row_end)> hooked{cells, at_row_end};
  lockstep_rolling_forward<T>(n, m, band, unreachable, origin, rows, hooked);
  at_row_end(n - 1);
}

/// The cells of a group with DTW costs (lockstep_forward): the strip engine's distance, term by
/// term in channel order, into a lockstep_soft_cell or lockstep_hard_cell.
template <class T, class Distance, class Cell>
struct lockstep_dtw_cells {
  using V = simd::pack<T>;
  static constexpr int K = lockstep_vectors<T>;
  Cell const& cell;
  V const* xs;
  V const* ys;
  index_t d;
  using costs_type = V;
  using S = typename Cell::state;
  void begin_row(index_t) const noexcept {}
  RESILIN_INLINE V costs(index_t i, index_t j, int q) const noexcept {
    V const* const xi = xs + i * d * K;
    V const* const yj = ys + j * d * K;
    V s(T(0));
RESILIN_UNROLL(4)
    for (index_t c = 0; c < d; ++c) s += Distance::term(xi[c * K + q] - yj[c * K + q]);
    return s;
  }
  RESILIN_INLINE void combine(index_t, index_t, V const* c, S const* diag, S const* up, S* left) const noexcept {
RESILIN_UNROLL(8)
    for (int q = 0; q < K; ++q) left[q] = cell(diag[q], up[q], left[q], c[q]);
  }
};

/// A pair of a training group as plain_value_and_grad orients it (rows along the longer
/// series), with its gradient buffers (zeroed by the caller) and its seed.
template <class T>
struct oriented_training_pair {
  series_view<T const> x, y;
  series_view<T> gx, gy;
  T seed;
  static oriented_training_pair of(series_view<T const> a, series_view<T const> b, series_view<T> ga,
                                   series_view<T> gb, T seed) noexcept {
    if (b.length > a.length) return {b, a, gb, ga, seed};
    return {a, b, ga, gb, seed};
  }
};

/// The adjoint sweep of a lock-step group's backward, as the strips' backward sums: rows from
/// n - 1 up, each right to left, a cell's adjoint a = (the share the cell below passed up + the
/// share the cell to the right passed left) + the share the cell diagonally below passed back,
/// plus each pair's seed at its last cell. cells.begin_row(i) and cells.end_row(i) around
/// row i; cells.cell(i, j, q, a) gives the shares vector q's adjoint passes to the cell's
/// predecessors (diag, up, left), its gradient terms accumulated as the caller's traversal needs.
/// A ragged group (pairs within the group's n x m, a full band: lockstep_corner_forward's)
/// seeds each pair at its own last cell, so its cells' adjoints are those of its own group: the
/// cells past it get adjoint +0 (nothing seeds them) and pass +0 shares (the adjoint times a
/// weight in [0, 1]), as the strips' zeros beyond a pair. Their gradient terms are +0 or -0,
/// and add nothing wherever they fall: every sum starts at +0 and so is never -0 (a sum of
/// +0 and any terms is -0 only if it starts at -0), and x + (+-0) = x for every other x.
template <class T, class Cells>
void lockstep_adjoint_sweep(oriented_training_pair<T> const* pairs, band_geometry const& band,
                            lockstep_workspace<T>& ws, Cells&& cells) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = lockstep_vectors<T>, G = K * W;
  group_extent const extent = group_extent::of(pairs, G);
  index_t const n = extent.n, m = extent.m;
  bool ragged = false;
  V seeds[K], rows[K], columns[K];  // each lane's seed, rows and columns
  for (int g = 0; g < G; ++g) {
    seeds[g / W].set(g % W, pairs[g].seed);
    rows[g / W].set(g % W, static_cast<T>(pairs[g].x.length));
    columns[g / W].set(g % W, static_cast<T>(pairs[g].y.length));
    ragged = ragged || pairs[g].x.length != n || pairs[g].y.length != m;
  }
  V const zero(T(0));
  // g_up[j], g_diag[j]: the shares that cell (i + 1, j) passed up and diagonally (0 outside the
  // band and past the last row), column m the zero beyond
  ws.g_up.assign(static_cast<std::size_t>((m + 1) * K), zero);
  ws.g_diag.assign(static_cast<std::size_t>((m + 1) * K), zero);
  V* const g_up = ws.g_up.data();
  V* const g_diag = ws.g_diag.data();
  auto const sweep = [&]<bool Ragged>() {
    index_t below_hi = -1;  // the last column of the row below (none below the last row)
    for (index_t i = n - 1; i >= 0; --i) {
      index_range const r = band.row(i);
      cells.begin_row(i);
      V left[K], carry[K];  // the share cell (i, j + 1) passed left; g_diag of (i + 1, j + 1)
      typename V::mask last_row[K];  // the lanes whose pair ends in this row
      for (int q = 0; q < K; ++q) {
        left[q] = zero;
        carry[q] = g_diag[(r.hi + 1) * K + q];
        if constexpr (Ragged) last_row[q] = V(static_cast<T>(i + 1)) == rows[q];
      }
      for (index_t j = r.hi; j >= r.lo; --j) {
RESILIN_UNROLL(8)
        for (int q = 0; q < K; ++q) {
          auto const at = static_cast<std::size_t>(j * K + q);
          V const diag_below = carry[q];
          carry[q] = g_diag[at];
          V a = g_up[at] + left[q] + diag_below;
          if constexpr (Ragged)
            a = simd::select(last_row[q] & (V(static_cast<T>(j + 1)) == columns[q]), a + seeds[q], a);
          else if (i == n - 1 && j == m - 1)
            a = a + seeds[q];
          step3<V> const shares = cells.cell(i, j, q, a);
          g_diag[at] = shares.diag;
          g_up[at] = shares.up;
          left[q] = shares.left;
        }
        cells.end_cell(i, j);
      }
      // columns the row below had past this row's band are no cells of this row
      for (index_t j = r.hi + 1; j <= below_hi; ++j)
        for (int q = 0; q < K; ++q) g_up[j * K + q] = g_diag[j * K + q] = zero;
      below_hi = r.hi;
      cells.end_row(i);
    }
  };
  if (ragged) sweep.template operator()<true>();
  else sweep.template operator()<false>();
}

/// Adds each trained lane's sums of y's gradient (gy: (column, channel, vector)) to its pair's
/// gy (its own columns of a ragged group's), as the strips add theirs at the end of a pair
/// (trained null: every lane).
template <class T>
void add_lane_gradients_y(oriented_training_pair<T> const* pairs, bool const* trained, simd::pack<T> const* gy) {
  constexpr int W = simd::pack<T>::width, K = lockstep_vectors<T>;
  index_t const d = pairs[0].y.channels;
  for (int g = 0; g < K * W; ++g) {
    if (trained && !trained[g]) continue;
    for (index_t j = 0; j < pairs[g].y.length; ++j)
      for (index_t c = 0; c < d; ++c) pairs[g].gy(j, c) += gy[(j * d + c) * K + g / W][g % W];
  }
}

/// S(x_g, y_g) for the G pairs of one group, into out[g]. Every pair has n rows (the longer
/// series, as plain_value orients it) and m columns, or, in a full band, a ragged group's pairs
/// lie within n x m (lockstep_corner_forward); the same channel count; band is their common
/// band. Cell: lockstep_soft_cell (every pair satisfies exp_domain_applies) or
/// lockstep_hard_cell.
template <class T, class Distance, class Cell, class Pair>
void lockstep_values(Pair const* pairs, band_geometry const& band, Cell const& cell, T* out,
                     lockstep_workspace<T>& ws) {
  using S = typename Cell::state;
  interleave_group(pairs, ws);
  lockstep_dtw_cells<T, Distance, Cell> const cells{cell, ws.xs.data(), ws.ys.data(), pairs[0].x.channels};
  lockstep_corner_forward<T>(pairs, band, Cell::unreachable(), Cell::origin(), ws.template rows<S>(), cells,
                             [&](S const& state, int lane, int g) { out[g] = cell.result(state, lane); });
}

/// A pair as the host value path orients it: rows along the longer series (x), the rolling
/// row along the shorter one (y). S is symmetric for DTW costs, bit for bit.
template <class T>
struct oriented_pair {
  series_view<T const> x, y;
  static oriented_pair of(series_view<T const> a, series_view<T const> b) noexcept {
    return b.length > a.length ? oriented_pair{b, a} : oriented_pair{a, b};
  }
};

}  // namespace resilin::host_detail

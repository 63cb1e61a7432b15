#pragma once
// The second-order passes of one pair on the host (forward over reverse). Move every R(i, j) of
// the recursion along a direction t: a per-cell offset t omega(i, j) (along_offsets), or every
// step cost c scaled to (1 + t) c (along_costs). The derivative of S along it is the tangent
// R'(n-1, m-1) of one forward of R and its tangent
//     R'(i, j) = sum_k w_k(i, j) dv_k + offset(i, j),   dv_k = R'(pred_k) (+ c_k along costs),
// which is L = sum_ij E(i, j) omega(i, j) along offsets (E = dS/d offset is the alignment
// matrix) and the expected cost of the alignment along costs (the Gibbs expectation of the
// path's cost: by induction over the cells, since the weights are the probabilities of each
// last move). The gradient of L with respect to the series is the tangent of S's: one backward
// of the adjoint A and its tangent
//     U_k = A w_k,  U'_k = A' w_k + A w'_k,  A(pred_k) += U_k,  A'(pred_k) += U'_k,
// w' the smoothing's weights_tangent along dv, then the cost model's step_grad of U'_k (plus U_k
// along costs, whose costs carry the factor 1 + t). Along costs, w' comes from the candidates
// and the entropies H of the alignments into their cells instead (R' = R + gamma H there:
// weights_tangent_along_costs), which the forward carries beside R': the differences of R'
// between tied candidates are O(gamma), and their rounding divided by gamma was not bounded. For soft-DTW along offsets this is the
// Hessian-vector product of S(Delta) with omega of spec/softdtw.md §3.9, pulled back to the
// series; along costs, the gradient of the sharp soft-DTW of §3.7. A third direction gives the
// entropy of the alignment distribution by the same forward (along_entropy: the offset is the
// cell's own entropy -sum w log w of its last move, the chain rule of entropy), with no backward.
// Scalar and row-major along the longer series (the problem transposed when y is longer, hard
// measures' ties mirrored there): the pass keeps R and R' for the cells of the
// band (two values per cell, three with H along costs, with a border; band_rows) up to 256 MiB, beyond that for segments
// of about sqrt(n) rows, one at a time, recomputed from the row above each (tangent_limits); the
// move weights where they fit (three more), and A, A' in two rows; a forward alone keeps two
// rows (tangent_value).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>
#include <resilin/backend/host/pair.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Along a per-cell offset omega(i, j): L = sum_ij E(i, j) omega(i, j) (expected_penalty).
template <class Omega>
struct along_offsets {
  Omega const& omega;
  static constexpr bool scales_costs = false;
  static constexpr bool differentiable = true;
  static constexpr bool keeps_entropy = false;
  static constexpr bool reads_entropy = false;
  template <class T>
  T offset(index_t i, index_t j, T) const { return static_cast<T>(omega(i, j)); }
  /// f(this direction in the transposed problem, x and y swapped): omega(j, i) at (i, j).
  template <class F>
  decltype(auto) transposed_to(F&& f) const {
    auto const swapped = [this](index_t i, index_t j) { return omega(j, i); };
    return f(along_offsets<decltype(swapped)>{swapped});
  }
};

/// Along the step costs, each scaled by 1 + t: L = the expected cost of the alignment (sharp).
struct along_costs {
  static constexpr bool scales_costs = true;
  static constexpr bool differentiable = true;
  /// The pass keeps each cell's alignment entropy beside R' for the backward's weight tangents.
  static constexpr bool keeps_entropy = true;
  static constexpr bool reads_entropy = false;  // the offset does not
  template <class T>
  T offset(index_t, index_t, T) const { return T(0); }
  template <class F>
  decltype(auto) transposed_to(F&& f) const { return f(*this); }  // the same in every cell
};

/// Along each cell's entropy of its last move: L = the entropy of the alignment distribution,
/// sum over the cells of E(i, j) (-sum_k w_k log w_k). Forward only (the offset depends on the
/// weights, which the backward does not differentiate).
struct along_entropy {
  static constexpr bool scales_costs = false;
  static constexpr bool differentiable = false;
  static constexpr bool keeps_entropy = false;
  static constexpr bool reads_entropy = true;
  /// The last move's entropy.
  template <class T>
  T offset(index_t, index_t, T move_entropy) const { return move_entropy; }
  template <class F>
  decltype(auto) transposed_to(F&& f) const { return f(*this); }  // the same in every cell
};

/// The tangents of a cell's three candidates R(pred_k) + c_k: the predecessors' tangents, plus
/// the step costs where they scale (an impossible move's +inf cost has weight 0: it adds 0).
template <class Dir, class T>
step3<T> candidate_tangents(step3<T> const& dp, step3<T> const& c) noexcept {
  if constexpr (Dir::scales_costs) {
    T const inf = math::infinity<T>();
    auto const plus = [inf](T d, T ck) { return ck < inf ? d + ck : d; };
    return {plus(dp.diag, c.diag), plus(dp.up, c.up), plus(dp.left, c.left)};
  } else {
    return dp;
  }
}

/// The step costs of cell (i, j), opaque to the optimiser. A compiler that contracts
/// multiply-adds (GCC's default in GNU mode on FMA targets) would otherwise fuse a cost's last
/// product into the candidates R(pred) + c where the cost's evaluation is inlined beside them
/// (the backward that recomputes the move weights) and not where it is not (the forward that
/// keeps them): built with -O3 -march=native, the gradients differed in the last bits in 97 (gx)
/// and 85 (gy) of 720 comparisons. An empty asm with register operands (no instruction) for
/// float and double; other types (long double: x87, no FMA) are left as they are.
template <class T, class Cost>
RESILIN_INLINE step3<T> opaque_step(Cost const& cost, series_view<T const> x, series_view<T const> y,
                                    index_t i, index_t j) noexcept {
  step3<T> c = cost.step(x, y, i, j);
  math::opaque(c.diag);
  math::opaque(c.up);
  math::opaque(c.left);
  return c;
}

template <class T>
struct tangent_cell_result {
  T value;
  step3<T> weights;
  T tangent;       // R'; 0 for an unreachable cell
  T move_entropy;  // of the weights, where the direction reads it (else 0)
};

/// The entropy of the alignments into a cell, from its move weights and its predecessors'
/// entropies dh (the chain rule of entropy); 0 for an unreachable cell.
template <class T>
T cell_entropy(tangent_cell_result<T> const& cell, step3<T> const& dh) noexcept {
  if (!(cell.value < math::infinity<T>())) return T(0);
  step3<T> const& w = cell.weights;
  return (w.diag * dh.diag + w.up * dh.up + w.left * dh.left) + cell.move_entropy;
}

/// One cell of the tangent forward: R(i, j), its move weights and R'(i, j), from the step costs c,
/// the predecessors' values p and their tangents dp; with Entropy (the direction's offset reads
/// it, or the pass keeps the cells' entropies) the entropy of the move weights too.
template <bool Entropy, class T, class Smooth, class Dir>
RESILIN_INLINE tangent_cell_result<T> tangent_cell(Smooth const& smooth, Dir const& dir, step3<T> const& c,
                                    step3<T> const& p, step3<T> const& dp, index_t i, index_t j) {
  static_assert(Entropy || !Dir::reads_entropy);
  value_weights_and_entropy<T> vw{};
  if constexpr (Entropy) {  // cell_value_and_weights' candidates, value and weights
    vw = smooth.combine_weights_and_entropy(cell_candidates(c, p.diag, p.up, p.left));
  } else {
    auto const plain = cell_value_and_weights(smooth, c, p.diag, p.up, p.left);
    vw = {plain.value, plain.weights, T(0)};
  }
  T tangent = T(0);
  if (vw.value < math::infinity<T>()) {
    step3<T> const dv = candidate_tangents<Dir>(dp, c);
    step3<T> const& w = vw.weights;
    tangent = (w.diag * dv.diag + w.up * dv.up + w.left * dv.left) + dir.offset(i, j, vw.entropy);
  }
  return {vw.value, vw.weights, tangent, vw.entropy};
}

/// Where the second-order pass keeps a cell: row i (from -1) keeps the columns [lo_i - 1, top_i],
/// its band with a border on the left, and on the right up to top_i = max(hi_i, hi_{i+1}), the
/// columns that row i + 1 reads above it (row -1: [-1, hi_0], the origin and the border row). The
/// band's ends never decrease from row to row, so every predecessor of a cell of the band has a
/// slot, which holds R = +inf and R' = 0 where it lies outside the band or the grid.
struct band_rows {
  std::vector<std::size_t> offset;  // at i + 1: the slot of row i's first kept column
  std::vector<index_t> first;       // at i + 1: row i's first kept column, lo_i - 1
  std::size_t size = 0;             // slots in all

  band_rows(band_geometry const& band, index_t n)
      : offset(static_cast<std::size_t>(n + 1)), first(static_cast<std::size_t>(n + 1)) {
    for (index_t i = -1; i < n; ++i) {
      offset[static_cast<std::size_t>(i + 1)] = size;
      first[static_cast<std::size_t>(i + 1)] = lo_of(band, i) - 1;
      size += static_cast<std::size_t>(top_of(band, n, i) - lo_of(band, i) + 2);
    }
  }
  std::size_t slot(index_t i, index_t j) const noexcept {
    auto const row = static_cast<std::size_t>(i + 1);
    return offset[row] + static_cast<std::size_t>(j - first[row]);
  }
  /// The first slot of row i (from -1), and one past its last.
  std::size_t row_begin(index_t i) const noexcept { return offset[static_cast<std::size_t>(i + 1)]; }
  std::size_t row_end(index_t i) const noexcept {
    auto const next = static_cast<std::size_t>(i + 2);
    return next < offset.size() ? offset[next] : size;
  }
  /// Row i's first band column (0 for row -1).
  static index_t lo_of(band_geometry const& band, index_t i) { return i < 0 ? 0 : band.row(i).lo; }
  /// The last column of row i that row i or row i + 1 reads.
  static index_t top_of(band_geometry const& band, index_t n, index_t i) {
    index_t const below = band.row(i + 1 < n ? i + 1 : i).hi;
    return i < 0 ? below : std::max(band.row(i).hi, below);
  }
};

/// The forward alone: the tangent R'(n-1, m-1) along dir, and S(x, y) to *value_out when it is
/// not null, in two rows of the grid's width (the caller puts the shorter series in y).
template <class T, class Cost, class Smooth, class Dir>
T tangent_value(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                Dir const& dir, T* value_out) {
  index_t const n = x.length, k = y.length;
  band_geometry const band = m.band.geometry(n, k);
  T const inf = math::infinity<T>();
  auto const width = static_cast<std::size_t>(k + 1);  // column j at j + 1
  std::vector<T> r_prev(width, inf), dr_prev(width, T(0)), r_cur(width), dr_cur(width);
  r_prev[0] = T(0);  // the origin; row -1 is +inf elsewhere
  for (index_t i = 0; i < n; ++i) {
    index_range const cols = band.row(i);
    // the slots row i + 1 reads of this row start as outside the band (band_rows)
    auto const from = static_cast<std::ptrdiff_t>(cols.lo), to = static_cast<std::ptrdiff_t>(band_rows::top_of(band, n, i)) + 2;
    std::fill(r_cur.begin() + from, r_cur.begin() + to, inf);
    std::fill(dr_cur.begin() + from, dr_cur.begin() + to, T(0));
    for (index_t j = cols.lo; j <= cols.hi; ++j) {
      auto const u = static_cast<std::size_t>(j);
      auto const cell = tangent_cell<Dir::reads_entropy>(m.smooth, dir, opaque_step(m.cost, x, y, i, j),
                                                         step3<T>{r_prev[u], r_prev[u + 1], r_cur[u]},
                                                         step3<T>{dr_prev[u], dr_prev[u + 1], dr_cur[u]}, i, j);
      r_cur[u + 1] = cell.value;
      dr_cur[u + 1] = cell.tangent;
    }
    std::swap(r_prev, r_cur);
    std::swap(dr_prev, dr_cur);
  }
  if (value_out) *value_out = r_prev[static_cast<std::size_t>(k)];
  return dr_prev[static_cast<std::size_t>(k)];
}

/// How much the second-order pass keeps (tangent_pass). Up to table_bytes, R and R' of every
/// cell of the band (two values per cell; along costs H too, three); beyond, segments of about sqrt(n) rows of the longer
/// series (n): the forward keeps the row above each, and the backward recomputes one segment at
/// a time from it (one more forward, about 2 sqrt(n) rows of the shorter series' length held).
/// The move weights (three values per cell) of the table or of a segment are kept while they
/// take at most keep_bytes, else the backward recomputes them. Every choice gives the same bits.
struct tangent_limits {
  std::size_t table_bytes = checkpoint_table_bytes;
  std::size_t keep_bytes = kept_table_bytes;
};

/// R and R' (and the alignment entropies H when the direction keeps them, the move weights when
/// kept) of the rows [first - 1, last) of a band_rows layout: rows first..last-1 of the grid and
/// the row above them, from slot `base` on.
template <class T>
struct tangent_rows {
  std::vector<T> r, dr;
  std::vector<T> h;               // empty unless the direction keeps entropies
  std::vector<step3<T>> weights;  // empty: the backward recomputes them
  std::size_t base = 0;

  /// The entropies of the candidates' predecessors into (i, j), whose local slot is s.
  step3<T> entropies(band_rows const& rows, index_t i, index_t j, std::size_t s) const noexcept {
    std::size_t const up = rows.slot(i - 1, j) - base;
    return {h[up - 1], h[up], h[s - 1]};
  }

  /// The candidates' predecessor values and their tangents into (i, j), whose local slot is s.
  std::pair<step3<T>, step3<T>> predecessors(band_rows const& rows, index_t i, index_t j,
                                             std::size_t s) const noexcept {
    std::size_t const up = rows.slot(i - 1, j) - base;
    return {step3<T>{r[up - 1], r[up], r[s - 1]}, step3<T>{dr[up - 1], dr[up], dr[s - 1]}};
  }
};

/// tangent_pass's buffers, reused between the pairs of a batch (one per thread): fresh tables
/// per pair cost their pages' faults and zeroing each time (a fifth of a 256 x 256 sharp
/// gradient's time with the entropies kept).
template <class T>
struct tangent_workspace {
  tangent_rows<T> kept;
  std::vector<T> saved;                 // the row above each segment after the first
  std::vector<std::size_t> saved_at;
  std::vector<T> a_cur, da_cur, a_prev, da_prev;  // the backward's adjoint rows
};

/// The forward of rows [first, last) into `kept`, whose row first - 1 is in place: every slot of
/// those rows starts outside the band (R = +inf, R' = 0), then the band's cells; their move
/// weights too when `weights` (kept holds them).
template <class T, class Cost, class Smooth, class Dir>
void tangent_forward_rows(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                          Dir const& dir, band_geometry const& band, band_rows const& rows,
                          index_t first, index_t last, tangent_rows<T>& kept, bool weights) {
  auto const from = static_cast<std::ptrdiff_t>(rows.row_begin(first) - kept.base);
  auto const to = static_cast<std::ptrdiff_t>(rows.row_end(last - 1) - kept.base);
  std::fill(kept.r.begin() + from, kept.r.begin() + to, math::infinity<T>());
  std::fill(kept.dr.begin() + from, kept.dr.begin() + to, T(0));
  if constexpr (Dir::keeps_entropy) std::fill(kept.h.begin() + from, kept.h.begin() + to, T(0));
  for (index_t i = first; i < last; ++i) {
    index_range const cols = band.row(i);
    for (index_t j = cols.lo; j <= cols.hi; ++j) {
      std::size_t const s = rows.slot(i, j) - kept.base;
      auto const [p, dp] = kept.predecessors(rows, i, j, s);
      auto const cell = tangent_cell<Dir::reads_entropy || Dir::keeps_entropy>(
          m.smooth, dir, opaque_step(m.cost, x, y, i, j), p, dp, i, j);
      kept.r[s] = cell.value;
      kept.dr[s] = cell.tangent;
      if constexpr (Dir::keeps_entropy) kept.h[s] = cell_entropy(cell, kept.entropies(rows, i, j, s));
      if (weights) kept.weights[s] = cell.weights;
    }
  }
}

/// tangent_pass with the rows along x as given (segments of x's rows).
template <class T, class Cost, class Smooth, class Dir>
T oriented_tangent_pass(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                        Dir const& dir, series_view<T> gx, series_view<T> gy, T seed, T* value_out,
                        tangent_limits const& limits, tangent_workspace<T>& ws) {
  static_assert(Dir::differentiable, "this direction has no backward");
  index_t const n = x.length, k = y.length;
  band_geometry const band = m.band.geometry(n, k);
  T const inf = math::infinity<T>();
  band_rows const rows(band, n);
  // rows [g every, (g + 1) every) form segment g; one segment holds the whole table
  constexpr std::size_t arrays = Dir::keeps_entropy ? 3 : 2;  // R, R' and H
  bool const whole = rows.size * (arrays * sizeof(T)) <= limits.table_bytes;
  index_t const every = whole ? n : ceil_sqrt(n);
  index_t const segments = (n + every - 1) / every;
  auto const first_of = [&](index_t g) { return g * every; };
  auto const last_of = [&](index_t g) { return std::min(n, (g + 1) * every); };
  std::size_t slots = 0;  // of the largest segment, its row above included
  for (index_t g = 0; g < segments; ++g)
    slots = std::max(slots, rows.row_end(last_of(g) - 1) - rows.row_begin(first_of(g) - 1));
  tangent_rows<T>& kept = ws.kept;
  kept.r.resize(slots);
  kept.dr.resize(slots);
  if constexpr (Dir::keeps_entropy) kept.h.resize(slots);
  bool const keep = slots * sizeof(step3<T>) <= limits.keep_bytes;
  if (keep) kept.weights.resize(slots);
  // the row above each segment after the first (R, then R', then H), as the forward leaves it
  std::vector<std::size_t>& saved_at = ws.saved_at;
  saved_at.assign(static_cast<std::size_t>(segments) + 1, 0);
  for (index_t g = 1; g < segments; ++g) {
    index_t const above = first_of(g) - 1;
    saved_at[static_cast<std::size_t>(g + 1)] =
        saved_at[static_cast<std::size_t>(g)] + arrays * (rows.row_end(above) - rows.row_begin(above));
  }
  std::vector<T>& saved = ws.saved;
  saved.resize(saved_at.back());
  // rows [first_of(g), last_of(g)) from the row above them: the origin row, or the saved one
  auto const forward_segment = [&](index_t g, bool weights) {
    index_t const above = first_of(g) - 1;
    kept.base = rows.row_begin(above);
    std::size_t const width = rows.row_end(above) - kept.base;
    auto const w = static_cast<std::ptrdiff_t>(width);
    if (g == 0) {
      std::fill(kept.r.begin(), kept.r.begin() + w, inf);
      std::fill(kept.dr.begin(), kept.dr.begin() + w, T(0));
      if constexpr (Dir::keeps_entropy) std::fill(kept.h.begin(), kept.h.begin() + w, T(0));
      kept.r[rows.slot(-1, -1) - kept.base] = T(0);  // the origin
    } else {
      auto const from = saved.begin() + static_cast<std::ptrdiff_t>(saved_at[static_cast<std::size_t>(g)]);
      std::copy(from, from + w, kept.r.begin());
      std::copy(from + w, from + 2 * w, kept.dr.begin());
      if constexpr (Dir::keeps_entropy) std::copy(from + 2 * w, from + 3 * w, kept.h.begin());
    }
    tangent_forward_rows(m, x, y, dir, band, rows, first_of(g), last_of(g), kept, weights && keep);
  };
  for (index_t g = 0; g < segments; ++g) {
    forward_segment(g, g + 1 == segments);  // the backward recomputes the others' weights
    if (g + 1 == segments) break;
    index_t const below = last_of(g) - 1;  // the row above segment g + 1
    auto const from = static_cast<std::ptrdiff_t>(rows.row_begin(below) - kept.base);
    auto const width = static_cast<std::ptrdiff_t>(rows.row_end(below) - rows.row_begin(below));
    auto const to = saved.begin() + static_cast<std::ptrdiff_t>(saved_at[static_cast<std::size_t>(g + 1)]);
    std::copy(kept.r.begin() + from, kept.r.begin() + from + width, to);
    std::copy(kept.dr.begin() + from, kept.dr.begin() + from + width, to + width);
    if constexpr (Dir::keeps_entropy) std::copy(kept.h.begin() + from, kept.h.begin() + from + width, to + 2 * width);
  }
  std::size_t const last = rows.slot(n - 1, k - 1) - kept.base;
  T const value = kept.r[last];
  T const tangent = kept.dr[last];
  if (value_out) *value_out = value;
  if (!(value < inf)) return T(0);  // no alignment: E = 0

  // the step costs are needed again to recompute the weights, or as the candidates' tangents
  bool const need_costs = !keep || Dir::scales_costs;
  // A and A' of rows i (cur) and i - 1 (prev), filled by the moves out of later cells
  std::vector<T>&a_cur = ws.a_cur, &da_cur = ws.da_cur, &a_prev = ws.a_prev, &da_prev = ws.da_prev;
  for (std::vector<T>* row : {&a_cur, &da_cur, &a_prev, &da_prev}) row->assign(static_cast<std::size_t>(k), T(0));
  a_cur[static_cast<std::size_t>(k - 1)] = T(1);
  for (index_t g = segments - 1; g >= 0; --g) {
    if (g + 1 < segments) forward_segment(g, true);  // the last one is still in place
    for (index_t i = last_of(g) - 1; i >= first_of(g); --i) {
      index_range const cols = band.row(i);
      if (i > 0) {
        // row i adds into row i - 1's columns [lo_i - 1, hi_i], which then reads [lo, hi] of
        // its own: clear those alone (the whole row made a narrow band O(n k), quadratic)
        index_range const above = band.row(i - 1);
        auto const lo = static_cast<std::ptrdiff_t>(std::max<index_t>(0, std::min(cols.lo - 1, above.lo)));
        auto const hi = static_cast<std::ptrdiff_t>(std::max(cols.hi, above.hi)) + 1;
        if (lo < hi) {
          std::fill(a_prev.begin() + lo, a_prev.begin() + hi, T(0));
          std::fill(da_prev.begin() + lo, da_prev.begin() + hi, T(0));
        }
      }
      for (index_t j = cols.hi; j >= cols.lo; --j) {
        auto const u = static_cast<std::size_t>(j);
        T const a = a_cur[u], da = da_cur[u];
        if (a == T(0) && da == T(0)) continue;  // off every alignment: nothing flows back
        std::size_t const s = rows.slot(i, j) - kept.base;
        auto const [p, dp] = kept.predecessors(rows, i, j, s);
        step3<T> const c = need_costs ? opaque_step(m.cost, x, y, i, j) : step3<T>{};
        step3<T> const w = keep ? kept.weights[s] : cell_weights(m.smooth, c, p.diag, p.up, p.left);
        step3<T> dw;
        if constexpr (Dir::keeps_entropy)
          dw = m.smooth.weights_tangent_along_costs(
              w, cell_candidates(c, p.diag, p.up, p.left), kept.entropies(rows, i, j, s));
        else
          dw = m.smooth.weights_tangent(w, candidate_tangents<Dir>(dp, c));
        step3<T> const use{a * w.diag, a * w.up, a * w.left};
        step3<T> const duse{da * w.diag + a * dw.diag, da * w.up + a * dw.up, da * w.left + a * dw.left};
        if (i > 0 && j > 0) { a_prev[u - 1] += use.diag; da_prev[u - 1] += duse.diag; }
        if (i > 0) { a_prev[u] += use.up; da_prev[u] += duse.up; }
        if (j > 0) { a_cur[u - 1] += use.left; da_cur[u - 1] += duse.left; }
        // the costs' own factor 1 + t adds the first-order usage along costs
        step3<T> const gu = Dir::scales_costs
                                ? step3<T>{duse.diag + use.diag, duse.up + use.up, duse.left + use.left}
                                : duse;
        m.cost.step_grad(x, y, i, j, step3<T>{seed * gu.diag, seed * gu.up, seed * gu.left}, gx, gy);
      }
      std::swap(a_cur, a_prev);
      std::swap(da_cur, da_prev);
    }
  }
  return tangent;  // L = R'(n-1, m-1), the derivative of S along dir
}

/// The tangent L = R'(n-1, m-1) along dir of one pair, adding seed dL/dx to gx and seed dL/dy to
/// gy; S(x, y) to *value_out when it is not null. Inputs are validated by the caller. The rows
/// run along the longer series (the problem transposed when y is longer, as tangent_value's
/// callers orient it; hard measures' ties mirrored there, so that they pick value_and_grad's
/// moves): the segments cut the longer series, and the value is tangent_value's, bit for bit.
/// What the pass keeps follows `limits` (tangent_limits); a direction's offset is read once for
/// each cell inside the band by the forward, and once more where a segment is recomputed.
template <class T, class Cost, class Smooth, class Dir>
T tangent_pass(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
               Dir const& dir, series_view<T> gx, series_view<T> gy, T seed, T* value_out,
               tangent_limits const& limits = {}, tangent_workspace<T>* workspace = nullptr) {
  tangent_workspace<T> local;
  tangent_workspace<T>& ws = workspace ? *workspace : local;
  if (y.length <= x.length) return oriented_tangent_pass(m, x, y, dir, gx, gy, seed, value_out, limits, ws);
  return dir.transposed_to([&](auto const& along) {
    return oriented_tangent_pass(tie_preserving_transposed(m), y, x, along, gy, gx, seed, value_out, limits, ws);
  });
}

/// expected_penalty of one pair and channel: tangent_pass along omega.
template <class T, class Cost, class Smooth, class Omega>
T expected_penalty(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                   Omega const& omega, series_view<T> gx, series_view<T> gy, T seed, T* value_out,
                   tangent_limits const& limits = {}, tangent_workspace<T>* ws = nullptr) {
  return tangent_pass(m, x, y, along_offsets<Omega>{omega}, gx, gy, seed, value_out, limits, ws);
}

/// expected_penalty of any measure: for independent channels (several), the sum over the
/// channels of each one's L with its own alignment (and S the sum of theirs, the measure's value).
/// ws: buffers to reuse (null: the call's own).
template <class T, class Cost, class Smooth, class Omega>
T expected_penalty_of(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                      Omega const& omega, series_view<T> gx, series_view<T> gy, T seed, T* value_out,
                      tangent_workspace<T>* ws = nullptr) {
  if (!m.independent_channels || x.channels == 1)
    return expected_penalty(m, x, y, omega, gx, gy, seed, value_out, {}, ws);
  auto const one = m.single_channel();
  std::vector<T> buffer;
  T value = T(0);
  T const penalty = sum_over_channels(x, y, gx, gy, buffer, [&](auto xc, auto yc, auto gxc, auto gyc) {
    T s = T(0);
    T const l = expected_penalty(one, xc, yc, omega, gxc, gyc, seed, &s, {}, ws);
    value += s;
    return l;
  });
  if (value_out) *value_out = value;
  return penalty;
}

}  // namespace resilin::host_detail

#pragma once
// The second-order pass of one pair on the host (forward over reverse). Add a per-cell offset
// theta(i, j) to every R(i, j) of the recursion; then dS/dtheta(i, j) = A(i, j) is the alignment
// matrix E, and L = sum_ij E(i, j) Omega(i, j) is the derivative of S along theta' = Omega. The
// gradient of L with respect to the step costs is the tangent, along Omega, of their gradient
// (the move usages A(i, j) w_k(i, j)): one forward of R and its tangent
//     R'(i, j) = sum_k w_k(i, j) R'(pred_k) + Omega(i, j)
// then one backward of A and its tangent
//     U_k = A w_k,  U'_k = A' w_k + A w'_k,  A(pred_k) += U_k,  A'(pred_k) += U'_k,
// with w' the smoothing's weights_tangent along the candidates' tangents R'(pred_k) (the step
// costs do not move). The usages' tangents U' pulled back through the cost model's step_grad
// give dL/dx and dL/dy. For soft-DTW theta and the cost matrix Delta enter alike, so this is the
// Hessian-vector product of S(Delta) with Omega of spec/softdtw.md §3.9, pulled back to the
// series. Scalar and row-major: it keeps R and R' for the cells of the band (two values per cell,
// with a border; band_rows; no checkpointing), the move weights where they fit (three more), and
// A, A' in two rows.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>
#include <resilin/backend/host/pair.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

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
      index_t const lo = i < 0 ? 0 : band.row(i).lo;
      index_t const below = band.row(i + 1 < n ? i + 1 : i).hi;
      index_t const top = i < 0 ? below : std::max(band.row(i).hi, below);
      offset[static_cast<std::size_t>(i + 1)] = size;
      first[static_cast<std::size_t>(i + 1)] = lo - 1;
      size += static_cast<std::size_t>(top - lo + 2);
    }
  }
  std::size_t slot(index_t i, index_t j) const noexcept {
    auto const row = static_cast<std::size_t>(i + 1);
    return offset[row] + static_cast<std::size_t>(j - first[row]);
  }
};

/// L = sum_ij E(i, j) omega(i, j) of one pair, adding seed dL/dx to gx and seed dL/dy to gy;
/// S(x, y) to *value_out when it is not null. omega(i, j) is read once for each cell inside the
/// band, by the forward: L is the tangent's final value.
/// Inputs are validated by the caller (expected_penalty in alignment.hpp). The forward's move
/// weights are kept for the backward while they take at most keep_bytes (1.5x faster for
/// soft-DTW), else recomputed there: the same bits either way.
template <class T, class Cost, class Smooth, class Omega>
T expected_penalty(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                   Omega const& omega, series_view<T> gx, series_view<T> gy, T seed, T* value_out,
                   std::size_t keep_bytes = kept_table_bytes) {
  index_t const n = x.length, k = y.length;
  band_geometry const band = band_geometry::make(n, k, m.band.radius_for(n, k));
  T const inf = math::infinity<T>();
  band_rows const rows(band, n);
  std::vector<T> r(rows.size, inf), dr(rows.size, T(0));
  r[rows.slot(-1, -1)] = T(0);  // the origin
  bool const keep = rows.size * sizeof(step3<T>) <= keep_bytes;
  std::vector<step3<T>> kept(keep ? rows.size : 0);
  // the candidates' predecessor values and their tangents into (i, j), whose slot is s
  auto const predecessors = [&](index_t i, index_t j, std::size_t s) {
    std::size_t const up = rows.slot(i - 1, j);
    return std::pair{step3<T>{r[up - 1], r[up], r[s - 1]}, step3<T>{dr[up - 1], dr[up], dr[s - 1]}};
  };

  for (index_t i = 0; i < n; ++i) {
    index_range const cols = band.row(i);
    for (index_t j = cols.lo; j <= cols.hi; ++j) {
      std::size_t const s = rows.slot(i, j);
      auto const [p, dp] = predecessors(i, j, s);
      auto const vw = cell_value_and_weights(m.smooth, m.cost.step(x, y, i, j), p.diag, p.up, p.left);
      r[s] = vw.value;
      if (keep) kept[s] = vw.weights;
      if (vw.value < inf)  // an unreachable cell keeps R' = 0
        dr[s] = (vw.weights.diag * dp.diag + vw.weights.up * dp.up + vw.weights.left * dp.left) +
                static_cast<T>(omega(i, j));
    }
  }
  std::size_t const last = rows.slot(n - 1, k - 1);
  T const value = r[last];
  if (value_out) *value_out = value;
  if (!(value < inf)) return T(0);  // no alignment: E = 0

  // A and A' of rows i (cur) and i - 1 (prev), filled by the moves out of later cells
  std::vector<T> a_cur(static_cast<std::size_t>(k), T(0)), da_cur(a_cur), a_prev(a_cur), da_prev(a_cur);
  a_cur[static_cast<std::size_t>(k - 1)] = T(1);
  for (index_t i = n - 1; i >= 0; --i) {
    std::fill(a_prev.begin(), a_prev.end(), T(0));
    std::fill(da_prev.begin(), da_prev.end(), T(0));
    index_range const cols = band.row(i);
    for (index_t j = cols.hi; j >= cols.lo; --j) {
      auto const u = static_cast<std::size_t>(j);
      T const a = a_cur[u], da = da_cur[u];
      if (a == T(0) && da == T(0)) continue;  // off every alignment: nothing flows back
      std::size_t const s = rows.slot(i, j);
      auto const [p, dp] = predecessors(i, j, s);
      step3<T> const w = keep ? kept[s] : cell_weights(m.smooth, m.cost.step(x, y, i, j), p.diag, p.up, p.left);
      step3<T> const dw = m.smooth.weights_tangent(w, dp);
      step3<T> const use{a * w.diag, a * w.up, a * w.left};
      step3<T> const duse{da * w.diag + a * dw.diag, da * w.up + a * dw.up, da * w.left + a * dw.left};
      if (i > 0 && j > 0) { a_prev[u - 1] += use.diag; da_prev[u - 1] += duse.diag; }
      if (i > 0) { a_prev[u] += use.up; da_prev[u] += duse.up; }
      if (j > 0) { a_cur[u - 1] += use.left; da_cur[u - 1] += duse.left; }
      m.cost.step_grad(x, y, i, j, step3<T>{seed * duse.diag, seed * duse.up, seed * duse.left}, gx, gy);
    }
    std::swap(a_cur, a_prev);
    std::swap(da_cur, da_prev);
  }
  return dr[last];  // L = R'(n-1, m-1), the derivative of S along Omega
}

/// expected_penalty of any measure: for independent channels (several), the sum over the
/// channels of each one's L with its own alignment (and S the sum of theirs, the measure's value).
template <class T, class Cost, class Smooth, class Omega>
T expected_penalty_of(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                      Omega const& omega, series_view<T> gx, series_view<T> gy, T seed, T* value_out) {
  if (!m.independent_channels || x.channels == 1)
    return expected_penalty(m, x, y, omega, gx, gy, seed, value_out);
  auto const one = m.single_channel();
  std::vector<T> buffer;
  T value = T(0);
  T const penalty = sum_over_channels(x, y, gx, gy, buffer, [&](auto xc, auto yc, auto gxc, auto gyc) {
    T s = T(0);
    T const l = expected_penalty(one, xc, yc, omega, gxc, gyc, seed, &s);
    value += s;
    return l;
  });
  if (value_out) *value_out = value;
  return penalty;
}

}  // namespace resilin::host_detail

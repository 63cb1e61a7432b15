#pragma once
// Soft-DTW values and gradients of many short pairs in lock-step: one pair per SIMD lane, as
// lockstep.hpp runs their values. The strips (exp_domain.hpp, exp_domain_grad.hpp) pay a skew
// of H - 1 steps per strip of H rows (32 in double, 64 in float with AVX-512), which for short
// series is most of the work (an 8 x 8 pair ran 39 steps of 4 vectors for 64 cells), plus a
// fixed cost per pair; here every lane computes the same cell of its own pair.
// The forward keeps every cell's state P = m 2^k (a table of (n + 1)(m + 1) K states, up to
// lockstep_training_table_bytes); the backward walks the rows up and each row right to left,
// forms each cell's adjoint from the shares its successors passed back, and splits it among
// its predecessors with the strips' exp_move_shares. Its sums run in the strips' order: a
// cell's adjoint (up + left) + diag, x_i's gradient over j descending, y_j's over i
// descending, each added to the caller's buffers as the strips add theirs, so a pair's value
// and gradients do not depend on which traversal ran it: bit for bit equal.
#include <cstddef>
#include <vector>
#include <resilin/backend/host/exp_domain.hpp>
#include <resilin/backend/host/exp_domain_grad.hpp>
#include <resilin/backend/host/lockstep.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

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

/// Values S(x_g, y_g) of a group into out[g], and for every g with trained[g] (the value is
/// finite and exp_domain_accurate, as the single-pair training asks) seed_g dS/dx_g added to gx_g
/// and seed_g dS/dy_g to gy_g. The others' gradients are left untouched, for the caller to train
/// them one at a time. Pairs as in lockstep_values, every one in the exponential domain.
template <class T, class Distance>
void lockstep_values_and_grads(oriented_training_pair<T> const* pairs, band_geometry const& band,
                               lockstep_soft_cell<T> const& cell, T* out, bool* trained,
                               lockstep_workspace<T>& ws) {
  using V = simd::pack<T>;
  using S = exp_value<T>;
  constexpr int W = V::width, K = lockstep_vectors<T>, G = K * W;
  index_t const n = pairs[0].x.length, m = pairs[0].y.length, d = pairs[0].x.channels;
  interleave_group(pairs, ws);
  // the forward, every row kept: row i (from -1) at (i + 1)(m + 1) K
  auto const row_size = static_cast<std::size_t>((m + 1) * K);
  ws.table.resize(static_cast<std::size_t>(n + 1) * row_size);
  S* const table = ws.table.data();
  std::fill(table, table + row_size, lockstep_soft_cell<T>::unreachable());
  for (int q = 0; q < K; ++q) table[q] = lockstep_soft_cell<T>::origin();
  auto const row = [&](index_t i) { return table + static_cast<std::size_t>(i + 1) * row_size; };
  lockstep_forward<T, Distance, true>(n, m, d, band, cell, ws, row);
  for (int g = 0; g < G; ++g) {
    out[g] = cell.result(row(n - 1)[m * K + g / W], g % W);
    trained[g] = out[g] < math::infinity<T>() && exp_domain_accurate(out[g], cell.gamma, n, m);
  }

  // the backward: g_up[j], g_diag[j] hold the shares that cell (i + 1, j) passed up and
  // diagonally (0 outside the band and past the last row), column m the zero beyond
  V const zero(T(0));
  ws.g_up.assign(static_cast<std::size_t>((m + 1) * K), zero);
  ws.g_diag.assign(static_cast<std::size_t>((m + 1) * K), zero);
  ws.gy.assign(static_cast<std::size_t>(m * d * K), zero);
  ws.gx_row.resize(static_cast<std::size_t>(d * K));
  V* const g_up = ws.g_up.data();
  V* const g_diag = ws.g_diag.data();
  V* const gy = ws.gy.data();
  V* const gx = ws.gx_row.data();
  V const* const xs = ws.xs.data();
  V const* const ys = ws.ys.data();
  V seeds[K];
  for (int g = 0; g < G; ++g) seeds[g / W].set(g % W, pairs[g].seed);
  index_t below_hi = -1;  // the last column of the row below (none below the last row)
  for (index_t i = n - 1; i >= 0; --i) {
    index_range const r = band.row(i);
    S const* const here = row(i);
    S const* const above = row(i - 1);
    V const* const xi = xs + i * d * K;
    for (index_t u = 0; u < d * K; ++u) gx[u] = zero;
    V left[K], carry[K];  // the share cell (i, j + 1) passed left; g_diag of (i + 1, j + 1)
    for (int q = 0; q < K; ++q) {
      left[q] = zero;
      carry[q] = g_diag[(r.hi + 1) * K + q];
    }
    for (index_t j = r.hi; j >= r.lo; --j) {
      V const* const yj = ys + j * d * K;
RESILIN_UNROLL(8)
      for (int q = 0; q < K; ++q) {
        auto const at = static_cast<std::size_t>(j * K + q);
        V const diag_below = carry[q];
        carry[q] = g_diag[at];
        V a = g_up[at] + left[q] + diag_below;
        if (i == n - 1 && j == m - 1) a = a + seeds[q];
        auto const cell_at = static_cast<std::size_t>((j + 1) * K + q);
        step3<V> const shares = exp_move_shares<T>(above[cell_at - K], above[cell_at], here[cell_at - K], a);
        g_diag[at] = shares.diag;
        g_up[at] = shares.up;
        left[q] = shares.left;
RESILIN_UNROLL(4)
        for (index_t c = 0; c < d; ++c) {
          auto const u = static_cast<std::size_t>(c * K + q);
          V const part = a * Distance::partial(xi[u], yj[u]);
          gx[u] += part;
          gy[j * d * K + u] = gy[j * d * K + u] - part;
        }
      }
    }
    // columns the row below had past this row's band are no cells of this row
    for (index_t j = r.hi + 1; j <= below_hi; ++j)
      for (int q = 0; q < K; ++q) g_up[j * K + q] = g_diag[j * K + q] = zero;
    below_hi = r.hi;
    for (int g = 0; g < G; ++g) {
      if (!trained[g]) continue;
      for (index_t c = 0; c < d; ++c) pairs[g].gx(i, c) += gx[c * K + g / W][g % W];
    }
  }
  for (int g = 0; g < G; ++g) {
    if (!trained[g]) continue;
    for (index_t j = 0; j < m; ++j)
      for (index_t c = 0; c < d; ++c) pairs[g].gy(j, c) += gy[(j * d + c) * K + g / W][g % W];
  }
}

}  // namespace resilin::host_detail

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

/// Values S(x_g, y_g) of a group into out[g], and for every g with trained[g] (the value is
/// finite and exp_domain_accurate, as the single-pair training asks) seed_g dS/dx_g added to gx_g
/// and seed_g dS/dy_g to gy_g. The others' gradients are left untouched, for the caller to train
/// them one at a time. Pairs as in lockstep_values (a ragged group's too: each pair's value is
/// its own last cell's, its backward seeded there, lockstep_adjoint_sweep), every one in the
/// exponential domain.
template <class T, class Distance>
void lockstep_values_and_grads(oriented_training_pair<T> const* pairs, band_geometry const& band,
                               lockstep_soft_cell<T> const& cell, T* out, bool* trained,
                               lockstep_workspace<T>& ws) {
  using V = simd::pack<T>;
  using S = exp_value<T>;
  constexpr int W = V::width, K = lockstep_vectors<T>, G = K * W;
  group_extent const extent = group_extent::of(pairs, G);
  index_t const n = extent.n, m = extent.m, d = pairs[0].x.channels;
  interleave_group(pairs, ws);
  // the forward, every row kept: row i (from -1) at (i + 1)(m + 1) K
  auto const row_size = static_cast<std::size_t>((m + 1) * K);
  resize_exactly(ws.table, static_cast<std::size_t>(n + 1) * row_size);
  S* const table = ws.table.data();
  std::fill(table, table + row_size, lockstep_soft_cell<T>::unreachable());
  for (int q = 0; q < K; ++q) table[q] = lockstep_soft_cell<T>::origin();
  auto const row = [&](index_t i) { return table + static_cast<std::size_t>(i + 1) * row_size; };
  lockstep_forward<T, true>(n, m, band, lockstep_soft_cell<T>::unreachable(), row,
                            lockstep_dtw_cells<T, Distance, lockstep_soft_cell<T>>{cell, ws.xs.data(), ws.ys.data(), d});
  for (int g = 0; g < G; ++g) {
    index_t const ng = pairs[g].x.length, mg = pairs[g].y.length;
    out[g] = cell.result(row(ng - 1)[mg * K + g / W], g % W);
    trained[g] = out[g] < math::infinity<T>() && exp_domain_accurate(out[g], cell.gamma, ng, mg);
  }

  // the backward: each cell's shares from the states its sum was formed of (exp_move_shares),
  // its adjoint times the distance's partials summed for x_i (per row) and y_j
  V const zero(T(0));
  ws.gy.assign(static_cast<std::size_t>(m * d * K), zero);
  ws.gx_row.resize(static_cast<std::size_t>(d * K));
  struct cells_t {
    oriented_training_pair<T> const* pairs;
    bool const* trained;
    S const* table;  // row i at (i + 1) row_size
    std::size_t row_size;
    V const* xs;
    V const* ys;
    V* gx;
    V* gy;
    index_t d;
    void begin_row(index_t) noexcept {
      for (index_t u = 0; u < d * K; ++u) gx[u] = V(T(0));
    }
    RESILIN_INLINE step3<V> cell(index_t i, index_t j, int q, V a) noexcept {
      auto const at = static_cast<std::size_t>((j + 1) * K + q);
      S const* const here = table + static_cast<std::size_t>(i + 1) * row_size;
      S const* const above = here - row_size;
      step3<V> const shares = exp_move_shares<T>(above[at - K], above[at], here[at - K], a);
      V const* const xi = xs + i * d * K;
      V const* const yj = ys + j * d * K;
RESILIN_UNROLL(4)
      for (index_t c = 0; c < d; ++c) {
        auto const u = static_cast<std::size_t>(c * K + q);
        V const part = a * Distance::partial(xi[u], yj[u]);
        gx[u] += part;
        gy[j * d * K + u] = gy[j * d * K + u] - part;
      }
      return shares;
    }
    void end_cell(index_t, index_t) noexcept {}
    void end_row(index_t i) noexcept {
      for (int g = 0; g < G; ++g) {
        if (!trained[g] || i >= pairs[g].x.length) continue;
        for (index_t c = 0; c < d; ++c) pairs[g].gx(i, c) += gx[c * K + g / W][g % W];
      }
    }
  };
  lockstep_adjoint_sweep<T>(pairs, band, ws,
                            cells_t{pairs, trained, table, row_size, ws.xs.data(), ws.ys.data(), ws.gx_row.data(),
                                    ws.gy.data(), d});
  add_lane_gradients_y(pairs, trained, ws.gy.data());
}

}  // namespace resilin::host_detail

#pragma once
// The backward of soft-DTW in the exponential domain (see exp_domain.hpp). The move from a
// predecessor into (i, j) has weight
//     P(pred) exp(-delta(i, j) / gamma) / P(i, j) = term(pred) / (term_diag + term_up + term_left),
// term = m_pred * 2^(k_pred - k_max): the factor exp(-delta / gamma) cancels, so the backward
// needs no exponential, no logarithm and no step cost, only one division per cell, and it
// recomputes the weights from the very terms the forward summed. A uniform step cost needs only
// the adjoint A(i, j) of each cell for its gradient.
// Memory: the forward keeps only the band's part of the row above each strip (exp_rows); going
// up the strips, the backward recomputes one strip's P from it into a strip-sized buffer (in
// cache) and sweeps it.
// That costs a second forward but avoids writing and reading a whole-grid table, whose fresh
// pages cost more than the recomputation. Where even those slots would be large (pair.hpp:
// checkpoint_rows_bytes), the forward keeps every k-th of them (k about sqrt(n / H)) and the
// backward recomputes the slots of k strips at a time first: a third forward, about
// 2 sqrt(n / H) slots held, the same bits.
#include <array>
#include <cstddef>
#include <vector>
#include <resilin/backend/host/exp_domain.hpp>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/row_slices.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/backend/host/table_buffer.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// The shares of a cell's adjoint a that its moves pass back to its predecessors d, u and l
/// (states of P = m 2^k): a times each move's weight, the predecessor's term of exp_cell's sum
/// over that sum (the cell factor cancels). One function for the strips' and the lock-step
/// groups' backward, so that both give the same bits.
template <class T>
RESILIN_INLINE step3<simd::pack<T>> exp_move_shares(exp_value<T> const& d, exp_value<T> const& u,
                                                    exp_value<T> const& l, simd::pack<T> a) noexcept {
  using V = simd::pack<T>;
  V const km = simd::max(d.k, simd::max(u.k, l.k));
  V const td = d.m * pow2_int(d.k - km), tu = u.m * pow2_int(u.k - km), tl = l.m * pow2_int(l.k - km);
  V const r = a / (td + (tu + tl));  // the same sum as exp_cell: weights sum to 1
  return {td * r, tu * r, tl * r};
}

/// Two levels (rows.every = k > 1): the slots above strips s0..s1 of one segment into
/// rows.segment_*, recomputed from the kept slot above s0 with the forward's bits (each strip
/// from its slot restored into the rolling row).
template <class T, class P, class Lanes>
void recompute_exp_segment(P const& p, Lanes& lanes, exp_rows<T>& rows, index_t s0, index_t s1) {
  constexpr int K = strip_vectors<T>, H = K * simd::pack<T>::width;
  strip_row_slices<T> const& slices = rows.slices;
  auto const size = static_cast<std::size_t>(slices.span(s0, s1 + 1));
  rows.segment_m.resize(size);
  rows.segment_k.resize(size);
  rows.segment_first = s0;
  auto const head = static_cast<std::size_t>(slices.kept_offset(s0));
  auto const width = static_cast<std::size_t>(slices.width(s0));
  std::copy(rows.m.begin() + head, rows.m.begin() + head + width, rows.segment_m.begin());
  std::copy(rows.k.begin() + head, rows.k.begin() + head + width, rows.segment_k.begin());
  T const scale = exp_domain_scale<T>(p.smooth);
  for (index_t s = s0; s < s1; ++s) {
    lanes.begin_strip(s * H);
    auto const a = static_cast<std::size_t>(slices.span(s0, s)), b = static_cast<std::size_t>(slices.span(s0, s + 1));
    slices.restore(s, rows.segment_m.data() + a, rows.roll_m.data());
    slices.restore(s, rows.segment_k.data() + a, rows.roll_k.data());
    exp_value<T> last[K];
    exp_forward_strip(lanes, strip_geometry<T>(p.band, p.x.length, s * H), scale, rows.roll_m.data(),
                      rows.roll_k.data(), static_cast<simd::pack<T>*>(nullptr), last);
    slices.keep(s + 1, rows.roll_m.data(), rows.segment_m.data() + b, T(1));
    slices.keep(s + 1, rows.roll_k.data(), rows.segment_k.data() + b, unreachable_k<T>);
  }
}

/// Adds seed * dR(n-1, m-1)/dx to gx and seed * dR(n-1, m-1)/dy to gy from the rows that
/// forward_exp_domain(..., keep_every > 0) kept for the same problem (lanes: dtw_lane_cost).
/// With `whole`, that forward also stored the whole table in strip_cells (small problems,
/// where it stays in cache), and no strip is recomputed.
template <class T, class P, class Lanes>
void backward_exp_domain(P const& p, exp_rows<T>& rows, table_buffer<simd::pack<T>>& strip_cells,
                         bool whole, T seed, Lanes& lanes, std::vector<T>& g_up,
                         std::vector<T>& g_diag, series_view<T> gx, series_view<T> gy) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  index_t const n = p.x.length, m = p.y.length;
  // g_up[j + H] = G.up(i0 + H, j), g_diag[j + H] = G.diag(i0 + H, j): the row below the strip.
  g_up.assign(static_cast<std::size_t>(m + 2 * H + 2), T(0));
  g_diag.assign(static_cast<std::size_t>(m + 2 * H + 2), T(0));
  auto const col = [](index_t j) { return static_cast<std::size_t>(j + H); };
  index_t const strips = (n + H - 1) / H;
  lanes.begin_pair(p.cost, p.x, p.y, gx, gy);
  V const zero(T(0));
  T const scale = exp_domain_scale<T>(p.smooth);
  index_t offset = whole ? exp_table_packs<T>(p.band, n) : 0;  // past the strip below
  rows.segment_first = -1;
  for (index_t s = strips - 1; s >= 0; --s) {
    index_t const i0 = s * H;
    strip_geometry<T> const geo(p.band, n, i0);
    if (rows.every > 1 && (rows.segment_first < 0 || s < rows.segment_first))
      recompute_exp_segment(p, lanes, rows, s / rows.every * rows.every, s);  // s ends a segment
    lanes.begin_strip(i0);
    // P(i0 - 1, j) at the row index j + 1 of the slot (unreachable beyond it: only lanes out of
    // the band read there)
    std::array<row_slot<T>, 2> const slot = rows.slot(s);
    row_slot<T> const above_m = slot[0], above_k = slot[1];
    index_t const packs = exp_strip_packs(geo);
    offset -= whole ? packs : 0;
    V* const cells = whole ? strip_cells.data() + offset
                           : strip_cells.reserve(static_cast<std::size_t>(packs));
    if (!whole) {  // the strip again, as the forward computed it, from its slot in the rolling row
      rows.slices.restore(s, above_m.data, rows.roll_m.data());
      rows.slices.restore(s, above_k.data, rows.roll_k.data());
      exp_value<T> last[K];
      exp_forward_strip(lanes, geo, scale, rows.roll_m.data(), rows.roll_k.data(), exp_pad_strip(cells), last);
    }
    // step t >= t0 - 2 at cells + (t - t0 + 2) * 2K (the two before t0 unreachable)
    V const* const cells_t0 = cells + 4 * K;
    int const seed_o = static_cast<int>(n - 1 - i0);
    index_t const seed_t = seed_o < H ? (m - 1) + seed_o : -1;
    V* const adj = gx.data ? lanes.adjoint_buffer(geo.t1 - geo.t0 + 1) : nullptr;
    V gu1[K], gl1[K], gd1[K], gd2[K];  // G at steps t+1 and t+2
    for (int q = 0; q < K; ++q) gu1[q] = gl1[q] = gd1[q] = gd2[q] = zero;
    geo.template for_each_step<true>([&](index_t t, auto masked) __attribute__((always_inline)) {
      V const* const r1 = cells_t0 + (t - 1 - geo.t0) * 2 * K;  // left; up of the lane below
      V const* const r2 = r1 - 2 * K;                           // diag of the lane below
      T const am1 = above_m.at(t + 1, T(1)), ak1 = above_k.at(t + 1, unreachable_k<T>);
      T const am2 = above_m.at(t, T(1)), ak2 = above_k.at(t, unreachable_k<T>);
      V gd[K], gu[K], gl[K];
RESILIN_UNROLL(16)
      for (int q = 0; q < K; ++q) {
        if constexpr (decltype(masked)::value) {
          if (geo.idle(q, t)) {  // every lane out of the band: zero adjoints and moves, as below
            gd[q] = gu[q] = gl[q] = zero;
            if (adj) adj[(t - geo.t0) * K + q] = zero;
            continue;
          }
        }
        V const below_up = q + 1 < K ? gu1[q + 1] : V(g_up[col(t - H + 1)]);
        V const below_diag = q + 1 < K ? gd2[q + 1] : V(g_diag[col(t - H + 2)]);
        V a = simd::shift_in_back(gu1[q], below_up) + gl1[q] + simd::shift_in_back(gd2[q], below_diag);
        if (t == seed_t && seed_o / W == q) a.set(seed_o % W, a[seed_o % W] + seed);
        if constexpr (decltype(masked)::value) a = simd::select(geo.inside(q, geo.step(t)), a, zero);
        V const lm = r1[q], lk = r1[K + q];
        V const um = simd::shift_in_front(lm, q == 0 ? V(am1) : r1[q - 1]);
        V const uk = simd::shift_in_front(lk, q == 0 ? V(ak1) : r1[K + q - 1]);
        V const dm = simd::shift_in_front(r2[q], q == 0 ? V(am2) : r2[q - 1]);
        V const dk = simd::shift_in_front(r2[K + q], q == 0 ? V(ak2) : r2[K + q - 1]);
        step3<V> const shares = exp_move_shares<T>({dm, dk}, {um, uk}, {lm, lk}, a);
        gd[q] = shares.diag;
        gu[q] = shares.up;
        gl[q] = shares.left;
        if (adj) adj[(t - geo.t0) * K + q] = a;
      }
      g_up[col(t)] = gu[0][0];
      g_diag[col(t)] = gd[0][0];
RESILIN_UNROLL(16)
      for (int q = 0; q < K; ++q) {
        gd2[q] = gd1[q];
        gd1[q] = gd[q];
        gu1[q] = gu[q];
        gl1[q] = gl[q];
      }
    });
    if (adj) lanes.accumulate_adjoints(geo.t0, geo.t1, adj);  // the strip's gradient at once
    lanes.end_strip();
  }
  lanes.end_pair();
}

}  // namespace resilin::host_detail

#pragma once
// Soft-MSM values of many equal-shape pairs in lock-step, one pair per SIMD lane, as
// lockstep.hpp runs DTW costs: every lane computes the same cell (i, j) of its own pair. Each
// cell's three step costs come from soft_msm_lane_cost::add_channel, the function the strips
// evaluate their cells with, on the lanes' operands (x_i, x_{i-1}, y_j, y_{j-1} and the
// exponentials of the row's and the column's differences, formed as the strips form theirs),
// and the soft-min is the strips' cell function: a pair's value has the bits of value().
// Only pairs that the strips evaluate unguarded (soft_msm_lane_cost::unguarded) come here.
#include <algorithm>
#include <cstddef>
#include <vector>
#include <resilin/backend/host/lane_cost_soft_msm.hpp>
#include <resilin/backend/host/lockstep.hpp>
#include <resilin/backend/host/packs.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/cost/soft_msm.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

template <class T, class Cost, class Smooth>
inline constexpr bool lockstep_soft_msm_measure = false;
template <class T, class P>
inline constexpr bool lockstep_soft_msm_measure<T, soft_msm_cost<P>, soft_min<T>> = true;

/// Whether the strips evaluate a pair unguarded (the lock-step groups' condition).
template <class T, class P>
bool soft_msm_lockstep_fits(soft_msm_cost<P> const& cost, series_view<T const> x, series_view<T const> y) {
  soft_msm_lane_cost<T, P> lanes;
  lanes.set_parameters(cost);
  return lanes.unguarded(largest_magnitude(x, y));
}

/// The cells of a soft-MSM group (lockstep_forward): the series interleaved as lockstep.hpp
/// holds them, the columns' exponentials e_col ((column, channel, vector), formed once per
/// group) and the row's (begin_row). Partials: the costs also keep their transitions' partials
/// per vector in lanes' partials and diffs, as the strips' costs_and_partials keeps them.
template <class T, class P, bool Partials = false>
struct lockstep_soft_msm_cells {
  using V = simd::pack<T>;
  static constexpr int K = lockstep_vectors<T>;
  soft_msm_lane_cost<T, P>& lanes;
  soft_min<T> smooth;
  V const* xs;
  V const* ys;
  V const* e_col;
  V* e_row;  // (channel, vector) of the current row
  index_t d;

  RESILIN_INLINE V x_at(index_t i, index_t c, int q) const noexcept {
    return i < 0 ? V(T(0)) : xs[(i * d + c) * K + q];  // x_{-1} = 0, as the strips' rows above
  }
  RESILIN_INLINE V y_at(index_t j, index_t c, int q) const noexcept {
    return j < 0 ? V(T(0)) : ys[(j * d + c) * K + q];  // y_{-1} = 0, the strips' padding
  }
  void begin_row(index_t i) noexcept {
    for (index_t c = 0; c < d; ++c)
      for (int q = 0; q < K; ++q) e_row[c * K + q] = lanes.squared_exp(x_at(i, c, q) - x_at(i - 1, c, q));
  }
  using costs_type = step3<V>;
  RESILIN_INLINE step3<V> costs(index_t i, index_t j, int q) const noexcept {
    V sd(T(0)), su(T(0)), sl(T(0));
    for (index_t c = 0; c < d; ++c) {
      V* diff = nullptr;
      transition_partials<V>* pu = nullptr;
      if constexpr (Partials) {
        auto const u = static_cast<std::size_t>(q * d + c);
        diff = &lanes.diffs[u];
        pu = &lanes.partials[2 * u];
      }
      lanes.template add_channel<Partials>(x_at(i, c, q), x_at(i - 1, c, q), y_at(j, c, q), y_at(j - 1, c, q),
                                           e_row[c * K + q], e_col[(j * d + c) * K + q], sd, su, sl, diff, pu,
                                           Partials ? pu + 1 : nullptr);
    }
    return {sd, su, sl};
  }
  /// Two vectors' cells at a time, as one value of two packs (packs.hpp), as the strips' value
  /// forward runs soft-MSM's (the same bits as one at a time).
  RESILIN_INLINE void combine(index_t, index_t, step3<V> const* c, V const* diag, V const* up, V* left) const noexcept {
    using P2 = simd::packs<T, 2>;
    static_assert(K % 2 == 0);
RESILIN_UNROLL(4)
    for (int q = 0; q < K; q += 2) {
      step3<P2> const c2{P2::of(c[q].diag, c[q + 1].diag), P2::of(c[q].up, c[q + 1].up),
                         P2::of(c[q].left, c[q + 1].left)};
      P2 const r = cell_value(smooth, c2, P2::of(diag[q], diag[q + 1]), P2::of(up[q], up[q + 1]),
                              P2::of(left[q], left[q + 1]));
      left[q] = r.v[0];
      left[q + 1] = r.v[1];
    }
  }
};

/// A soft-MSM group's series interleaved (interleave_group), lanes' parameters set from the cost
/// and the columns' exponentials formed, each from y_j - y_{j-1} (y_{-1} = 0) as the strips
/// form theirs.
template <class T, class P, class Pair>
void prepare_soft_msm_group(Pair const* pairs, soft_msm_cost<P> const& cost, soft_msm_lane_cost<T, P>& lanes,
                            lockstep_workspace<T>& ws) {
  using V = simd::pack<T>;
  constexpr int K = lockstep_vectors<T>;
  index_t const m = group_extent::of(pairs, lockstep_pairs<T>).m, d = pairs[0].x.channels;
  interleave_group(pairs, ws);
  lanes.set_parameters(cost);
  ws.e_col.resize(static_cast<std::size_t>(m * d * K));
  ws.e_row.resize(static_cast<std::size_t>(d * K));
  V const* const ys = ws.ys.data();
  for (index_t j = 0; j < m; ++j)
    for (index_t c = 0; c < d; ++c)
      for (int q = 0; q < K; ++q) {
        V const prev = j == 0 ? V(T(0)) : ys[((j - 1) * d + c) * K + q];
        ws.e_col[static_cast<std::size_t>((j * d + c) * K + q)] = lanes.squared_exp(ys[(j * d + c) * K + q] - prev);
      }
}

/// Soft-MSM values S(x_g, y_g) of the G pairs of one group into out[g]: every pair n x m (rows
/// along the longer series, as value() orients them; or, in a full band, a ragged group's
/// pairs within n x m, lockstep_corner_forward) with the same channels and band, every one
/// soft_msm_lockstep_fits.
template <class T, class P, class Pair>
void lockstep_soft_msm_values(Pair const* pairs, band_geometry const& band, soft_msm_cost<P> const& cost,
                              soft_min<T> const& smooth, T* out, lockstep_workspace<T>& ws) {
  using V = simd::pack<T>;
  soft_msm_lane_cost<T, P> lanes;
  prepare_soft_msm_group(pairs, cost, lanes, ws);
  lockstep_soft_msm_cells<T, P> cells{lanes, smooth, ws.xs.data(), ws.ys.data(), ws.e_col.data(), ws.e_row.data(),
                                      pairs[0].x.channels};
  lockstep_corner_forward<T>(pairs, band, V(math::infinity<T>()), V(T(0)), ws.hard_rows, cells,
                             [&](V const& state, int lane, int g) { out[g] = state[lane]; });
}


/// Packs a soft-MSM training group keeps per cell and vector: the move weights and the
/// gradient terms (soft_msm_lane_cost::gradient_terms), as the strips' side table.
inline constexpr index_t soft_msm_side_packs(index_t channels) noexcept { return 3 + 4 * channels; }

/// The bytes of a soft-MSM training group's side table for n x m pairs of d channels.
template <class T>
constexpr std::size_t lockstep_soft_msm_table_bytes(index_t n, index_t m, index_t d) noexcept {
  return static_cast<std::size_t>(n * m * lockstep_vectors<T> * soft_msm_side_packs(d)) * sizeof(simd::pack<T>);
}

/// The cells of a soft-MSM training group: the costs with their transitions' partials, then
/// each cell's value, move weights and gradient terms, stored in side at ((i m + j) K + q) times
/// soft_msm_side_packs, as the strips' training forward stores them.
template <class T, class P>
struct lockstep_soft_msm_training_cells : lockstep_soft_msm_cells<T, P, true> {
  using V = simd::pack<T>;
  static constexpr int K = lockstep_vectors<T>;
  V* side;
  index_t m;

  RESILIN_INLINE void combine(index_t i, index_t j, step3<V> const* c, V const* diag, V const* up, V* left) noexcept {
    index_t const packs = soft_msm_side_packs(this->d);
    for (int q = 0; q < K; ++q) {
      value_and_weights<V> const vw = cell_value_and_weights(this->smooth, c[q], diag[q], up[q], left[q]);
      left[q] = vw.value;
      V* const b = side + ((i * m + j) * K + q) * packs;
      b[0] = vw.weights.diag;
      b[1] = vw.weights.up;
      b[2] = vw.weights.left;
      this->lanes.gradient_terms(q, vw.weights, b + 3);
    }
  }
};

/// Soft-MSM values of a group into out[g] and seed_g dS/dx_g, seed_g dS/dy_g added to gx_g and
/// gy_g (zeroed by the caller): pairs as lockstep_soft_msm_values takes them, none a series
/// against itself with one gradient buffer (whose strips take S(x, x)'s diagonal partials),
/// side tables within lockstep_training_table_bytes. The backward is the strips' over the stored
/// weights and terms, its sums in their order: a cell's adjoint (up + left) + diag, x_i's terms
/// (and x_{i-1}'s) over j descending, and y_j's over the strips' steps, rows descending but
/// for one swap: where row i starts a vector of a strip but not the strip (i % W = 0, i % H !=
/// 0), the strips add row i - 1's term from column j + 1 before row i's from column j. So
/// values and gradients have value_and_grad's bits. A ragged group's pairs (in a full band) are
/// read and seeded at their own last cells (lockstep_corner_forward, lockstep_adjoint_sweep).
template <class T, class P>
void lockstep_soft_msm_values_and_grads(oriented_training_pair<T> const* pairs, band_geometry const& band,
                                        soft_msm_cost<P> const& cost, soft_min<T> const& smooth, T* out,
                                        lockstep_workspace<T>& ws) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = lockstep_vectors<T>, G = K * W, H = strip_rows<T>;
  group_extent const extent = group_extent::of(pairs, G);
  index_t const n = extent.n, m = extent.m, d = pairs[0].x.channels;
  index_t const packs = soft_msm_side_packs(d);
  soft_msm_lane_cost<T, P> lanes;
  prepare_soft_msm_group(pairs, cost, lanes, ws);
  lanes.x.channels = d;  // gradient_terms' channel count
  lanes.partials.resize(static_cast<std::size_t>(2 * K * d));
  lanes.diffs.resize(static_cast<std::size_t>(K * d));
  resize_exactly(ws.side, static_cast<std::size_t>(n * m * K * packs));
  lockstep_corner_forward<T>(
      pairs, band, V(math::infinity<T>()), V(T(0)), ws.hard_rows,
      lockstep_soft_msm_training_cells<T, P>{
          {lanes, smooth, ws.xs.data(), ws.ys.data(), ws.e_col.data(), ws.e_row.data(), d}, ws.side.data(), m},
      [&](V const& state, int lane, int g) { out[g] = state[lane]; });

  // the backward: each cell's shares from its stored weights, its gradient terms times its
  // adjoint summed for x_i, x_{i-1} (per row) and y_j, y_{j-1} in the strips' order
  V const zero(T(0));
  ws.gy.assign(static_cast<std::size_t>(m * d * K), zero);
  ws.gx_row.resize(static_cast<std::size_t>(2 * d * K));  // x_i's sums, then x_{i-1}'s
  ws.pending_a.resize(static_cast<std::size_t>(m * K));   // a swapped row's adjoints
  struct cells_t {
    oriented_training_pair<T> const* pairs;
    band_geometry const& band;
    V const* side;
    V* gxr;  // x_i's sums, then (at d K) x_{i-1}'s
    V* gy;
    V* pa;  // a swapped row's adjoints, until its y_j terms are added
    index_t m, d, packs;
    index_t pending_lo = 0, pending_hi = -1;  // the columns whose y_j terms wait (a swapped row)
    index_t held_lo = 0, held_hi = -1, held_row = -1;  // those of the row below, during a row
    bool swapped = false;

    /// y's sum at column j, vector q, plus a times one of a cell's terms (which: 2 for its
    /// y_j, 3 for its y_{j-1}) in every channel
    RESILIN_INLINE void add_y(index_t j, int q, V a, V const* terms, int which) noexcept {
      for (index_t c = 0; c < d; ++c) {
        V& acc = gy[(j * d + c) * K + q];
        acc = acc + guarded_product<false>(a, terms[4 * c + which]);
      }
    }
    RESILIN_INLINE V const* terms_of(index_t i, index_t j, int q) const noexcept {
      return side + ((i * m + j) * K + q) * packs + 3;
    }
    void flush(index_t j) noexcept {  // the waiting y_j terms of row held_row
      if (j < held_lo || j > held_hi) return;
      for (int q = 0; q < K; ++q) add_y(j, q, pa[j * K + q], terms_of(held_row, j, q), 2);
    }
    void begin_row(index_t i) noexcept {
      index_range const r = band.row(i);
      held_lo = pending_lo;
      held_hi = pending_hi;
      held_row = i + 1;
      // the row below's waiting terms of the columns this row adds none before (j >= hi)
      for (index_t j = std::max(r.hi, held_lo); j <= held_hi; ++j) flush(j);
      swapped = i % W == 0 && i % H != 0;
      pending_lo = swapped ? r.lo : 0;
      pending_hi = swapped ? r.hi : -1;
      for (index_t u = 0; u < 2 * d * K; ++u) gxr[u] = V(T(0));
    }
    RESILIN_INLINE step3<V> cell(index_t i, index_t j, int q, V a) noexcept {
      V const* const t = terms_of(i, j, q);
      for (index_t c = 0; c < d; ++c) {  // the strips' accumulate_terms, channel by channel
        gxr[c * K + q] += guarded_product<false>(a, t[4 * c]);
        gxr[(d + c) * K + q] += guarded_product<false>(a, t[4 * c + 1]);
      }
      if (swapped) pa[j * K + q] = a;  // y_j's terms wait for the row above's from column j + 1
      else add_y(j, q, a, t, 2);
      if (j >= 1) add_y(j - 1, q, a, t, 3);
      V const* const w = t - 3;
      return {a * w[0], a * w[1], a * w[2]};
    }
    void end_cell(index_t, index_t j) noexcept {
      if (j >= 1) flush(j - 1);  // after this row's terms from column j
    }
    void end_row(index_t i) noexcept {
      for (int g = 0; g < G; ++g) {
        if (i >= pairs[g].x.length) continue;  // a row past a ragged group's pair
        for (index_t c = 0; c < d; ++c) {
          pairs[g].gx(i, c) += gxr[c * K + g / W][g % W];
          if (i >= 1) pairs[g].gx(i - 1, c) += gxr[(d + c) * K + g / W][g % W];
        }
      }
    }
  };
  lockstep_adjoint_sweep<T>(pairs, band, ws,
                            cells_t{pairs, band, ws.side.data(), ws.gx_row.data(), ws.gy.data(), ws.pending_a.data(),
                                    m, d, packs});
  add_lane_gradients_y(pairs, static_cast<bool const*>(nullptr), ws.gy.data());
}

}  // namespace resilin::host_detail

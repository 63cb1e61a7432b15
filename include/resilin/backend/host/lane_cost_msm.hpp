#pragma once
// The vectorised lane engine of msm_cost (see lane_cost.hpp): x_i and x_{i-1} of the strip in
// registers, y reversed and channel-major with padding (y_j at p, y_{j-1} at p + 1), the costs
// of cost/msm.hpp on whole vectors. The generic engine called msm_step once per lane: MSM took
// 11.1 ns per cell for a value, twice soft-MSM's 5.6 (1000 x 1000, double, AVX-512).
#include <vector>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/cost/msm.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// The costs as msm_step sums them, channel by channel (diag, up, left), with cost/msm.hpp's
/// functions on vectors (no product, so every build rounds them alike and the values keep the
/// generic engine's bits). Row 0's up move and
/// column 0's left move read the zero padding: their predecessors are +inf, so those costs are
/// never used. Gradients: the subgradients of cost/msm.hpp (split_merge_partials), weighted by
/// the moves' uses and accumulated per strip (x) and per pair (y), as dtw_lane_cost does.
template <class T, class P>
struct msm_lane_cost : strip_series<T, true> {
  using V = simd::pack<T>;
  using M = typename V::mask;
  using base = strip_series<T, true>;
  T c = 1;

  // MSM's cost is its own transpose (C is symmetric in p and o, and transposing swaps the up and
  // left moves along with x and y), so the transposed problems use it as is.
  void begin_pair(transposed_cost<msm_cost<P>> const& cost, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    begin_pair(cost.inner, xs, ys, gxs, gys);
  }
  void begin_pair(msm_cost<P> const& cost, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    c = static_cast<T>(cost.c);
    base::bind(xs, ys, gxs, gys);
  }

  RESILIN_INLINE step3<V> costs(int q, index_t t, M) noexcept {
    V sd(T(0)), su(T(0)), sl(T(0));
    this->for_each_channel(q, t, [&](auto const& o) __attribute__((always_inline)) {
      sd += detail::msm_magnitude(o.xi - o.yj);
      su += detail::msm_split_merge(o.xi, o.xp, o.yj, c);
      sl += detail::msm_split_merge(o.yj, o.yp, o.xi, c);
    });
    return {sd, su, sl};
  }

  /// Adds the moves' uses g (0 outside the band) times the costs' subgradients.
  RESILIN_INLINE void accumulate(int q, index_t t, M, step3<V> const& g) noexcept {
    this->for_each_channel(q, t, [&](auto const& o) __attribute__((always_inline)) {
      V const move = g.diag * detail::msm_move_partial(o.xi, o.yj);
      transition_partials<V> const du = detail::msm_split_merge_partials(o.xi, o.xp, o.yj);
      transition_partials<V> const dl = detail::msm_split_merge_partials(o.yj, o.yp, o.xi);
      this->gxrows[o.u] += (move + g.up * du.v) + g.left * dl.o;
      this->gxprev[o.u] += g.up * du.p;
      (V::load(o.gy) + ((g.up * du.o - move) + g.left * dl.v)).store(o.gy);
      (V::load(o.gy + 1) + g.left * dl.p).store(o.gy + 1);
    });
  }
};

template <class T, class P>
struct lane_cost_for<T, msm_cost<P>> { using type = msm_lane_cost<T, P>; };
template <class T, class P>
struct lane_cost_for<T, transposed_cost<msm_cost<P>>> { using type = msm_lane_cost<T, P>; };

}  // namespace resilin::host_detail

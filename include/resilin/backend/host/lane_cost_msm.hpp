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

/// The costs as msm_step sums them, channel by channel (diag, up, left; no product, so every
/// build rounds them alike and the values keep the generic engine's bits). Row 0's up move and
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
      sd += mag(o.xi - o.yj);
      su += split_merge(o.xi, o.xp, o.yj);
      sl += split_merge(o.yj, o.yp, o.xi);
    });
    return {sd, su, sl};
  }

  /// Adds the moves' uses g (0 outside the band) times the costs' subgradients.
  RESILIN_INLINE void accumulate(int q, index_t t, M, step3<V> const& g) noexcept {
    V const zero(T(0)), one(T(1));
    this->for_each_channel(q, t, [&](auto const& o) __attribute__((always_inline)) {
      // the move |x_i - y_j|: sign(x_i - y_j), 0 where they are equal
      V const move = g.diag * simd::select(o.yj < o.xi, one, simd::select(o.xi < o.yj, -one, zero));
      transition_partials<V> const du = split_merge_partials(o.xi, o.xp, o.yj);
      transition_partials<V> const dl = split_merge_partials(o.yj, o.yp, o.xi);
      this->gxrows[o.u] += (move + g.up * du.v) + g.left * dl.o;
      this->gxprev[o.u] += g.up * du.p;
      (V::load(o.gy) + ((g.up * du.o - move) + g.left * dl.v)).store(o.gy);
      (V::load(o.gy + 1) + g.left * dl.p).store(o.gy + 1);
    });
  }

 private:
  /// |a|, as max(a, -a) (a zero's sign aside, which no sum here keeps)
  static RESILIN_INLINE V mag(V a) noexcept { return simd::max(a, -a); }
  /// msm_cost::split_merge on vectors: c inside the closed region between p and o, else c plus
  /// the distance to the nearer of them.
  RESILIN_INLINE V split_merge(V v, V p, V o) const noexcept {
    return simd::select(between(v, p, o), V(c), V(c) + simd::min(mag(v - p), mag(v - o)));
  }
  static RESILIN_INLINE M between(V v, V p, V o) noexcept {
    return ((p <= v) & (v <= o)) | ((v <= p) & (o <= v));
  }
  /// msm_cost::split_merge_partials on vectors (outside the region v differs from p and o).
  static RESILIN_INLINE transition_partials<V> split_merge_partials(V v, V p, V o) noexcept {
    V const zero(T(0)), one(T(1));
    M const inside = between(v, p, o);
    M const near_p = mag(v - p) <= mag(v - o);
    V const s = simd::select(near_p, simd::select(p < v, one, -one), simd::select(o < v, one, -one));
    V const sv = simd::select(inside, zero, s);
    return {sv, simd::select(near_p, -sv, zero), simd::select(near_p, zero, -sv)};
  }
};

template <class T, class P>
struct lane_cost_for<T, msm_cost<P>> { using type = msm_lane_cost<T, P>; };
template <class T, class P>
struct lane_cost_for<T, transposed_cost<msm_cost<P>>> { using type = msm_lane_cost<T, P>; };

}  // namespace resilin::host_detail

#pragma once
// msm_cost: the Move-Split-Merge cost model of Stefan, Athitsos & Das (IEEE TKDE 25(6), 2013),
// with absolute costs, as in aeon's msm_distance (spec/softmsm.md §2). Into cell (i, j):
//     diag (move)              |x_i - y_j|
//     up   (split/merge in x)  C(x_i, x_{i-1}, y_j)
//     left (split/merge in y)  C(y_j, y_{j-1}, x_i)
// with C(v, p, o) = c                               if p <= v <= o or p >= v >= o,
//                 = c + min(|v - p|, |v - o|)       otherwise.
// With hard_min this is MSM (a metric); with soft_min a smoothing of it whose value is not the
// Soft-MSM of Holder & Bagnall (that one is soft_msm_cost, spec §3).
//
// Several channels: each move's cost is the sum of the per-channel costs (one recursion on
// summed costs). The published multivariate MSM is "independent" (a sum of per-channel
// recursions); the measures:: factories ask the front end for that instead (see measure.hpp).
//
// Gradient (MSM is piecewise linear; at its kinks `step_grad` returns one subgradient):
//   * d|v - w|/dv = sign(v - w), and 0 at v = w (as l1_distance);
//   * C: 0 in the closed "between" region (boundaries included, where 0 is the one-sided
//     derivative from inside and lies in the subdifferential); outside it, the derivative of
//     c + |v - n| with n the nearer of p and o (p when |v - p| = |v - o|, which outside the
//     region happens only for p = o), i.e. +-1 for v and -+1 for n, 0 for the other.
#include <concepts>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/move_split_merge.hpp>

namespace resilin {

namespace detail {
// C and its partials written once over a value type V: a scalar, or a host SIMD pack (select,
// min and max found by argument-dependent lookup), so that the vectorised lane engine
// (backend/host/lane_cost_msm.hpp) computes what msm_cost does, bit for bit.

/// Whether v lies in the closed region between p and o (either order).
template <class V>
RESILIN_HD RESILIN_INLINE auto msm_between(V v, V p, V o) noexcept {
  return ((p <= v) & (v <= o)) | ((v <= p) & (o <= v));
}

/// |a| as max(a, -a) (one expression for scalars and packs).
template <class V>
RESILIN_HD RESILIN_INLINE V msm_magnitude(V a) noexcept {
  using math::max;
  return max(a, -a);
}

/// d|a - b| / da: the sign of a - b, 0 where they are equal.
template <class V>
RESILIN_HD RESILIN_INLINE V msm_move_partial(V a, V b) noexcept {
  using math::select;
  V const zero(0), one(1);
  return select(b < a, one, select(a < b, zero - one, zero));
}

/// C(v, p, o): c in the region, else c plus the distance to the nearer of p and o.
template <class V, class T>
RESILIN_HD RESILIN_INLINE V msm_split_merge(V v, V p, V o, T c) noexcept {
  using math::min;
  using math::select;
  return select(msm_between(v, p, o), V(c), V(c) + min(msm_magnitude(v - p), msm_magnitude(v - o)));
}

/// (dC/dv, dC/dp, dC/do) with the subgradient choice of msm_cost's header (outside the region
/// v differs from p and o).
template <class V>
RESILIN_HD RESILIN_INLINE transition_partials<V> msm_split_merge_partials(V v, V p, V o) noexcept {
  using math::select;
  V const zero(0), one(1);
  auto const near_p = msm_magnitude(v - p) <= msm_magnitude(v - o);
  V const s = select(near_p, select(p < v, one, -one), select(o < v, one, -one));
  V const sv = select(msm_between(v, p, o), zero, s);
  return {sv, select(near_p, zero - sv, zero), select(near_p, zero, zero - sv)};
}
}  // namespace detail

/// MSM with split/merge penalty c >= 0 (default 1). P is the parameter type; the cost works
/// for float and double series alike.
template <std::floating_point P = double>
struct msm_cost {
  using parameter_type = P;
  P c = P(1);

  /// Throws resilin::invalid_argument unless 0 <= c < inf (host only).
  void validate() const {
    detail::require(c >= P(0) && c < math::infinity<P>(), "msm c must be >= 0 and finite, got ", c);
  }
  /// The same once c is cast to the series' value type T (1e39 is inf in float).
  template <class T>
  void validate_as() const {
    detail::require(static_cast<T>(c) < math::infinity<T>(), "msm c must be finite in the value type, got ", c);
  }

  /// C(v, p, o) for one channel.
  template <class T>
  RESILIN_HD static T split_merge(T v, T p, T o, T c) noexcept {
    return detail::msm_split_merge(v, p, o, c);
  }

  /// The partials (dC/dv, dC/dp, dC/do) of C(v, p, o), with the subgradient choice above.
  template <class T>
  RESILIN_HD static transition_partials<T> split_merge_partials(T v, T p, T o) noexcept {
    return detail::msm_split_merge_partials(v, p, o);
  }

  template <class T>
  RESILIN_HD T move(T a, T b) const noexcept { return detail::msm_magnitude(a - b); }
  template <class T>
  RESILIN_HD T move_partial(T a, T b) const noexcept { return detail::msm_move_partial(a, b); }
  template <class T>
  RESILIN_HD T transition(T v, T p, T o) const noexcept {
    return split_merge(v, p, o, static_cast<T>(c));
  }
  template <class T>
  RESILIN_HD transition_partials<T> transition_grad(T v, T p, T o) const noexcept {
    return split_merge_partials(v, p, o);
  }
  template <class T>
  RESILIN_HD step3<T> step(series_view<T const> x, series_view<T const> y, index_t i,
                           index_t j) const noexcept {
    return detail::msm_step(*this, x, y, i, j);
  }
  template <class T>
  RESILIN_HD void step_grad(series_view<T const> x, series_view<T const> y, index_t i, index_t j,
                            step3<T> usage, series_view<T> gx, series_view<T> gy) const noexcept {
    detail::msm_step_grad(*this, x, y, i, j, usage, gx, gy);
  }
};

}  // namespace resilin

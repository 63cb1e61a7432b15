#pragma once
// soft_min: min^gamma(a, b, c) = -gamma log(exp(-a/gamma) + exp(-b/gamma) + exp(-c/gamma)),
// evaluated min-shifted so one term is exactly 1 and only two exponentials remain:
//     lo - gamma log(1 + exp((lo - mid)/gamma) + exp((lo - hi)/gamma)).
// No NaN for any finite input and any gamma > 0: unreachable candidates (+inf) give exp(-inf)
// = 0, and three unreachable candidates give +inf. The weights are the softmax of -v/gamma,
// normalised per cell (the "P-form"), so they lie in [0, 1] and sum to 1 by construction.
#include <concepts>
#include <limits>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/recursion.hpp>

namespace resilin {

template <std::floating_point T>
struct soft_min {
  T gamma = T(1);

  /// gamma in [the smallest normal number, inf): a subnormal gamma has no finite inverse, and
  /// capping it made cost gaps below about 4e-306 (double) weigh as if gamma were 5.6e-309.
  void validate() const {
    detail::require(gamma >= std::numeric_limits<T>::min() && gamma < math::infinity<T>(),
                    "gamma must be > 0, finite and at least the smallest normal number (",
                    std::numeric_limits<T>::min(), "), got ", gamma);
  }

  template <class V>
  RESILIN_HD RESILIN_INLINE V combine(step3<V> v) const noexcept {
    return rank(v).value(gamma);
  }

  template <class V>
  RESILIN_HD RESILIN_INLINE step3<V> weights(step3<V> v) const noexcept {
    return rank(v).weights(v);
  }

  /// The tangent of weights(v) along dv (the soft-min's Hessian times dv), from w = weights(v):
  /// dw_k = -(w_k / gamma) (dv_k - sum_l w_l dv_l). Unreachable candidates (w_k = 0) get 0 when
  /// their dv_k is finite. Used by the second-order pass (backend/host/tangent.hpp).
  template <class V>
  RESILIN_HD step3<V> weights_tangent(step3<V> const& w, step3<V> const& dv) const noexcept {
    V const mean = w.diag * dv.diag + w.up * dv.up + w.left * dv.left;
    V const k(-math::inverse_temperature(gamma));
    return {k * w.diag * (dv.diag - mean), k * w.up * (dv.up - mean), k * w.left * (dv.left - mean)};
  }

  /// combine and weights of the same candidates from one pair of exponentials.
  template <class V>
  RESILIN_HD RESILIN_INLINE value_and_weights<V> combine_and_weights(step3<V> v) const noexcept {
    ranked<V> const k = rank(v);
    return {k.value(gamma), k.weights(v)};
  }

 private:
  // exp((lo - v)/gamma) depends only on the value of v, so ranking the three candidates and
  // giving each the exponential of its rank (1 for the minimum) is exact, ties included, and
  // costs two exponentials instead of three.
  template <class V>
  struct ranked {
    V lo, mid, base, e_mid, e_hi, inf;
    decltype(lo == inf) unreachable;

    RESILIN_HD RESILIN_INLINE V value(T g) const noexcept {
      using math::log;
      using math::select;
      V const s = V(T(1)) + (e_mid + e_hi);
      return select(unreachable, inf, base - log(s) * g);
    }
    RESILIN_HD RESILIN_INLINE step3<V> weights(step3<V> const& v) const noexcept {
      using math::select;
      V const r = select(unreachable, V(T(0)), V(T(1)) / (V(T(1)) + (e_mid + e_hi)));
      auto const of = [&](V x) { return select(x == lo, r, select(x == mid, e_mid * r, e_hi * r)); };
      return {of(v.diag), of(v.up), of(v.left)};
    }
  };

  template <class V>
  RESILIN_HD RESILIN_INLINE ranked<V> rank(step3<V> const& v) const noexcept {
    using math::exp;
    using math::max;
    using math::min;
    using math::select;
    V const lo = min(v.diag, min(v.up, v.left));
    V const hi = max(v.diag, max(v.up, v.left));
    V const mid = max(min(v.diag, v.up), min(max(v.diag, v.up), v.left));
    V const inf(math::infinity<T>());
    auto const unreachable = lo == inf;
    V const base = select(unreachable, V(T(0)), lo);  // keeps inf - inf out of the exponents
    T const inv = math::inverse_temperature(gamma);
    return {lo, mid, base, exp((base - mid) * inv), exp((base - hi) * inv), inf, unreachable};
  }
};

}  // namespace resilin

#pragma once
// soft_min: min^gamma(a, b, c) = -gamma log(exp(-a/gamma) + exp(-b/gamma) + exp(-c/gamma)),
// evaluated min-shifted so one term is exactly 1 and only two exponentials remain:
//     lo - gamma log(1 + exp((lo - mid)/gamma) + exp((lo - hi)/gamma)).
// No NaN for any finite input and any gamma > 0: unreachable candidates (+inf) give exp(-inf)
// = 0, and three unreachable candidates give +inf. The weights are the softmax of -v/gamma,
// normalised per cell (the "P-form"), so they lie in [0, 1] and sum to 1 by construction.
#include <cmath>
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

  /// The same in the series' value type U, where the values meet gamma and its inverse (a double
  /// gamma of 1e39 is inf in float and 1e-39 subnormal: NaN values and gradients).
  template <class U>
  void validate_as() const {
    U const g = static_cast<U>(gamma);
    detail::require(g >= std::numeric_limits<U>::min() && g < math::infinity<U>() &&
                        static_cast<U>(math::inverse_temperature(gamma)) < math::infinity<U>(),
                    "gamma must be normal and finite in the value type, with a finite inverse, got ", gamma);
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

  /// weights_tangent along the step costs scaled by 1 + t, from the candidates v_k = R(pred_k) +
  /// c_k and the entropies h_k of the alignments into pred_k: there R' = R + gamma H, so dv_k =
  /// v_k + gamma h_k and dw_k = -w_k (z_k - sum_l w_l z_l) with z_k = (v_k - min v) / gamma + h_k,
  /// which stays below about 745 + h_k wherever w_k > 0. Not from dv itself: where candidates
  /// tie, its deviations from their mean are O(gamma), and those of the accumulated R' (rounding
  /// of size ulp(R')) divided by gamma grew without bound as gamma -> 0 (gradients of 1e86 for
  /// 9.8 at gamma = 1e-100 on integer data). Unreachable candidates (w_k = 0) get 0.
  template <class V>
  RESILIN_HD step3<V> weights_tangent_along_costs(step3<V> const& w, step3<V> const& v,
                                                  step3<V> const& h) const noexcept {
    step3<V> const s = scaled_gaps(w, v);
    V const zd = s.diag + h.diag, zu = s.up + h.up, zl = s.left + h.left;
    V const mean = w.diag * zd + w.up * zu + w.left * zl;
    return {-(w.diag * (zd - mean)), -(w.up * (zu - mean)), -(w.left * (zl - mean))};
  }

  /// combine_and_weights, and the entropy -sum_k w_k log w_k of the weights from the same
  /// exponentials and logarithm: sum_k w_k (v_k - min v) / gamma + log Z, since log w_k =
  /// -(v_k - min v) / gamma - log Z (three logarithms fewer). 0 where every candidate is
  /// unreachable. The value and weights have combine_and_weights' bits.
  template <class V>
  RESILIN_HD value_weights_and_entropy<V> combine_weights_and_entropy(step3<V> v) const noexcept {
    using math::select;
    ranked<V> const k = rank(v);
    V const log_z = k.log_normaliser();
    step3<V> const w = k.weights(v);
    step3<V> const z = scaled_gaps(w, v);
    V const entropy = (w.diag * z.diag + w.up * z.up + w.left * z.left) + log_z;
    return {k.value_from(log_z, gamma), w, select(k.unreachable, V(T(0)), entropy)};
  }

  /// combine and weights of the same candidates from one pair of exponentials.
  template <class V>
  RESILIN_HD RESILIN_INLINE value_and_weights<V> combine_and_weights(step3<V> v) const noexcept {
    ranked<V> const k = rank(v);
    return {k.value(gamma), k.weights(v)};
  }

 private:
  /// v in the type of V's lanes (V a scalar or a SIMD pack): a soft_min<double> over float
  /// series meets gamma and its inverse rounded to float, as validate_as checks them.
  template <class V>
  RESILIN_HD static V in_lanes(T v) noexcept {
    if constexpr (requires { typename V::value_type; }) return V(static_cast<typename V::value_type>(v));
    else return static_cast<V>(v);
  }

  /// (v_k - min v) / gamma for the candidates with weight, 0 for the others (unreachable, or
  /// beyond the exponential's range): below about 745 wherever w_k > 0 (weights_tangent_along_costs).
  template <class V>
  RESILIN_HD step3<V> scaled_gaps(step3<V> const& w, step3<V> const& v) const noexcept {
    using math::min;
    using math::select;
    V const lo = min(v.diag, min(v.up, v.left));
    V const k = in_lanes<V>(math::inverse_temperature(gamma)), zero(T(0));
    return {select(w.diag > zero, (v.diag - lo) * k, zero), select(w.up > zero, (v.up - lo) * k, zero),
            select(w.left > zero, (v.left - lo) * k, zero)};
  }

  // exp((lo - v)/gamma) depends only on the value of v, so ranking the three candidates and
  // giving each the exponential of its rank (1 for the minimum) is exact, ties included, and
  // costs two exponentials instead of three.
  template <class V>
  struct ranked {
    V lo, mid, base, e_mid, e_hi, inf;
    decltype(lo == inf) unreachable;

    /// log Z, Z = 1 + e_mid + e_hi (the minimum's term is 1).
    RESILIN_HD RESILIN_INLINE V log_normaliser() const noexcept {
      return math::log1p_nonneg<T>(e_mid + e_hi);
    }
    RESILIN_HD RESILIN_INLINE V value_from(V log_z, T g) const noexcept {
      using math::select;
      // gamma in the values' type, also where they are of another precision than T
      // (soft_min<double> over float series)
      return select(unreachable, inf, base - log_z * in_lanes<V>(g));
    }
    RESILIN_HD RESILIN_INLINE V value(T g) const noexcept { return value_from(log_normaliser(), g); }
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
    V const inv = in_lanes<V>(math::inverse_temperature(gamma));  // in the values' type (value_from)
    return {lo, mid, base, exp((base - mid) * inv), exp((base - hi) * inv), inf, unreachable};
  }
};

/// Whether a smoothing type is a soft_min (of any value type).
template <class S>
inline constexpr bool is_soft_min_v = false;
template <class U>
inline constexpr bool is_soft_min_v<soft_min<U>> = true;

}  // namespace resilin

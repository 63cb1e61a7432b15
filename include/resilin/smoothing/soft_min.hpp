#pragma once
// soft_min: min^gamma(a, b, c) = -gamma log(exp(-a/gamma) + exp(-b/gamma) + exp(-c/gamma)),
// evaluated min-shifted so one term is exactly 1 and only two exponentials remain:
//     lo - gamma log(1 + exp((lo - mid)/gamma) + exp((lo - hi)/gamma)).
// No NaN for any finite input and any gamma > 0: unreachable candidates (+inf) give exp(-inf)
// = 0, and three unreachable candidates give +inf. The weights are the softmax of -v/gamma,
// normalised per cell (the "P-form"), so they lie in [0, 1] and sum to 1 by construction.
#include <concepts>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>

namespace resilin {

template <std::floating_point T>
struct soft_min {
  T gamma = T(1);

  void validate() const {
    detail::require(gamma > T(0) && gamma < math::infinity<T>(),
                    "gamma must be > 0 and finite, got ", gamma);
  }

  template <class V>
  RESILIN_HD V combine(step3<V> v) const noexcept {
    using math::max;
    using math::min;
    using math::exp;
    using math::log;
    using math::select;
    V const lo = min(v.diag, min(v.up, v.left));
    V const hi = max(v.diag, max(v.up, v.left));
    V const mid = max(min(v.diag, v.up), min(max(v.diag, v.up), v.left));
    V const inf(math::infinity<T>());
    auto const unreachable = lo == inf;
    V const base = select(unreachable, V(T(0)), lo);  // keeps inf - inf out of the exponents
    T const inv = T(1) / gamma;
    V const s = V(T(1)) + (exp((base - mid) * inv) + exp((base - hi) * inv));
    return select(unreachable, inf, base - log(s) * gamma);
  }

  template <class V>
  RESILIN_HD step3<V> weights(step3<V> v) const noexcept {
    using math::min;
    using math::exp;
    using math::log;
    using math::select;
    V const lo = min(v.diag, min(v.up, v.left));
    V const inf(math::infinity<T>());
    auto const unreachable = lo == inf;
    V const base = select(unreachable, V(T(0)), lo);
    T const inv = T(1) / gamma;
    V const ed = exp((base - v.diag) * inv);
    V const eu = exp((base - v.up) * inv);
    V const el = exp((base - v.left) * inv);
    V const s = ed + eu + el;  // >= 1 when reachable, 0 otherwise
    V const r = select(unreachable, V(T(0)), V(T(1)) / select(unreachable, V(T(1)), s));
    return {ed * r, eu * r, el * r};
  }
};

}  // namespace resilin

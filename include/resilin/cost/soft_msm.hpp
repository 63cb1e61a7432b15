#pragma once
// soft_msm_cost: the gated squared surrogate of MSM of Holder & Bagnall (Soft-MSM), as
// implemented in aeon PR #3508 (spec/softmsm.md §3). Into cell (i, j):
//     diag (move)              (x_i - y_j)^2
//     up   (split/merge in x)  T(x_i, x_{i-1}, y_j)
//     left (split/merge in y)  T(y_j, y_{j-1}, x_i)
// with the transition cost (v: the value split or merged, p: its predecessor, o: the other
// series' value)
//     a = v - p,  b = v - o,  u = a b,
//     g(u) = (1 - u / sqrt(u^2 + eps)) / 2          (a smoothed "v lies between p and o")
//     T(v, p, o) = c + (1 - g(u)) softmin_gamma(a^2, b^2).
// With soft_min(gamma) as smoothing (same gamma here: measures::soft_msm) this is Soft-MSM; the
// first row and column are plain sums because the recursion's other predecessors are +inf.
// gamma = 0 here means the hard min inside T: with hard_min as smoothing that is the gamma -> 0
// limit (spec §3.8), which keeps the eps gate; it is not aeon's msm_distance (absolute costs:
// msm_cost). The value is signed (it may be negative for large gamma) and S(x, x) != 0.
//
// Several channels: each move's cost is the sum of the per-channel costs. The published
// multivariate Soft-MSM is "independent" (a sum of per-channel recursions); the measures::
// factories ask the front end for that.
//
// Gradient (spec §3.5), with w_a, w_b the 2-way soft-min weights of a^2 and b^2 and
// h = -g'(u) = eps / (2 (u^2 + eps)^{3/2}):
//     dT/dv = h (a + b) S + (1 - g) (2 a w_a + 2 b w_b)
//     dT/dp = -h b S - (1 - g) 2 a w_a
//     dT/do = -h a S - (1 - g) 2 b w_b              (the three sum to 0)
// The gate is stiff: |h S| reaches S / (2 sqrt(eps)) ~ 1.6e4 S at u = 0 (exactly repeated
// values), and S itself grows with gamma (about -gamma log 2 at a tie), so float gradients
// there are only as good as the float cancellation allows (up to 0.4 at gamma = 1e3 with FMA).
// The same holds for S(x, x) (the divergence's self terms) as eps shrinks: at its diagonal
// cells a transition's v and o are one sample, whose partials +-h S a cancel through separate
// sums, so its gradient carries about ulp(S / (2 sqrt(eps))). Measured in double (7 samples,
// gamma = 1, against central differences): 2e-13 at the default eps, 6e-8 at eps = 1e-20, 2e-5
// at 1e-25, 1e-2 at 1e-30.
// The inner soft-min gives a^2 and b^2 weight 1/2 each when they tie, also for gamma = 0.
//
// The math is written once over a value type V (a scalar, or a host SIMD pack with exp, log,
// sqrt and select found by argument-dependent lookup), so a vectorised lane engine can reuse it.
#include <concepts>
#include <limits>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/move_split_merge.hpp>
#include <resilin/cost/msm.hpp>

namespace resilin {

namespace detail {
/// The 2-way soft-min softmin_gamma(a, b) = -gamma log(exp(-a/gamma) + exp(-b/gamma)),
/// min-shifted, with the weight of the larger argument (in [0, 1/2]); gamma = 0: the minimum.
template <class V>
struct soft_min2_result {
  V value;
  V w_hi;  // weight of max(a, b); the smaller one gets 1 - w_hi
};

template <class V, class T>
RESILIN_HD RESILIN_INLINE soft_min2_result<V> soft_min2(V a, V b, T gamma) noexcept {
  using math::exp;
  using math::log;
  using math::max;
  using math::min;
  using math::select;
  V const lo = min(a, b);
  V const hi = max(a, b);
  V const zero(T(0)), one(T(1));
  if (gamma > T(0)) {
    V const gap = select(lo == hi, zero, lo - hi);  // <= 0; no inf - inf
    V const e = exp(gap * math::inverse_temperature(gamma));  // in [0, 1]
    V const s = one + e;
    return {lo - math::log1p_nonneg<T>(e) * gamma, e / s};
  }
  return {lo, select(lo == hi, V(T(0.5)), zero)};
}

/// T = c + (1 - g(u)) sm from a = v - p, b = v - o and the inner soft-min sm of (a^2, b^2)
/// with w_a, the weight of a^2 in it; when `partials` is not null, also T's three partials.
/// Callers that already hold exp(-a^2/gamma) and exp(-b^2/gamma) form sm and w_a from them;
/// those whose sm is finite by construction pass FiniteSm (the overflow guards are skipped), and
/// those whose samples are all within an eighth of the largest finite value (a, b and the sums
/// of the partials stay finite) pass MayOverflow = false (the guards against 0 * inf skipped).
template <class V, class T, bool FiniteSm = false, bool MayOverflow = true>
RESILIN_HD RESILIN_INLINE V gated_transition(V a, V b, V sm, V w_a, T c, T eps,
                                             transition_partials<V>* partials) noexcept {
  using math::select;
  using math::sqrt;
  V const zero(T(0)), one(T(1)), half(T(0.5));
  // u = 0 where a or b is 0 and the other overflowed (samples near the largest finite value):
  // 0 * inf made the transition NaN, which the outer soft-min then dropped for a wrong value
  V u = a * b;
  if constexpr (MayOverflow) u = math::zero_if_nan(u, zero);
  V const d2 = u * u + V(eps);
  V const inf(math::infinity<T>());
  auto const huge = d2 == inf;                       // u^2 overflows: the gate is a hard step
  V const r = one / sqrt(select(huge, one, d2));     // 1 / sqrt(u^2 + eps)
  V const q = select(huge, select(zero < u, one, -one), u * r);
  V const g1 = half * (one + q);                     // 1 - g(u)
  // huge: the gate is open (g1 = 1) or closed (0), and a closed one costs c also where sm
  // overflowed (a^2 and b^2 above the largest finite value), not 0 * inf
  V value = V(c) + g1 * sm;
  if constexpr (!FiniteSm) value = select(huge, V(c) + select(zero < u, sm, zero), value);
  if (partials) {
    // -g'(u) = eps r^3 / 2, as ((eps r) r) r: eps r <= sqrt(eps) <= 1, so no partial product
    // overflows (r^3 alone does at u = 0 once eps < 1e-205 in double, 1e-26 in float)
    V const h = select(huge, zero, half * (((V(eps) * r) * r) * r));
    V hs = h * sm;
    if constexpr (!FiniteSm) hs = select(huge, zero, hs);  // h = 0 there, and sm may be inf
    if constexpr (MayOverflow) {
      // a or b beyond the largest finite value comes with a zero weight (its square's), hs = 0
      // (sm = 0 at u = 0) or a closed gate (g1 = 0): those products are 0, not 0 * inf. (Only
      // here: the guards between the products and the sums below would stop a build that
      // contracts multiply-adds from fusing them, which changed the unguarded path's bits.)
      using math::zero_if_nan;
      V const ta = zero_if_nan(V(T(2)) * g1 * zero_if_nan(a * w_a, zero), zero);
      V const tb = zero_if_nan(V(T(2)) * g1 * zero_if_nan(b * (one - w_a), zero), zero);
      partials->v = zero_if_nan(hs * (a + b), zero) + (ta + tb);
      partials->p = -zero_if_nan(hs * b, zero) - ta;
      partials->o = -zero_if_nan(hs * a, zero) - tb;
    } else {
      V const ta = V(T(2)) * g1 * (a * w_a);
      V const tb = V(T(2)) * g1 * (b * (one - w_a));
      partials->v = hs * (a + b) + (ta + tb);
      partials->p = -(hs * b) - ta;
      partials->o = -(hs * a) - tb;
    }
  }
  return value;
}

/// The transition cost T(v, p, o) and, when `partials` is not null, its three partials
/// (MayOverflow as gated_transition's).
template <class V, class T, bool MayOverflow = true>
RESILIN_HD RESILIN_INLINE V soft_msm_transition(V v, V p, V o, T c, T gamma, T eps,
                                                transition_partials<V>* partials) noexcept {
  V const a = v - p;
  V const b = v - o;
  V const aa = a * a;
  V const bb = b * b;
  soft_min2_result<V> const sm = soft_min2(aa, bb, gamma);
  // a^2 is the smaller argument unless b^2 < a^2 (ties: 1/2 each, from soft_min2)
  using math::select;
  V const w_a = select(bb < aa, sm.w_hi, V(T(1)) - sm.w_hi);
  return gated_transition<V, T, false, MayOverflow>(a, b, sm.value, w_a, c, eps, partials);
}
}  // namespace detail

/// Soft-MSM's cost model: split/merge penalty c >= 0 (default 1), the inner soft-min's
/// temperature gamma >= 0 (0: hard min; the factories set it to the smoothing's gamma) and the
/// gate floor eps >= eps_min (default 1e-9, aeon's). P is the parameter type; the cost works for
/// float and double series alike.
template <std::floating_point P = double>
struct soft_msm_cost {
  using parameter_type = P;
  P c = P(1);
  P gamma = P(1);
  P eps = P(1e-9);
  /// The smallest eps accepted: float's smallest normal number, so that eps stays a positive
  /// normal number in either precision the series may have.
  static constexpr double eps_min = 1.1754943508222875e-38;

  /// Throws resilin::invalid_argument unless 0 <= c < inf, 0 <= gamma < inf and
  /// eps_min <= eps < inf (eps = 0 would divide 0 by 0 in the gate where a value repeats) (host
  /// only).
  void validate() const {
    detail::require(c >= P(0) && c < math::infinity<P>(), "soft-msm c must be >= 0 and finite, got ", c);
    detail::require(gamma >= P(0) && gamma < math::infinity<P>(),
                    "soft-msm cost gamma must be >= 0 and finite, got ", gamma);
    detail::require(eps >= P(eps_min) && eps < math::infinity<P>(),
                    "soft-msm gate eps must be finite and >= ", eps_min, " (normal in float), got ", eps);
    // a subnormal inner temperature has no finite inverse (see soft_min::validate)
    detail::require(gamma == P(0) || gamma >= std::numeric_limits<P>::min(),
                    "soft-msm cost gamma must be 0 or at least the smallest normal number (",
                    std::numeric_limits<P>::min(), "), got ", gamma);
  }
  /// The same once the parameters are cast to the series' value type T (1e39 is inf in float,
  /// 1e-39 subnormal).
  template <class T>
  void validate_as() const {
    detail::require(static_cast<T>(c) < math::infinity<T>() && static_cast<T>(eps) < math::infinity<T>(),
                    "soft-msm c and eps must be finite in the value type, got ", c, " and ", eps);
    T const g = static_cast<T>(gamma);
    detail::require(g < math::infinity<T>() && (gamma == P(0) || g >= std::numeric_limits<T>::min()),
                    "soft-msm cost gamma must be 0, or normal and finite in the value type, got ", gamma);
  }

  /// T(v, p, o) for one channel.
  template <class T>
  RESILIN_HD T transition(T v, T p, T o) const noexcept {
    return detail::soft_msm_transition<T, T>(v, p, o, static_cast<T>(c), static_cast<T>(gamma),
                                             static_cast<T>(eps), nullptr);
  }

  /// (dT/dv, dT/dp, dT/do) for one channel.
  template <class T>
  RESILIN_HD transition_partials<T> transition_grad(T v, T p, T o) const noexcept {
    transition_partials<T> d{};
    (void)detail::soft_msm_transition<T, T>(v, p, o, static_cast<T>(c), static_cast<T>(gamma),
                                            static_cast<T>(eps), &d);
    return d;
  }

  template <class T>
  RESILIN_HD T move(T a, T b) const noexcept { return (a - b) * (a - b); }
  template <class T>
  RESILIN_HD T move_partial(T a, T b) const noexcept { return T(2) * (a - b); }
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

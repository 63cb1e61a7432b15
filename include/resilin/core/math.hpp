#pragma once
// resilin::math: the elementary functions the recursion needs, one spelling for host and
// device (<cmath> lives in std:: on the host and in the global namespace on the device).
#include <cmath>
#include <concepts>
#include <limits>
#include <type_traits>
#include <resilin/core/config.hpp>

namespace resilin::math {

template <std::floating_point T>
RESILIN_HD constexpr T infinity() noexcept {
  return static_cast<T>(INFINITY);  // not numeric_limits: constexpr host-only under nvcc
}

template <std::floating_point T>
RESILIN_HD inline T exp(T x) noexcept {
#if RESILIN_DEVICE_PASS
  if constexpr (std::same_as<T, float>) return ::expf(x); else return ::exp(x);
#else
  return std::exp(x);
#endif
}

template <std::floating_point T>
RESILIN_HD inline T log(T x) noexcept {
#if RESILIN_DEVICE_PASS
  if constexpr (std::same_as<T, float>) return ::logf(x); else return ::log(x);
#else
  return std::log(x);
#endif
}

template <std::floating_point T>
RESILIN_HD inline T sqrt(T x) noexcept {
#if RESILIN_DEVICE_PASS
  if constexpr (std::same_as<T, float>) return ::sqrtf(x); else return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}

/// x y + z with one rounding (the hardware fma where there is one): written out where two code
/// paths must give the same bits whatever the compiler contracts on its own.
template <std::floating_point T>
RESILIN_HD inline T fma(T x, T y, T z) noexcept {
#if RESILIN_DEVICE_PASS
  if constexpr (std::same_as<T, float>) return ::fmaf(x, y, z); else return ::fma(x, y, z);
#else
  return std::fma(x, y, z);
#endif
}

/// Hides v from the optimiser (an empty asm with v as its operand: no instruction), so that no
/// multiply-add is contracted across it: for float and double on the host (the emulated device
/// included); other types and the device pass are left as they are.
template <class T>
RESILIN_HD inline void opaque(T& v) noexcept {
#if !RESILIN_DEVICE_PASS || defined(RESILIN_CUDA_EMULATION)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
#if defined(__GNUC__) && defined(__x86_64__)
    asm("" : "+x"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
    asm("" : "+w"(v));
#elif defined(__GNUC__)
    asm("" : "+m"(v));
#endif
  }
#else
  (void)v;
#endif
}

/// x y rounded on its own, never fused into an addition that follows (where another engine
/// cannot fuse it): the device's round-to-nearest products, opaque on the host.
template <std::floating_point T>
RESILIN_HD inline T rounded_product(T x, T y) noexcept {
#if RESILIN_DEVICE_PASS && !defined(RESILIN_CUDA_EMULATION)
  if constexpr (std::same_as<T, float>) return __fmul_rn(x, y); else return __dmul_rn(x, y);
#else
  T p = x * y;
  opaque(p);
  return p;
#endif
}

/// 1/t capped at the largest finite value, so that a zero gap times it stays 0 (not 0 * inf =
/// NaN) should 1/t overflow. The smoothing rules refuse subnormal temperatures, whose capped
/// inverse would make gaps below about 4e-306 (double) count for too little.
template <std::floating_point T>
RESILIN_HD constexpr T inverse_temperature(T t) noexcept {
  T const inv = T(1) / t;
  T const cap = static_cast<T>(sizeof(T) == 4 ? 3.4028234663852886e38 : 1.7976931348623157e308);
  return inv < cap ? inv : cap;
}

template <std::floating_point T>
RESILIN_HD constexpr T abs(T x) noexcept { return x < T(0) ? -x : x; }
template <std::floating_point T>
RESILIN_HD constexpr T min(T a, T b) noexcept { return b < a ? b : a; }
template <std::floating_point T>
RESILIN_HD constexpr T max(T a, T b) noexcept { return a < b ? b : a; }
/// Lane-wise choice; for scalars a plain conditional (the SIMD pack type overloads it).
template <std::floating_point T>
RESILIN_HD constexpr T select(bool c, T a, T b) noexcept { return c ? a : b; }
template <std::floating_point T>
RESILIN_HD constexpr bool is_inf_pos(T x) noexcept { return x == infinity<T>(); }

/// log(1 + s) for 0 <= s < inf, also where s is below the rounding of 1 (there log(1 + s) is
/// 0, an error of s, which times gamma was all of a small soft-min value: a float S(x, x) of
/// -4.5e-8 at gamma = 0.01 came out 1.1e-3 off). Goldberg's form log(u) s / (u - 1) with
/// u = 1 + s, and s itself where u rounds to 1: a few ulp wherever log is. Scalars or host SIMD
/// packs of T (log and select by argument-dependent lookup).
template <class T, class V>
RESILIN_HD RESILIN_INLINE V log1p_nonneg(V s) noexcept {
  using math::log;
  V const one(T(1));
  V const u = one + s;
  V const d = u - one;  // exact (Sterbenz)
  return select(d == V(T(0)), s, log(u) * (s / select(d == V(T(0)), one, d)));
}

/// Whether x is finite (x - x is 0, not NaN), as select takes it: scalars or host SIMD packs.
template <class V>
RESILIN_HD RESILIN_INLINE auto is_finite(V x) noexcept {
  V const z = x - x;
  return z == z;
}

/// x where it is a number, `zero` where it is NaN: for products of a weight and a difference of
/// finite samples that overflowed to +-inf, where a zero weight makes 0 * inf = NaN of a product
/// whose true value is 0 (inputs are checked finite, so nothing else makes NaN there). Scalars
/// or host SIMD packs (select by argument-dependent lookup).
template <class V>
RESILIN_HD RESILIN_INLINE V zero_if_nan(V x, V zero) noexcept {
  return select(x == x, x, zero);
}

}  // namespace resilin::math

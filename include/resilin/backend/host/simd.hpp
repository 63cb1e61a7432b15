#pragma once
// A small SIMD pack for the host traversal (GCC/Clang vector extensions, so it builds for any
// target and the compiler picks SSE2/AVX2/AVX-512/NEON as enabled by -m flags; intrinsics only
// for sqrt, which has no errno-free vector builtin). Its width: simd_abi.hpp.
// Only what the strip wavefront needs: arithmetic, compare/select, min/max, lane shifts, and
// exp/log accurate to a few ulp over the ranges the soft-min uses. Never used on the device.
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/config.hpp>
#if !defined(__CUDA_ARCH__)
#if defined(__SSE2__) || defined(__AVX__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif
#endif

namespace resilin::simd::inline RESILIN_HOST_ABI {

inline constexpr int vector_bytes = RESILIN_SIMD_BYTES;  // simd_abi.hpp

template <class T>
inline constexpr int lanes = vector_bytes / static_cast<int>(sizeof(T));

namespace detail {
template <class T> struct int_of;
template <> struct int_of<float> { using type = std::int32_t; };
template <> struct int_of<double> { using type = std::int64_t; };
}  // namespace detail

#if !defined(__CUDA_ARCH__)

/// W lanes of T (W = lanes<T>), value semantics.
template <std::floating_point T>
struct pack {
  static constexpr int width = lanes<T>;
  using value_type = T;
  using int_type = typename detail::int_of<T>::type;
  typedef T native __attribute__((vector_size(vector_bytes)));
  typedef int_type mask __attribute__((vector_size(vector_bytes)));
  native v;

  pack() noexcept = default;
  RESILIN_INLINE pack(T x) noexcept : v(native{} + x) {}  // NOLINT: broadcast, like a scalar
  RESILIN_INLINE static pack wrap(native x) noexcept {
    pack r;
    r.v = x;
    return r;
  }

  RESILIN_INLINE static pack broadcast(T x) noexcept { return pack(x); }
  RESILIN_INLINE static pack load(T const* p) noexcept {
    pack r;
    std::memcpy(&r.v, p, sizeof(native));
    return r;
  }
  RESILIN_INLINE void store(T* p) const noexcept { std::memcpy(p, &v, sizeof(native)); }
  RESILIN_INLINE T operator[](int k) const noexcept { return v[k]; }
  RESILIN_INLINE void set(int k, T x) noexcept { v[k] = x; }
  /// The lanes' bits as integers, and back.
  RESILIN_INLINE mask bits() const noexcept {
    mask b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  }
  RESILIN_INLINE static pack from_bits(mask b) noexcept {
    pack r;
    std::memcpy(&r.v, &b, sizeof b);
    return r;
  }

  friend RESILIN_INLINE pack operator+(pack a, pack b) noexcept { return pack<T>::wrap(a.v + b.v); }
  friend RESILIN_INLINE pack operator-(pack a, pack b) noexcept { return pack<T>::wrap(a.v - b.v); }
  friend RESILIN_INLINE pack operator*(pack a, pack b) noexcept { return pack<T>::wrap(a.v * b.v); }
  friend RESILIN_INLINE pack operator/(pack a, pack b) noexcept { return pack<T>::wrap(a.v / b.v); }
  friend RESILIN_INLINE pack operator-(pack a) noexcept { return pack<T>::wrap(-a.v); }
  friend RESILIN_INLINE pack operator+(pack a, T b) noexcept { return pack<T>::wrap(a.v + b); }
  friend RESILIN_INLINE pack operator-(pack a, T b) noexcept { return pack<T>::wrap(a.v - b); }
  friend RESILIN_INLINE pack operator*(pack a, T b) noexcept { return pack<T>::wrap(a.v * b); }
  friend RESILIN_INLINE pack operator*(T a, pack b) noexcept { return pack<T>::wrap(a * b.v); }
  friend RESILIN_INLINE pack operator/(pack a, T b) noexcept { return pack<T>::wrap(a.v / b); }
  pack& operator+=(pack b) noexcept {
    v += b.v;
    return *this;
  }
};

template <class T> RESILIN_INLINE typename pack<T>::mask operator==(pack<T> a, pack<T> b) noexcept { return a.v == b.v; }
template <class T> RESILIN_INLINE typename pack<T>::mask operator<(pack<T> a, pack<T> b) noexcept { return a.v < b.v; }
template <class T> RESILIN_INLINE typename pack<T>::mask operator<=(pack<T> a, pack<T> b) noexcept { return a.v <= b.v; }

template <class T>
RESILIN_INLINE pack<T> select(typename pack<T>::mask c, pack<T> a, pack<T> b) noexcept {
  return pack<T>::wrap(c ? a.v : b.v);
}

/// Whether any lane of a comparison mask is set (lanes are 0 or all ones).
template <class M>
RESILIN_INLINE bool any(M m) noexcept {
  auto bits = m[0];
  for (std::size_t k = 1; k < sizeof(M) / sizeof(bits); ++k) bits |= m[k];
  return bits != 0;
}

/// bits >> s as a logical shift (AVX2 has none for signed 64-bit lanes, so the arithmetic shift
/// that >> means for them costs several instructions); for fields of non-negative numbers.
template <class M>
RESILIN_INLINE M shift_right_logical(M bits, int s) noexcept {
  using U = std::make_unsigned_t<std::remove_cvref_t<decltype(bits[0])>>;
  typedef U umask __attribute__((vector_size(sizeof(M))));
  umask u;  // memcpy, not a vector reinterpret_cast: nvcc's front end rejects the latter
  std::memcpy(&u, &bits, sizeof u);
  u = u >> s;
  std::memcpy(&bits, &u, sizeof u);
  return bits;
}
template <class T>
RESILIN_INLINE pack<T> min(pack<T> a, pack<T> b) noexcept { return pack<T>::wrap(b.v < a.v ? b.v : a.v); }
template <class T>
RESILIN_INLINE pack<T> max(pack<T> a, pack<T> b) noexcept { return pack<T>::wrap(a.v < b.v ? b.v : a.v); }

/// r[0] = above[W-1], r[k] = a[k-1]: moves every lane one row down the strip, the first lane
/// taking the last lane of the vector above.
template <class T>
RESILIN_INLINE pack<T> shift_in_front(pack<T> a, pack<T> above) noexcept {
  pack<T> r;
  if constexpr (pack<T>::width == 2) r.v = __builtin_shufflevector(a.v, above.v, 3, 0);
  else if constexpr (pack<T>::width == 4) r.v = __builtin_shufflevector(a.v, above.v, 7, 0, 1, 2);
  else if constexpr (pack<T>::width == 8)
    r.v = __builtin_shufflevector(a.v, above.v, 15, 0, 1, 2, 3, 4, 5, 6);
  else
    r.v = __builtin_shufflevector(a.v, above.v, 31, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
  return r;
}
template <class T>
RESILIN_INLINE pack<T> shift_in_front(pack<T> a, T s) noexcept { return shift_in_front(a, pack<T>(s)); }

/// r[W-1] = below[0], r[k] = a[k+1]: moves every lane one row up the strip, the last lane
/// taking the first lane of the vector below.
template <class T>
RESILIN_INLINE pack<T> shift_in_back(pack<T> a, pack<T> below) noexcept {
  pack<T> r;
  if constexpr (pack<T>::width == 2) r.v = __builtin_shufflevector(a.v, below.v, 1, 2);
  else if constexpr (pack<T>::width == 4) r.v = __builtin_shufflevector(a.v, below.v, 1, 2, 3, 4);
  else if constexpr (pack<T>::width == 8)
    r.v = __builtin_shufflevector(a.v, below.v, 1, 2, 3, 4, 5, 6, 7, 8);
  else
    r.v = __builtin_shufflevector(a.v, below.v, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  return r;
}
template <class T>
RESILIN_INLINE pack<T> shift_in_back(pack<T> a, T s) noexcept { return shift_in_back(a, pack<T>(s)); }

/// Lane-wise sqrt. The vector instruction where the target has one: __builtin_sqrt on each
/// lane keeps the errno path of a scalar call (no -fno-math-errno here), which costs a branch
/// and a scalar sqrt per lane and spills the pack around it.
template <class T>
RESILIN_INLINE pack<T> sqrt(pack<T> x) noexcept {
  using native = typename pack<T>::native;
  constexpr int bytes = static_cast<int>(sizeof(native));
#if defined(__AVX512F__)
  // the zero-masked forms with every lane selected: the same vsqrt, but g++ 12's plain
  // _mm512_sqrt_* pass an `undefined` source that its -Wuninitialized reports in our callers
  if constexpr (bytes == 64) {
    if constexpr (std::same_as<T, float>)
      return pack<T>::wrap((native)_mm512_maskz_sqrt_ps(__mmask16(0xFFFF), (__m512)x.v));
    else return pack<T>::wrap((native)_mm512_maskz_sqrt_pd(__mmask8(0xFF), (__m512d)x.v));
  }
#endif
#if defined(__AVX__)
  if constexpr (bytes == 32) {
    if constexpr (std::same_as<T, float>) return pack<T>::wrap((native)_mm256_sqrt_ps((__m256)x.v));
    else return pack<T>::wrap((native)_mm256_sqrt_pd((__m256d)x.v));
  }
#endif
#if defined(__SSE2__)
  if constexpr (bytes == 16) {
    if constexpr (std::same_as<T, float>) return pack<T>::wrap((native)_mm_sqrt_ps((__m128)x.v));
    else return pack<T>::wrap((native)_mm_sqrt_pd((__m128d)x.v));
  }
#elif defined(__aarch64__)
  if constexpr (bytes == 16) {
    if constexpr (std::same_as<T, float>) return pack<T>::wrap((native)vsqrtq_f32((float32x4_t)x.v));
    else return pack<T>::wrap((native)vsqrtq_f64((float64x2_t)x.v));
  }
#endif
  pack<T> r;
  for (int k = 0; k < pack<T>::width; ++k) {
    if constexpr (std::same_as<T, float>) r.v[k] = __builtin_sqrtf(x.v[k]);
    else r.v[k] = __builtin_sqrt(x.v[k]);
  }
  return r;
}

namespace detail {
/// One level of Estrin's scheme and the levels above it: a[k] + a[k+1] x^(2^level) pairs.
template <std::size_t Count, class P>
RESILIN_INLINE P estrin_levels(P const* a, P xp) noexcept {
  if constexpr (Count == 1) {
    return a[0];
  } else {
    P b[(Count + 1) / 2];
    RESILIN_UNROLL(16)
    for (std::size_t k = 0; k < Count / 2; ++k) b[k] = a[2 * k + 1] * xp + a[2 * k];
    if constexpr (Count % 2 == 1) b[Count / 2] = a[Count - 1];
    return estrin_levels<(Count + 1) / 2>(b, xp * xp);
  }
}
}  // namespace detail

/// sum_k c[k] x^k by Estrin's scheme: pairs, then pairs of pairs with x^2, x^4, ... The
/// dependency chain is log2(N) multiply-adds deep instead of Horner's N, which matters where
/// the polynomial sits on a recursion's critical path. Fully unrolled at compile time. P is a
/// pack, or several packs as one value (packs.hpp).
template <class P, class T, std::size_t N>
RESILIN_INLINE P polynomial(P x, T const (&c)[N]) noexcept {
  constexpr std::size_t half = (N + 1) / 2;
  P a[half];
  RESILIN_UNROLL(16)
  for (std::size_t k = 0; k < half; ++k)
    a[k] = 2 * k + 1 < N ? c[2 * k + 1] * x + c[2 * k] : P(c[2 * k]);
  return detail::estrin_levels<half>(a, x * x);
}

namespace detail {
// exp and log written once over P, a pack or several packs as one value (packs.hpp): the
// same operations lane for lane, so both give the same bits.

/// exp(x), a few ulp (test_simd_math: 2.1 in double, 1.7 in float); results below the smallest
/// normal flush to +0 (exp(-inf) = 0). Above about 709.43 (88.37 in float) it returns +inf
/// although the result is finite up to 709.78: the scale 2^k is built as one power of two. The
/// library's arguments are <= 0 (soft-min gaps, -cost / gamma).
template <class P>
RESILIN_INLINE P exp_of(P x) noexcept {
  using T = typename P::value_type;
  using I = typename P::int_type;
  if constexpr (std::same_as<T, double>) {
    constexpr T lo = -708.3964185322641, hi = 709.782712893384;
    P const xc = min(max(x, P::broadcast(lo)), P::broadcast(hi));
    constexpr T magic = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
    P const t = xc * 1.4426950408889634 + magic;
    P const k = t - magic;
    P const r = xc - k * 0.6931471803691238 - k * 1.9082149292705877e-10;
    // 1 + r + r^2 q(r), q of degree 9 fitted by Remez for the least relative error on
    // |r| <= ln2/2 (1.1e-17 with these coefficients, exactly as doubles; Taylor needs degree 13)
    constexpr T c[12] = {1.0,
                         1.0,
                         0.5000000000000011,
                         0.16666666666666413,
                         0.041666666666530267,
                         0.00833333333349434,
                         0.001388888894359789,
                         0.00019841269506762916,
                         2.480149313594894e-05,
                         2.755758628212554e-06,
                         2.7630234016258445e-07,
                         2.5000067167501987e-08};
    P const p = polynomial(r, c);
    P const scale = P::from_bits((t.bits() + I(1023)) << 52);
    return select(x < P::broadcast(lo), P::broadcast(T(0)), p * scale);
  } else {
    constexpr T lo = -87.33654f, hi = 88.72283f;
    P const xc = min(max(x, P::broadcast(lo)), P::broadcast(hi));
    constexpr T magic = 12582912.0f;  // 1.5 * 2^23
    P const t = xc * 1.44269504f + magic;
    P const k = t - magic;
    P const r = xc - k * 0.693359375f - k * -2.12194440e-4f;
    // the same form, q of degree 4 (3.8e-9 relative; Taylor needs degree 7)
    constexpr T c[7] = {1.0f, 1.0f, 0.4999999403953552f, 0.1666652113199234f, 0.04166838899254799f,
                        0.008368710055947304f, 0.0013814613921567798f};
    P const p = polynomial(r, c);
    P const scale = P::from_bits((t.bits() + I(127)) << 23);
    return select(x < P::broadcast(lo), P::broadcast(T(0)), p * scale);
  }
}

/// log(x) for positive normal x (test_simd_math: 1.9 ulp in double and float), log(0) = -inf.
/// Subnormals, inf and NaN are not inputs of the soft-min (its argument lies in [1, 3]).
template <class P>
RESILIN_INLINE P log_of(P x) noexcept {
  using T = typename P::value_type;
  using I = typename P::int_type;
  typename P::mask const bits = x.bits();
  constexpr int mant = std::numeric_limits<T>::digits - 1;
  constexpr I bias = std::numeric_limits<T>::max_exponent - 1;
  constexpr I mant_mask = (I(1) << mant) - 1;
  typename P::mask e = shift_right_logical(bits, mant) - bias;  // x > 0: the sign bit is 0
  typename P::mask fb = (bits & mant_mask) | (bias << mant);  // f in [1, 2)
  P f = P::from_bits(fb);
  auto const big = P::broadcast(T(1.4142135623730951)) < f;  // f > sqrt(2): use f / 2
  f = select(big, f * T(0.5), f);
  e = e - big;                                             // mask lanes are -1 where true
  // exponent to floating point without an int64 -> double instruction (absent before
  // AVX-512): add it to the bits of 1.5 * 2^mant and subtract that value again
  constexpr T magic = T(3) * T(I(1) << (mant - 1));
  P const ef = P::from_bits(P(magic).bits() + e) - magic;
  P const z = (f - T(1)) / (f + T(1));                     // |z| <= 0.1716
  P const z2 = z * z;
  P s;
  // 2 atanh(z) = 2z + z s(z^2): s(w) = w (c0 + c1 w + ...) fitted by Remez for the least
  // error relative to 2 atanh(z) on w <= 0.1716^2 (1.4e-18 in double with 7 terms, 8.2e-10 in
  // float with 3; the series 2 w^k / (2k + 1) needs 10 and 4)
  if constexpr (std::same_as<T, double>) {
    s = P::broadcast(T(0.14795474820373347));
    s = s * z2 + T(0.15314098865608214);
    s = s * z2 + T(0.1818356240417442);
    s = s * z2 + T(0.2222219861079568);
    s = s * z2 + T(0.28571428742015487);
    s = s * z2 + T(0.3999999999941637);
    s = s * z2 + T(0.6666666666666734);
    s = s * z2;
  } else {
    s = P::broadcast(T(0.29870936274528503f));
    s = s * z2 + T(0.39977574348449707f);
    s = s * z2 + T(0.6666677594184875f);
    s = s * z2;
  }
  P const logf = z * s + z * T(2);                         // 2 atanh(z)
  P const r = ef * T(0.6931471805599453) + logf;
  return select(x == P::broadcast(T(0)), P::broadcast(-std::numeric_limits<T>::infinity()), r);
}
}  // namespace detail

/// exp(x), a few ulp (test_simd_math: 2.1 in double, 1.7 in float); results below the smallest
/// normal flush to +0 (exp(-inf) = 0). Above about 709.43 (88.37 in float) it returns +inf
/// although the result is finite up to 709.78: the scale 2^k is built as one power of two. The
/// library's arguments are <= 0 (soft-min gaps, -cost / gamma).
template <class T>
RESILIN_INLINE pack<T> exp(pack<T> x) noexcept { return detail::exp_of(x); }

/// log(x) for positive normal x (a few ulp), log(0) = -inf (see detail::log_of).
template <class T>
RESILIN_INLINE pack<T> log(pack<T> x) noexcept { return detail::log_of(x); }

#else  // nvcc's device pass

// nvcc compiles every RESILIN_HD template that host code instantiates for the device as well,
// and the host traversal instantiates the cell function with packs. The device pass cannot
// represent GCC vectors, so there the pack is an inert placeholder with the same interface:
// those instantiations exist but are never executed (the host pass sees the real pack above).
template <std::floating_point T>
struct pack {
  static constexpr int width = lanes<T>;
  using value_type = T;
  using int_type = typename detail::int_of<T>::type;
  struct mask {  // integer lanes: the operators the host code applies to its GCC masks
    int_type v[width];
    RESILIN_HD int_type operator[](int) const noexcept { return 0; }
    RESILIN_HD int_type& operator[](int k) noexcept { return v[k]; }
    template <class U> friend RESILIN_HD mask operator<=(mask a, U) noexcept { return a; }
    template <class U> friend RESILIN_HD mask operator&(mask a, U) noexcept { return a; }
    template <class U> friend RESILIN_HD mask operator|(mask a, U) noexcept { return a; }
    template <class U> friend RESILIN_HD mask operator+(mask a, U) noexcept { return a; }
    template <class U> friend RESILIN_HD mask operator-(mask a, U) noexcept { return a; }
    template <class U> friend RESILIN_HD mask operator<<(mask a, U) noexcept { return a; }
    template <class U> friend RESILIN_HD mask operator>>(mask a, U) noexcept { return a; }
  };
  T v[width];

  pack() noexcept = default;
  RESILIN_HD pack(T) noexcept : v{} {}  // NOLINT
  static pack broadcast(T x) noexcept { return pack(x); }
  static pack load(T const*) noexcept { return pack(T(0)); }
  void store(T*) const noexcept {}
  T operator[](int) const noexcept { return T(0); }
  void set(int, T) noexcept {}
  mask bits() const noexcept { return {}; }
  static pack from_bits(mask) noexcept { return pack(T(0)); }
  friend RESILIN_HD pack operator+(pack a, pack) noexcept { return a; }
  friend RESILIN_HD pack operator-(pack a, pack) noexcept { return a; }
  friend RESILIN_HD pack operator*(pack a, pack) noexcept { return a; }
  friend RESILIN_HD pack operator/(pack a, pack) noexcept { return a; }
  friend RESILIN_HD pack operator-(pack a) noexcept { return a; }
  friend RESILIN_HD pack operator+(pack a, T) noexcept { return a; }
  friend RESILIN_HD pack operator-(pack a, T) noexcept { return a; }
  friend RESILIN_HD pack operator*(pack a, T) noexcept { return a; }
  friend RESILIN_HD pack operator*(T, pack b) noexcept { return b; }
  friend RESILIN_HD pack operator/(pack a, T) noexcept { return a; }
  RESILIN_HD pack& operator+=(pack) noexcept { return *this; }
};
template <class T> RESILIN_HD typename pack<T>::mask operator==(pack<T>, pack<T>) noexcept { return {}; }
template <class T> RESILIN_HD typename pack<T>::mask operator<(pack<T>, pack<T>) noexcept { return {}; }
template <class T> RESILIN_HD typename pack<T>::mask operator<=(pack<T>, pack<T>) noexcept { return {}; }
template <class T> RESILIN_HD pack<T> select(typename pack<T>::mask, pack<T> a, pack<T>) noexcept { return a; }
template <class T> RESILIN_HD pack<T> min(pack<T> a, pack<T>) noexcept { return a; }
template <class T> RESILIN_HD pack<T> max(pack<T> a, pack<T>) noexcept { return a; }
template <class T> RESILIN_HD pack<T> exp(pack<T> a) noexcept { return a; }
template <class T> RESILIN_HD pack<T> log(pack<T> a) noexcept { return a; }
template <class T> RESILIN_HD pack<T> sqrt(pack<T> a) noexcept { return a; }
template <class T, std::size_t N> pack<T> polynomial(pack<T> x, T const (&)[N]) noexcept { return x; }
template <class M> M shift_right_logical(M bits, int) noexcept { return bits; }
template <class M> bool any(M) noexcept { return false; }
template <class T, class U> pack<T> shift_in_front(pack<T> a, U) noexcept { return a; }
template <class T, class U> pack<T> shift_in_back(pack<T> a, U) noexcept { return a; }

#endif

}  // namespace resilin::simd

#pragma once
// A few packs as one value: every operation applies to the packs in turn, so code written once
// over a value type (a cost model's transitions, the soft-min) runs two independent vectors
// interleaved, operation by operation.
// Why: a pack's exp, log or soft-min is a dependency chain of 35-130 cycles. Evaluated a vector
// at a time, the waiting operations of one chain fill the core's scheduler before the next
// chain's independent work is reached; GCC does not reorder them on x86 (no first scheduling
// pass). Measured on Zen 3 (AVX2, double), stand-alone: exp then log 42 -> 33 cycles per vector,
// the 3-way soft-min 74 -> 61 (4 packs at once). In the strip traversal, two at a time (soft-MSM's
// up and left transitions, and the soft-mins of vectors 2q and 2q + 1) gave soft-MSM values
// +3 to +15 % and value+grad -3 to +12 %; four at a time lost 1.8x to register spills
// (bench/results/2026-12-01-epyc2c-host.md, session 6). The operations are those of the single
// packs, lane for lane, so the results are the same bits.
#include <concepts>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/config.hpp>

namespace resilin::simd::inline RESILIN_HOST_ABI {

#if !defined(__CUDA_ARCH__)

// Forced inline where the compiler optimises; at -O0 (the sanitizer build) plain inline
// functions: forced, every element-wise loop of an exp or log is copied into every caller, and
// one test file took 5.7 instead of 3.2 minutes to compile with ASan.
#if defined(__OPTIMIZE__)
#define RESILIN_PACKS_INLINE RESILIN_INLINE
#else
#define RESILIN_PACKS_INLINE inline
#endif

// a op b element by element for K-element values Self (member v[K]), and a op scalar
#define RESILIN_ELEMENTWISE_OP(Self, Scalar, op)                                               \
  friend RESILIN_PACKS_INLINE Self operator op(Self a, Self const& b) noexcept {                      \
    RESILIN_UNROLL(16)                                                                         \
    for (int k = 0; k < K; ++k) a.v[k] = a.v[k] op b.v[k];                                     \
    return a;                                                                                  \
  }                                                                                            \
  friend RESILIN_PACKS_INLINE Self operator op(Self a, Scalar b) noexcept {                          \
    RESILIN_UNROLL(16)                                                                         \
    for (int k = 0; k < K; ++k) a.v[k] = a.v[k] op b;                                          \
    return a;                                                                                  \
  }

/// K masks of packs as one mask (the comparison of two packs<T, K>).
template <class M, int K>
struct mask_array {
  M v[K];
  using lane_type = std::remove_cvref_t<decltype(M{}[0])>;

  RESILIN_ELEMENTWISE_OP(mask_array, lane_type, +)
  RESILIN_ELEMENTWISE_OP(mask_array, lane_type, -)
  RESILIN_ELEMENTWISE_OP(mask_array, lane_type, &)
  RESILIN_ELEMENTWISE_OP(mask_array, lane_type, |)
  friend RESILIN_PACKS_INLINE mask_array operator<<(mask_array a, int s) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) a.v[k] = a.v[k] << s;
    return a;
  }
};

template <class M, int K>
RESILIN_PACKS_INLINE mask_array<M, K> shift_right_logical(mask_array<M, K> bits, int s) noexcept {
  RESILIN_UNROLL(16)
  for (int k = 0; k < K; ++k) bits.v[k] = shift_right_logical(bits.v[k], s);
  return bits;
}

/// Whether any lane of any of the K masks is set.
template <class M, int K>
RESILIN_PACKS_INLINE bool any(mask_array<M, K> const& m) noexcept {
  M bits = m.v[0];
  RESILIN_UNROLL(16)
  for (int k = 1; k < K; ++k) bits = bits | m.v[k];
  return any(bits);
}

/// K packs of T: v[q] is vector q of a strip step.
template <std::floating_point T, int K>
struct packs {
  using element = pack<T>;
  using value_type = T;
  using int_type = typename element::int_type;
  using mask = mask_array<typename element::mask, K>;
  element v[K];

  packs() noexcept = default;
  RESILIN_PACKS_INLINE packs(T x) noexcept {  // NOLINT: broadcast, like a scalar
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) v[k] = element(x);
  }
  RESILIN_PACKS_INLINE static packs broadcast(T x) noexcept { return packs(x); }
  /// The lanes' bits as integers, and back (pack by pack: no memory round trip).
  RESILIN_PACKS_INLINE mask bits() const noexcept {
    mask b;
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) b.v[k] = v[k].bits();
    return b;
  }
  RESILIN_PACKS_INLINE static packs from_bits(mask const& b) noexcept {
    packs r;
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) r.v[k] = element::from_bits(b.v[k]);
    return r;
  }
  /// Two packs as one (K = 2).
  RESILIN_PACKS_INLINE static packs of(element a, element b) noexcept
    requires(K == 2)
  {
    packs r;
    r.v[0] = a;
    r.v[1] = b;
    return r;
  }

  RESILIN_ELEMENTWISE_OP(packs, T, +)
  RESILIN_ELEMENTWISE_OP(packs, T, -)
  RESILIN_ELEMENTWISE_OP(packs, T, *)
  RESILIN_ELEMENTWISE_OP(packs, T, /)
  friend RESILIN_PACKS_INLINE packs operator*(T a, packs b) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) b.v[k] = a * b.v[k];
    return b;
  }
  friend RESILIN_PACKS_INLINE packs operator-(packs a) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) a.v[k] = -a.v[k];
    return a;
  }
  packs& operator+=(packs const& b) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) v[k] += b.v[k];
    return *this;
  }

#define RESILIN_PACKS_COMPARE(op)                                                              \
  friend RESILIN_PACKS_INLINE mask operator op(packs const& a, packs const& b) noexcept {            \
    mask r;                                                                                    \
    RESILIN_UNROLL(16)                                                                         \
    for (int k = 0; k < K; ++k) r.v[k] = a.v[k] op b.v[k];                                     \
    return r;                                                                                  \
  }
  RESILIN_PACKS_COMPARE(==)
  RESILIN_PACKS_COMPARE(<)
  RESILIN_PACKS_COMPARE(<=)
#undef RESILIN_PACKS_COMPARE

  friend RESILIN_PACKS_INLINE packs select(mask const& c, packs const& a, packs b) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) b.v[k] = simd::select(c.v[k], a.v[k], b.v[k]);
    return b;
  }
  friend RESILIN_PACKS_INLINE packs min(packs a, packs const& b) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) a.v[k] = simd::min(a.v[k], b.v[k]);
    return a;
  }
  friend RESILIN_PACKS_INLINE packs max(packs a, packs const& b) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) a.v[k] = simd::max(a.v[k], b.v[k]);
    return a;
  }
  friend RESILIN_PACKS_INLINE packs sqrt(packs a) noexcept {
    RESILIN_UNROLL(16)
    for (int k = 0; k < K; ++k) a.v[k] = simd::sqrt(a.v[k]);
    return a;
  }
  friend RESILIN_PACKS_INLINE packs exp(packs const& a) noexcept { return detail::exp_of(a); }
  friend RESILIN_PACKS_INLINE packs log(packs const& a) noexcept { return detail::log_of(a); }
};

#undef RESILIN_ELEMENTWISE_OP
#undef RESILIN_PACKS_INLINE

#else  // nvcc's device pass: an inert placeholder, as pack is there (simd.hpp)

template <class M, int K>
struct mask_array {
  M v[K];
};
template <class M, int K> bool any(mask_array<M, K> const&) noexcept { return false; }

template <std::floating_point T, int K>
struct packs {
  using element = pack<T>;
  using value_type = T;
  using mask = mask_array<typename element::mask, K>;
  element v[K];

  packs() noexcept = default;
  RESILIN_HD packs(T) noexcept : v{} {}  // NOLINT
  static packs broadcast(T x) noexcept { return packs(x); }
  static packs of(element, element) noexcept { return packs(T(0)); }
  friend RESILIN_HD packs operator+(packs a, packs const&) noexcept { return a; }
  friend RESILIN_HD packs operator-(packs a, packs const&) noexcept { return a; }
  friend RESILIN_HD packs operator*(packs a, packs const&) noexcept { return a; }
  friend RESILIN_HD packs operator/(packs a, packs const&) noexcept { return a; }
  friend RESILIN_HD packs operator+(packs a, T) noexcept { return a; }
  friend RESILIN_HD packs operator-(packs a, T) noexcept { return a; }
  friend RESILIN_HD packs operator*(packs a, T) noexcept { return a; }
  friend RESILIN_HD packs operator/(packs a, T) noexcept { return a; }
  friend RESILIN_HD packs operator*(T, packs b) noexcept { return b; }
  friend RESILIN_HD packs operator-(packs a) noexcept { return a; }
  RESILIN_HD packs& operator+=(packs const&) noexcept { return *this; }
  friend RESILIN_HD mask operator==(packs const&, packs const&) noexcept { return {}; }
  friend RESILIN_HD mask operator<(packs const&, packs const&) noexcept { return {}; }
  friend RESILIN_HD mask operator<=(packs const&, packs const&) noexcept { return {}; }
  friend RESILIN_HD packs select(mask const&, packs const& a, packs) noexcept { return a; }
  friend RESILIN_HD packs min(packs a, packs const&) noexcept { return a; }
  friend RESILIN_HD packs max(packs a, packs const&) noexcept { return a; }
  friend RESILIN_HD packs sqrt(packs a) noexcept { return a; }
  friend RESILIN_HD packs exp(packs const& a) noexcept { return a; }
  friend RESILIN_HD packs log(packs const& a) noexcept { return a; }
};

#endif

}  // namespace resilin::simd

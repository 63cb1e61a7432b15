#pragma once
// A counter-based random number generator for the Monte Carlo estimator (spec/cdtw.md B.3.7):
// Philox-4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011), written from the paper's description. A draw is a pure function of
// (seed, stream, sample), so any thread on the host or the device computes any sample on its
// own, and the same indices give bitwise the same numbers everywhere: no state, no sequence,
// no dependence on how the samples are split into chunks. RESILIN_HD, constexpr, no allocation.
#include <concepts>
#include <cstdint>
#include <resilin/core/config.hpp>

namespace resilin::fcdtw {

/// The 128-bit counter (input) or output block of Philox-4x32: four 32-bit words.
struct philox_block {
  std::uint32_t word[4];
};
/// The 64-bit Philox-4x32 key: two 32-bit words.
struct philox_key {
  std::uint32_t word[2];
};

namespace detail {
inline constexpr std::uint32_t philox_m0 = 0xD2511F53u;  // round multipliers
inline constexpr std::uint32_t philox_m1 = 0xCD9E8D57u;
inline constexpr std::uint32_t philox_w0 = 0x9E3779B9u;  // Weyl key increments (golden ratio,
inline constexpr std::uint32_t philox_w1 = 0xBB67AE85u;  // sqrt(3) - 1)
}  // namespace detail

/// Philox-4x32 with `rounds` rounds (10 is the standard, crush-resistant choice).
/// Each round: (hi, lo) = m0 * c0 and m1 * c2 as 64-bit products, then
/// c' = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0); the key advances by the Weyl increments
/// between rounds.
template <int Rounds = 10>
RESILIN_HD constexpr philox_block philox4x32(philox_block c, philox_key k) noexcept {
  for (int r = 0; r < Rounds; ++r) {
    if (r > 0) {
      k.word[0] += detail::philox_w0;
      k.word[1] += detail::philox_w1;
    }
    std::uint64_t const p0 = static_cast<std::uint64_t>(detail::philox_m0) * c.word[0];
    std::uint64_t const p1 = static_cast<std::uint64_t>(detail::philox_m1) * c.word[2];
    auto const hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    auto const hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = philox_block{{hi1 ^ c.word[1] ^ k.word[0], lo1, hi0 ^ c.word[3] ^ k.word[1], lo0}};
  }
  return c;
}

/// Philox-4x32-10, the generator the Random123 known-answer vectors specify.
RESILIN_HD constexpr philox_block philox4x32_10(philox_block c, philox_key k) noexcept {
  return philox4x32<10>(c, k);
}

/// A uniform in [0, 1) from 24 random bits: exact in float, every value a multiple of 2^-24.
RESILIN_HD constexpr float uniform_float(std::uint32_t bits) noexcept {
  return static_cast<float>(bits >> 8) * 0x1p-24f;
}
/// A uniform in [0, 1) from 53 random bits: exact in double, every value a multiple of 2^-53.
RESILIN_HD constexpr double uniform_double(std::uint32_t high, std::uint32_t low) noexcept {
  std::uint64_t const bits = (static_cast<std::uint64_t>(high) << 32) | low;
  return static_cast<double>(bits >> 11) * 0x1p-53;
}

/// Independent uniform streams indexed by (seed, stream, sample); typically stream = the pair
/// index and sample = the Monte Carlo draw. The key is the seed, the counter is
/// (sample, stream) as four 32-bit words, so distinct indices never share a Philox block.
/// Each (stream, sample) yields 4 words: 4 float uniforms or 2 double uniforms ("lanes").
/// Trivially copyable: pass it to kernels by value.
struct counter_rng {
  std::uint64_t seed = 0;

  /// The 128 random bits of (stream, sample).
  RESILIN_HD constexpr philox_block bits(std::uint64_t stream,
                                         std::uint64_t sample) const noexcept {
    philox_block const c{{static_cast<std::uint32_t>(sample),
                          static_cast<std::uint32_t>(sample >> 32),
                          static_cast<std::uint32_t>(stream),
                          static_cast<std::uint32_t>(stream >> 32)}};
    philox_key const k{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
    return philox4x32_10(c, k);
  }

  /// A uniform in [0, 1) for (stream, sample); lane in [0, 4) for float, [0, 2) for double
  /// gives further independent uniforms of the same sample.
  template <std::floating_point T>
  RESILIN_HD constexpr T uniform(std::uint64_t stream, std::uint64_t sample,
                                 int lane = 0) const noexcept {
    philox_block const b = bits(stream, sample);
    if constexpr (sizeof(T) == sizeof(float)) {
      return uniform_float(b.word[lane & 3]);
    } else {
      int const l = 2 * (lane & 1);
      return static_cast<T>(uniform_double(b.word[l], b.word[l + 1]));
    }
  }
};

}  // namespace resilin::fcdtw

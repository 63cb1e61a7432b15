// The counter-based generator of the Monte Carlo estimator: Philox-4x32-10 against the
// published Random123 known-answer vectors, then the uniform streams built on it (range,
// moments, bin counts, independence of lanes, streams and seeds, determinism).
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>
#include "support/catch.hpp"
#include <resilin/fcdtw/rng.hpp>

using resilin::fcdtw::counter_rng;
using resilin::fcdtw::philox4x32_10;
using resilin::fcdtw::philox_block;
using resilin::fcdtw::philox_key;

namespace {

std::array<std::uint32_t, 4> words(philox_block b) {
  return {b.word[0], b.word[1], b.word[2], b.word[3]};
}

// Compile-time evaluation: the generator is constexpr (and so usable in device code without
// relaxed constexpr flags).
constexpr philox_block kat_zero = philox4x32_10(philox_block{{0, 0, 0, 0}}, philox_key{{0, 0}});
static_assert(kat_zero.word[0] == 0x6627e8d5u && kat_zero.word[3] == 0x9b00dbd8u);

template <class T>
struct moments {
  double mean = 0, variance = 0;
};

template <class T>
moments<T> sample_moments(counter_rng const& rng, std::uint64_t stream, int n, int lane) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    double const u = rng.uniform<T>(stream, static_cast<std::uint64_t>(i), lane);
    s += u;
    s2 += u * u;
  }
  double const mean = s / n;
  return {mean, s2 / n - mean * mean};
}

}  // namespace

TEST_CASE("philox4x32_10 reproduces the Random123 known-answer vectors", "[rng]") {
  using W = std::array<std::uint32_t, 4>;
  CHECK(words(philox4x32_10({{0, 0, 0, 0}}, {{0, 0}})) ==
        W{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(words(philox4x32_10({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                            {{0xffffffffu, 0xffffffffu}})) ==
        W{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(words(philox4x32_10({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                            {{0xa4093822u, 0x299f31d0u}})) ==
        W{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("uniform conversions stay inside [0, 1) and hit both ends of the range", "[rng]") {
  using resilin::fcdtw::uniform_double;
  using resilin::fcdtw::uniform_float;
  CHECK(uniform_float(0u) == 0.0f);
  CHECK(uniform_float(0xffffffffu) < 1.0f);
  CHECK(uniform_float(0xffffffffu) == 1.0f - 0x1p-24f);
  CHECK(uniform_double(0u, 0u) == 0.0);
  CHECK(uniform_double(0xffffffffu, 0xffffffffu) < 1.0);
  CHECK(uniform_double(0xffffffffu, 0xffffffffu) == 1.0 - 0x1p-53);
  counter_rng const rng{12345};
  for (std::uint64_t i = 0; i < 20000; ++i) {
    float const f = rng.uniform<float>(3, i, static_cast<int>(i % 4));
    double const d = rng.uniform<double>(3, i, static_cast<int>(i % 2));
    REQUIRE((f >= 0.0f && f < 1.0f));
    REQUIRE((d >= 0.0 && d < 1.0));
  }
}

TEMPLATE_TEST_CASE("uniform streams have the moments and bin counts of U[0,1)", "[rng]", float,
                   double) {
  counter_rng const rng{0x5eed'0000'0000'0042ull};
  int const n = 200000;
  int const lanes = sizeof(TestType) == 4 ? 4 : 2;
  for (int lane = 0; lane < lanes; ++lane) {
    auto const m = sample_moments<TestType>(rng, 7, n, lane);
    // mean: s.d. sqrt(1/12/n) = 6.5e-4; variance: s.d. sqrt(1/180/n) = 1.7e-4.
    CHECK(std::abs(m.mean - 0.5) < 5 * std::sqrt(1.0 / 12.0 / n));
    CHECK(std::abs(m.variance - 1.0 / 12.0) < 5 * std::sqrt(1.0 / 180.0 / n));
  }
  // Pearson chi-square on 64 equal bins: 63 degrees of freedom, mean 63, s.d. 11.2;
  // 120 is beyond the 99.9999 % quantile.
  std::vector<int> bins(64, 0);
  for (int i = 0; i < n; ++i)
    ++bins[static_cast<std::size_t>(rng.uniform<TestType>(11, static_cast<std::uint64_t>(i)) * 64)];
  double chi2 = 0;
  double const expected = n / 64.0;
  for (int b : bins) chi2 += (b - expected) * (b - expected) / expected;
  CHECK(chi2 < 120.0);
  CHECK(chi2 > 25.0);  // and not suspiciously uniform (0.0001 % quantile is about 28)
}

TEST_CASE("lanes, neighbouring samples, streams and seeds are uncorrelated", "[rng]") {
  int const n = 100000;
  double const bound = 5.0 / std::sqrt(static_cast<double>(n));  // correlation s.d. 1/sqrt(n)
  auto correlation = [&](auto first, auto second) {
    double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; ++i) {
      double const a = first(static_cast<std::uint64_t>(i)), b = second(static_cast<std::uint64_t>(i));
      sa += a; sb += b; sab += a * b; saa += a * a; sbb += b * b;
    }
    double const cov = sab / n - (sa / n) * (sb / n);
    return cov / std::sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
  };
  counter_rng const r1{1}, r2{2};
  CHECK(std::abs(correlation([&](std::uint64_t i) { return r1.uniform<float>(0, i, 0); },
                             [&](std::uint64_t i) { return r1.uniform<float>(0, i, 1); })) < bound);
  CHECK(std::abs(correlation([&](std::uint64_t i) { return r1.uniform<double>(0, i, 0); },
                             [&](std::uint64_t i) { return r1.uniform<double>(0, i, 1); })) < bound);
  CHECK(std::abs(correlation([&](std::uint64_t i) { return r1.uniform<double>(0, i); },
                             [&](std::uint64_t i) { return r1.uniform<double>(0, i + 1); })) < bound);
  CHECK(std::abs(correlation([&](std::uint64_t i) { return r1.uniform<double>(0, i); },
                             [&](std::uint64_t i) { return r1.uniform<double>(1, i); })) < bound);
  CHECK(std::abs(correlation([&](std::uint64_t i) { return r1.uniform<double>(0, i); },
                             [&](std::uint64_t i) { return r2.uniform<double>(0, i); })) < bound);
}

TEST_CASE("draws are a pure function of (seed, stream, sample)", "[rng]") {
  counter_rng const a{99}, b{99}, c{100};
  int same_seed_other = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    REQUIRE(a.uniform<double>(5, i) == b.uniform<double>(5, i));
    REQUIRE(words(a.bits(5, i)) == words(b.bits(5, i)));
    if (a.uniform<double>(5, i) == c.uniform<double>(5, i)) ++same_seed_other;
    if (a.uniform<double>(5, i) == a.uniform<double>(6, i)) ++same_seed_other;
  }
  CHECK(same_seed_other == 0);
  // The high halves of the 64-bit indices reach the counter and the key.
  CHECK(words(a.bits(0, 1)) != words(a.bits(0, 1ull << 32 | 1)));
  CHECK(words(a.bits(1, 0)) != words(a.bits(1ull << 32 | 1, 0)));
  CHECK(words(counter_rng{7}.bits(0, 0)) != words(counter_rng{7 | 1ull << 40}.bits(0, 0)));
}

// Exact symmetry S(x, y) = S(y, x) and batch = single-pair bits, built for this machine
// (-march=native, where available): the other host tests build for the baseline ISA (two
// doubles per vector, no FMA), so they cannot see what wider vectors and contracted
// multiply-adds change. (Contracted, CDTW's diagonal length once rounded differently when the
// two spacings swapped: 39 of 1949 unequal-length pairs differed by 1 ulp. The second-order
// pass's backward, which recomputes the move weights beyond 32 MB, fused a step cost's product
// into the candidates where the forward did not: at -O3, 66 and 72 of 540 choices here.)
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"
#include "strip_helpers.hpp"

namespace r = resilin;
using r::index_t;
using resilin_test::random_values;

namespace {

template <class T, class M>
int asymmetric_pairs(M const& m, double amplitude, std::uint64_t seed) {
  int differ = 0;
  int const pairs = resilin_test::sanitized ? 60 : 300;  // the sanitizer build runs -O0
  for (int k = 0; k < pairs; ++k) {
    index_t const n = 1 + k % 37, len = k % 3 == 0 ? n : 1 + (k * 7) % 41;
    auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n), ++seed, -amplitude, amplitude));
    auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(len), ++seed, -amplitude, amplitude));
    T const a = r::value(m, r::view(x), r::view(y)), b = r::value(m, r::view(y), r::view(x));
    differ += !resilin_test::bits_equal(a, b);
  }
  return differ;
}

}  // namespace

TEMPLATE_TEST_CASE("native ISA: S(x, y) = S(y, x) bit for bit", "[symmetry][native]", float, double) {
  using T = TestType;
  for (auto const& band : {r::band_spec{}, r::band_spec::radius(2), r::band_spec::window(0.3)}) {
    INFO("band kind " << int(band.type()));
    CHECK(asymmetric_pairs<T>(r::measures::cdtw(band), 1.0, 10) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::soft_cdtw<T>(T(0.2), band), 1.0, 20) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::soft_dtw<T>(T(0.5), band), 1.0, 30) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::dtw(band), 1.0, 40) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::soft_msm<T>(T(1), 1, band), 1.5, 50) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::soft_msm<T>(T(0.1), 1, band), 6.0, 60) == 0);  // min-shifted lanes
    CHECK(asymmetric_pairs<T>(r::measures::msm(1.0, band), 1.0, 70) == 0);
  }
}

TEMPLATE_TEST_CASE("native ISA: divergences are symmetric bit for bit", "[symmetry][native]", float, double) {
  using T = TestType;
  // D(x, y) = S(x, y) - (S(x, x) + S(y, y)) / 2: the self terms are added before they are
  // subtracted, in value(), value_and_grad() and pairwise() alike
  for (auto const& band : {r::band_spec{}, r::band_spec::radius(2), r::band_spec::window(0.3)}) {
    INFO("band kind " << int(band.type()));
    CHECK(asymmetric_pairs<T>(r::measures::soft_dtw_divergence<T>(T(0.5), band), 1.0, 80) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::soft_msm_divergence<T>(T(1), 1, band), 1.5, 90) == 0);
    CHECK(asymmetric_pairs<T>(r::measures::soft_cdtw_divergence<T>(T(0.2), band), 1.0, 100) == 0);
  }
  index_t const nx = 7, ny = 9, L = 19;
  auto const xs = resilin_test::cast<T>(random_values(static_cast<std::size_t>(nx * L), 11));
  auto const ys = resilin_test::cast<T>(random_values(static_cast<std::size_t>(ny * (L + 3)), 12));
  auto const X = r::make_batch(std::span<T const>(xs), nx, L, 1);
  auto const Y = r::make_batch(std::span<T const>(ys), ny, L + 3, 1);
  auto const m = r::measures::soft_dtw_divergence<T>(T(1));
  std::vector<T> xy(static_cast<std::size_t>(nx * ny)), yx(xy.size());
  r::pairwise(r::host, m, X, Y, r::matrix_view<T>{xy.data(), nx, ny});
  r::pairwise(r::host, m, Y, X, r::matrix_view<T>{yx.data(), ny, nx});
  int differ = 0;
  for (index_t a = 0; a < nx; ++a)
    for (index_t b = 0; b < ny; ++b) {
      T const v = xy[static_cast<std::size_t>(a * ny + b)];
      differ += !resilin_test::bits_equal(v, yx[static_cast<std::size_t>(b * nx + a)]);
      differ += !resilin_test::bits_equal(v, r::value(m, X[a], Y[b]));
      std::vector<T> gx(static_cast<std::size_t>(L)), gy(static_cast<std::size_t>(L + 3));
      T const g = r::value_and_grad(m, X[a], Y[b], r::series_view<T>{gx.data(), L, 1},
                                    r::series_view<T>{gy.data(), L + 3, 1});
      T const h = r::value_and_grad(m, Y[b], X[a], r::series_view<T>{gy.data(), L + 3, 1},
                                    r::series_view<T>{gx.data(), L, 1});
      differ += !resilin_test::bits_equal(g, h);
    }
  CHECK(differ == 0);
}

TEMPLATE_TEST_CASE("native ISA: batches give the single-pair bits", "[batch][native]", float, double) {
  using T = TestType;
  index_t const B = 40, L = 23, d = 2;
  auto const xs = resilin_test::cast<T>(random_values(static_cast<std::size_t>(B * L * d), 5));
  auto const ys = resilin_test::cast<T>(random_values(static_cast<std::size_t>(B * (L + 2) * d), 6));
  auto const X = r::make_batch(std::span<T const>(xs), B, L, d);
  auto const Y = r::make_batch(std::span<T const>(ys), B, L + 2, d);
  auto independent = r::measures::soft_dtw<T>(T(1));
  independent.independent_channels = true;
  auto const check = [&](auto const& m) {
    std::vector<T> out(static_cast<std::size_t>(B));
    r::values(r::host.with_threads(2), m, X, Y, std::span<T>(out));
    for (index_t b = 0; b < B; ++b) CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(m, X[b], Y[b])));
  };
  check(r::measures::soft_dtw<T>(T(1)));  // lock-step groups
  check(independent);                     // pair by pair
  check(r::measures::dtw());
  check(r::measures::soft_msm<T>(T(1)));
  check(r::measures::soft_msm_divergence<T>(T(1)));
}

namespace {
// expected_penalty of one pair with the default limits against three others (the whole table
// with recomputed weights, segments with recomputed weights, segments with kept weights):
// the number of choices whose L, S or gradients differ in any bit
template <class T, class M>
int second_order_differences(M const& m, index_t n, index_t len, std::uint64_t seed) {
  namespace hd = r::host_detail;
  auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n), seed, -2, 2));
  auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(len), seed + 1, -2, 2));
  std::vector<T> gx0(static_cast<std::size_t>(n)), gy0(static_cast<std::size_t>(len)), gx1(gx0), gy1(gy0);
  r::series_view<T const> const xc{x.data(), n, 1}, yc{y.data(), len, 1};
  auto const omega = [&](index_t i, index_t j) { return T((i - j) * (i - j)) / T(n * len); };
  T s0 = 0, s1 = 0;
  T const l0 = hd::expected_penalty(m, xc, yc, omega, r::series_view<T>{gx0.data(), n, 1},
                                    r::series_view<T>{gy0.data(), len, 1}, T(1), &s0);
  int differ = 0;
  for (auto const lim : {hd::tangent_limits{std::size_t(1) << 40, 0}, hd::tangent_limits{64, 0},
                         hd::tangent_limits{300, std::size_t(1) << 40}}) {
    std::fill(gx1.begin(), gx1.end(), T(0));
    std::fill(gy1.begin(), gy1.end(), T(0));
    T const l1 = hd::expected_penalty(m, xc, yc, omega, r::series_view<T>{gx1.data(), n, 1},
                                      r::series_view<T>{gy1.data(), len, 1}, T(1), &s1, lim);
    differ += !(resilin_test::bits_equal(l0, l1) && resilin_test::bits_equal(s0, s1) &&
                resilin_test::bitwise_equal(gx0, gx1) && resilin_test::bitwise_equal(gy0, gy1));
  }
  return differ;
}
}  // namespace

TEMPLATE_TEST_CASE("native ISA: the second-order pass gives the same bits whatever it keeps",
                   "[second_order][native]", float, double) {
  // the whole table or segments, the move weights kept or recomputed (host_detail's limits,
  // small here so that these pairs take every choice): the same L, S and gradients
  using T = TestType;
  int differ = 0;
  int const pairs = resilin_test::sanitized ? 12 : 60;
  for (int k = 0; k < pairs; ++k) {
    index_t const n = 2 + (k * 5) % 37, len = 2 + (k * 11) % 31;
    std::uint64_t const seed = 900 + 2 * static_cast<std::uint64_t>(k);
    differ += second_order_differences<T>(r::measures::soft_dtw<T>(T(0.7)), n, len, seed);
    differ += second_order_differences<T>(r::measures::soft_msm<T>(T(0.5), T(0.3)), n, len, seed);
    differ += second_order_differences<T>(r::measures::soft_cdtw<T>(T(0.4)), n, len, seed);
  }
  INFO(differ << " of " << 9 * pairs << " choices differ");
  CHECK(differ == 0);
}

TEMPLATE_TEST_CASE("native ISA: first-order training gives the same bits whatever it keeps",
                   "[training][native]", float, double) {
  // the strip traversal's storage modes (R alone, soft-MSM's weights and gradient terms kept,
  // the row above every strip or every 2nd) at this build's ISA and -O3: the same value and
  // gradients, as the baseline tests check at -O1 without FMA
  using T = TestType;
  int differ = 0, compared = 0;
  auto const same = [&](T v0, T v1, std::vector<T> const& gx0, std::vector<T> const& gx1,
                        std::vector<T> const& gy0, std::vector<T> const& gy1) {
    ++compared;
    differ += !(resilin_test::bits_equal(v0, v1) && resilin_test::bitwise_equal(gx0, gx1) &&
                resilin_test::bitwise_equal(gy0, gy1));
  };
  for (int k = 0; k < (resilin_test::sanitized ? 8 : 40); ++k) {
    index_t const d = 1 + k % 3, n = 2 + (k * 13) % 71, len = 2 + (k * 29) % 67;
    auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n * d), 700 + 2 * k, -2, 2));
    auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(len * d), 701 + 2 * k, -2, 2));
    std::vector<T> gx0, gy0, gx1, gy1;
    auto const modes = [&](auto const& meas, index_t kept_side) {
      T const v0 = resilin_test::strip_value_and_grad(meas, x, y, d, 0, 0, gx0, gy0);
      if (kept_side > 0) {
        T const v1 = resilin_test::strip_value_and_grad(meas, x, y, d, kept_side, 0, gx1, gy1);
        same(v0, v1, gx0, gx1, gy0, gy1);
      }
      for (index_t every : {1, 2}) {
        T const v1 = resilin_test::strip_value_and_grad(meas, x, y, d, 0, every, gx1, gy1);
        same(v0, v1, gx0, gx1, gy0, gy1);
      }
    };
    modes(r::measures::soft_msm<T>(T(0.5), T(0.3)),
          3 + r::host_detail::soft_msm_lane_cost<T, T>::gradient_term_packs(d));
    modes(r::measures::soft_cdtw<T>(T(0.4)), 0);
    modes(r::measures::soft_dtw<T>(T(0.7)), 0);
  }
  INFO(differ << " of " << compared << " storage choices differ");
  CHECK(differ == 0);
}

TEST_CASE("native ISA: the half squared distance near overflow has one rounding in every engine",
          "[native]") {
  // Where (x - y)^2 overflows and its half does not, the half is taken first. The scalar
  // accumulate wrote sum + (d / 2) d, which a build that contracts fused into one rounding,
  // while the vectorised engines add the rounded term: 1 ulp apart in 6 of 6 cases found.
  auto const m = r::measures::dtw<r::half_squared_euclidean>();
  auto const check = [&](auto a, auto b) {
    using T = decltype(a);
    std::vector<T> const x{a, b}, y{T(0), T(0)};
    T const scalar = r::half_squared_euclidean::value(x.data(), y.data(), 2);
    r::series_view<T const> const xs{x.data(), 1, 2}, ys{y.data(), 1, 2};
    CHECK(scalar < std::numeric_limits<T>::infinity());
    CHECK(resilin_test::bits_equal(r::value(m, xs, ys), scalar));
    std::vector<T> out(1);
    r::values(r::host, m, r::make_batch(x, 1, 1, 2), r::make_batch(y, 1, 1, 2), std::span<T>(out));
    CHECK(resilin_test::bits_equal(out[0], scalar));
  };
  check(0x1.bc9b7e5024076p+508, 0x1.08bf86fbe47dcp+512);
  check(0x1.2c44ccp+60f, 0x1.349466p+64f);
}

// Shapes around the traversal's vector widths and strip edges: lengths 1..70 near multiples of
// 4, 8 and 16, very skinny pairs, and channel counts 1..64. Value, gradient and E against the
// naive oracle (reference (a)), in double and float, with and without a band.
#include <cmath>
#include <cstdint>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using resilin_test::random_values;

namespace {

template <class T>
void check_shape(r::index_t n, r::index_t m, r::index_t d, r::index_t radius, double gamma, std::uint64_t seed) {
  auto const x = random_values(static_cast<std::size_t>(n * d), seed);
  auto const y = random_values(static_cast<std::size_t>(m * d), seed + 1);
  auto const band = radius < 0 ? r::band_spec::none() : r::band_spec::radius(radius);
  auto const mask = ref::sakoe_chiba(n, m, band.radius_for(n, m));
  std::vector<double> gxr(x.size()), gyr(y.size());
  double const vr = ref::soft_dtw_value_and_grad(x.data(), y.data(), n, m, d, gamma, gxr.data(), gyr.data(),
                                                 nullptr, ref::point_cost::squared_euclidean, &mask);
  double const hr = ref::hard_dtw_value(x.data(), y.data(), n, m, d, ref::point_cost::squared_euclidean, &mask);
  auto const xt = resilin_test::cast<T>(x), yt = resilin_test::cast<T>(y);
  std::vector<T> gx(x.size()), gy(y.size());
  auto const meas = r::measures::soft_dtw(T(gamma), band);
  T const v = r::value(meas, r::view(xt, d), r::view(yt, d));
  T const vg = r::value_and_grad(meas, r::view(xt, d), r::view(yt, d), r::view(gx, d), r::view(gy, d));
  T const h = r::value(r::measures::dtw(band), r::view(xt, d), r::view(yt, d));
  bool const is_float = std::is_same_v<T, float>;
  // float inputs are rounded: compare with a tolerance that covers it.
  double const eps = is_float ? 2e-5 : 1e-12;
  double const scale = std::max(1.0, std::abs(vr));
  INFO("n = " << n << ", m = " << m << ", d = " << d << ", radius " << radius << ", gamma = " << gamma
              << (is_float ? " (float)" : " (double)"));
  CHECK(std::abs(double(v) - vr) <= eps * scale * (1 + double(n + m) / 64));
  CHECK(std::abs(double(vg) - vr) <= eps * scale * (1 + double(n + m) / 64));
  CHECK(std::abs(double(h) - hr) <= eps * std::max(1.0, hr) * (1 + double(n + m) / 64));
  double gmax = 1;
  for (double g : gxr) gmax = std::max(gmax, std::abs(g));
  for (double g : gyr) gmax = std::max(gmax, std::abs(g));
  // The oracle's Algorithm 2 multiplies n + m factors exp((r' - r - D)/gamma), each with a
  // cancellation error ~ulp(r)/gamma, so its E drifts with the path length: scale for that.
  double const gtol = (is_float ? 1e-3 : 1e-11) * gmax * (1 + double(n + m) / 16);
  CHECK(resilin_test::max_abs_diff(gx, gxr) <= gtol);
  CHECK(resilin_test::max_abs_diff(gy, gyr) <= gtol);
}

}  // namespace

TEMPLATE_TEST_CASE("lengths around vector widths and strip edges match the oracle", "[shapes]", float, double) {
  using T = TestType;
  std::uint64_t seed = 1000;
  std::vector<r::index_t> const lens{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 70};
  for (r::index_t n : lens)
    for (r::index_t m : {r::index_t(1), r::index_t(3), r::index_t(8), r::index_t(16), r::index_t(17), r::index_t(33), r::index_t(65)}) {
      check_shape<T>(n, m, 1, -1, 0.5, seed += 2);
      check_shape<T>(n, m, 2, 2, 0.5, seed += 2);
    }
}

TEMPLATE_TEST_CASE("channel counts 1..64 match the oracle", "[shapes]", float, double) {
  using T = TestType;
  std::uint64_t seed = 2000;
  for (r::index_t d : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64})
    for (auto [n, m] : {std::pair<r::index_t, r::index_t>{19, 13}, {13, 19}, {32, 32}}) {
      check_shape<T>(n, m, d, -1, 1.0, seed += 2);
      check_shape<T>(n, m, d, 1, 1.0, seed += 2);
    }
}

TEMPLATE_TEST_CASE("skinny and long pairs match the oracle", "[shapes]", float, double) {
  using T = TestType;
  std::uint64_t seed = 3000;
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{1, 1000}, {1000, 1}, {2, 700}, {700, 2}, {5, 400},
                      {400, 5}, {257, 255}, {511, 129}}) {
    check_shape<T>(n, m, 1, -1, 0.3, seed += 2);
    check_shape<T>(n, m, 3, 4, 0.3, seed += 2);
  }
}

TEST_CASE("batches of many tiny and mixed pairs equal single calls", "[shapes][batch]") {
  // The host traversal may run several pairs in lock-step across vector lanes: every lane must
  // give the single-pair result whatever its neighbours' lengths.
  r::index_t const B = 67, L = 21, d = 3;
  auto const u = random_values(2 * static_cast<std::size_t>(B), 4000, 0, 1);
  std::vector<r::index_t> lx(B), ly(B);
  for (r::index_t b = 0; b < B; ++b) {
    lx[static_cast<std::size_t>(b)] = 1 + static_cast<r::index_t>(u[static_cast<std::size_t>(b)] * L) % L;
    ly[static_cast<std::size_t>(b)] = 1 + static_cast<r::index_t>(u[static_cast<std::size_t>(B + b)] * L) % L;
  }
  auto const xs = random_values(static_cast<std::size_t>(B * L * d), 4001);
  auto const ys = random_values(static_cast<std::size_t>(B * L * d), 4002);
  auto const X = r::make_batch(std::span<double const>(xs), B, L, d, std::span<r::index_t const>(lx));
  auto const Y = r::make_batch(std::span<double const>(ys), B, L, d, std::span<r::index_t const>(ly));
  for (auto const& meas : {r::measures::soft_dtw(0.4), r::measures::soft_dtw(0.4, r::band_spec::radius(1))}) {
    std::vector<double> out(B);
    r::values(r::host.with_threads(8), meas, X, Y, std::span<double>(out));  // more threads than cores
    std::vector<double> D(static_cast<std::size_t>(B * B));
    r::pairwise(r::host.with_threads(3), meas, X, Y, r::matrix_view<double>{D.data(), B, B});
    for (r::index_t b = 0; b < B; ++b) {
      r::index_t const n = lx[static_cast<std::size_t>(b)], m = ly[static_cast<std::size_t>(b)];
      double const single = r::value(meas, X[b], Y[b]);
      auto const mask = ref::sakoe_chiba(n, m, meas.band.radius_for(n, m));
      INFO("pair " << b << " (" << n << " x " << m << ")");
      CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], single));
      CHECK(resilin_test::bits_equal(D[static_cast<std::size_t>(b * B + b)], single));
      CHECK(single == Approx(ref::soft_dtw_value(xs.data() + b * L * d, ys.data() + b * L * d, n, m, d, 0.4,
                                                 ref::point_cost::squared_euclidean, &mask))
                          .epsilon(1e-12));
    }
  }
}

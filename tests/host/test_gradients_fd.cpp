// Central finite differences in double (issue 2, item 6) for the gradients with respect to x and
// y: bands (n != m included, radius 0 widened), several channels, the three point distances,
// the divergence (equal and unequal lengths), ragged batches through values_and_grads (padding
// gets exactly 0, equal to per-pair single calls) and pairwise_grads with weights.
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using resilin_test::central_differences;
using resilin_test::max_rel_diff;
using resilin_test::random_values;

namespace {

constexpr double fd_tol = 2e-6;  // central differences, h = 1e-5: error ~1e-10 / curvature

/// FD check of value_and_grad for one pair and one measure: both gradients.
template <class Measure>
void check_pair_fd(Measure const& meas, std::vector<double> const& x, std::vector<double> const& y,
                   r::index_t d, double tol = fd_tol) {
  std::vector<double> gx(x.size(), 3.0), gy(y.size(), 3.0);
  double const v = r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
  REQUIRE(std::isfinite(v));
  CHECK(resilin_test::values_agree(v, r::value(meas, r::view(x, d), r::view(y, d))));
  auto const fx = central_differences(
      [&](std::vector<double> const& p) { return r::value(meas, r::view(p, d), r::view(y, d)); }, x);
  auto const fy = central_differences(
      [&](std::vector<double> const& p) { return r::value(meas, r::view(x, d), r::view(p, d)); }, y);
  CHECK(resilin_test::all_finite(gx));
  CHECK(resilin_test::all_finite(gy));
  CHECK(max_rel_diff(gx, fx) <= tol);
  CHECK(max_rel_diff(gy, fy) <= tol);
}

struct shape {
  r::index_t n, m, d;
};

}  // namespace

TEST_CASE("soft-DTW gradients match central differences, with and without bands", "[fd]") {
  std::uint64_t seed = 10;
  for (shape s : {shape{7, 7, 1}, shape{12, 9, 2}, shape{9, 12, 3}, shape{20, 6, 1}, shape{5, 17, 2},
                  shape{1, 6, 2}, shape{6, 1, 1}, shape{15, 15, 4}}) {
    auto const x = random_values(static_cast<std::size_t>(s.n * s.d), ++seed);
    auto const y = random_values(static_cast<std::size_t>(s.m * s.d), ++seed);
    for (auto const band : {r::band_spec::none(), r::band_spec::radius(0), r::band_spec::radius(1),
                            r::band_spec::radius(3), r::band_spec::window(0.25)}) {
      for (double gamma : {1.0, 0.1}) {
        INFO("n = " << s.n << ", m = " << s.m << ", d = " << s.d << ", radius "
                    << band.radius_for(s.n, s.m) << ", gamma = " << gamma);
        auto const meas = r::measures::soft_dtw(gamma, band);
        check_pair_fd(meas, x, y, s.d);
        // And the gradient equals the naive oracle's (Algorithm 2 with the documented mask).
        auto const mask = ref::sakoe_chiba(s.n, s.m, band.radius_for(s.n, s.m));
        std::vector<double> gxr(x.size()), gyr(y.size()), gx(x.size()), gy(y.size());
        double const vr = ref::soft_dtw_value_and_grad(x.data(), y.data(), s.n, s.m, s.d, gamma,
                                                       gxr.data(), gyr.data(), nullptr,
                                                       ref::point_cost::squared_euclidean, &mask);
        double const v = r::value_and_grad(meas, r::view(x, s.d), r::view(y, s.d), r::view(gx, s.d),
                                           r::view(gy, s.d));
        CHECK(v == Approx(vr).epsilon(1e-12).margin(1e-13));
        CHECK(max_rel_diff(gx, gxr) <= 1e-11);
        CHECK(max_rel_diff(gy, gyr) <= 1e-11);
      }
    }
  }
}

TEST_CASE("gradients for the three point distances match central differences", "[fd]") {
  auto const x = random_values(13 * 3, 71, -2, 2);
  auto const y = random_values(10 * 3, 72, -2, 2);
  for (auto const band : {r::band_spec::none(), r::band_spec::radius(2)}) {
    INFO("radius " << band.radius_for(13, 10));
    {
      check_pair_fd(r::measures::soft_dtw<double, r::squared_euclidean>(0.5, band), x, y, 3);
    }
    {
      check_pair_fd(r::measures::soft_dtw<double, r::half_squared_euclidean>(0.5, band), x, y, 3);
      // Half the squared cost at half the temperature is exactly half the value.
      double const a = r::value(r::measures::soft_dtw<double, r::half_squared_euclidean>(0.25, band),
                                r::view(x, 3), r::view(y, 3));
      double const b = r::value(r::measures::soft_dtw(0.5, band), r::view(x, 3), r::view(y, 3));
      CHECK(a == Approx(b / 2).epsilon(1e-13));
    }
    {
      check_pair_fd(r::measures::soft_dtw<double, r::l1_distance>(0.5, band), x, y, 3);
      auto const mask = ref::sakoe_chiba(13, 10, band.radius_for(13, 10));
      CHECK(r::value(r::measures::soft_dtw<double, r::l1_distance>(0.5, band), r::view(x, 3), r::view(y, 3)) ==
            Approx(ref::soft_dtw_value(x.data(), y.data(), 13, 10, 3, 0.5, ref::point_cost::l1, &mask))
                .epsilon(1e-13));
    }
  }
}

TEST_CASE("hard DTW gradient matches central differences where the optimal path is unique", "[fd][hard]") {
  // Random data: the optimum is unique with a margin far above h, so DTW is locally the cost
  // of one fixed path and its gradient is that path's gradient.
  auto const x = random_values(11 * 2, 81);
  auto const y = random_values(8 * 2, 82);
  for (auto const band : {r::band_spec::none(), r::band_spec::radius(1)}) {
    check_pair_fd(r::measures::dtw(band), x, y, 2, 1e-7);
    check_pair_fd(r::measures::dtw<r::l1_distance>(band), x, y, 2, 1e-7);
  }
}

TEST_CASE("divergence gradients match central differences (equal and unequal lengths)", "[fd][divergence]") {
  std::uint64_t seed = 200;
  for (shape s : {shape{9, 9, 2}, shape{12, 7, 1}, shape{6, 14, 3}, shape{1, 5, 1}}) {
    auto const x = random_values(static_cast<std::size_t>(s.n * s.d), ++seed);
    auto const y = random_values(static_cast<std::size_t>(s.m * s.d), ++seed);
    for (auto const band : {r::band_spec::none(), r::band_spec::radius(2)}) {
      for (double gamma : {1.0, 0.2}) {
        INFO("n = " << s.n << ", m = " << s.m << ", d = " << s.d << ", gamma = " << gamma);
        auto const meas = r::measures::soft_dtw_divergence(gamma, band);
        check_pair_fd(meas, x, y, s.d);
        // Its value is S(x,y) - S(x,x)/2 - S(y,y)/2 by the oracle (each term with its own mask).
        auto const mxy = ref::sakoe_chiba(s.n, s.m, band.radius_for(s.n, s.m));
        auto const mxx = ref::sakoe_chiba(s.n, s.n, band.radius_for(s.n, s.n));
        auto const myy = ref::sakoe_chiba(s.m, s.m, band.radius_for(s.m, s.m));
        auto const sq = ref::point_cost::squared_euclidean;
        double const expected =
            ref::soft_dtw_value(x.data(), y.data(), s.n, s.m, s.d, gamma, sq, &mxy) -
            0.5 * ref::soft_dtw_value(x.data(), x.data(), s.n, s.n, s.d, gamma, sq, &mxx) -
            0.5 * ref::soft_dtw_value(y.data(), y.data(), s.m, s.m, s.d, gamma, sq, &myy);
        CHECK(r::value(meas, r::view(x, s.d), r::view(y, s.d)) == Approx(expected).epsilon(1e-12).margin(1e-12));
        CHECK(r::value(meas, r::view(x, s.d), r::view(y, s.d)) >= -1e-12);  // non-negative
      }
    }
  }
}

TEST_CASE("values_and_grads on a ragged batch: FD per pair, zero padding, equal to single calls", "[fd][batch]") {
  r::index_t const B = 5, LX = 9, LY = 8, d = 2;
  std::vector<r::index_t> const lx{9, 4, 1, 7, 3}, ly{6, 8, 3, 1, 8};
  auto xs = random_values(static_cast<std::size_t>(B * LX * d), 301);
  auto ys = random_values(static_cast<std::size_t>(B * LY * d), 302);
  // Padding holds garbage that must not leak into anything.
  for (r::index_t b = 0; b < B; ++b) {
    for (r::index_t t = lx[static_cast<std::size_t>(b)]; t < LX; ++t)
      for (r::index_t c = 0; c < d; ++c) xs[static_cast<std::size_t>((b * LX + t) * d + c)] = 1e6;
    for (r::index_t t = ly[static_cast<std::size_t>(b)]; t < LY; ++t)
      for (r::index_t c = 0; c < d; ++c) ys[static_cast<std::size_t>((b * LY + t) * d + c)] = -1e6;
  }
  std::vector<double> const upstream{1.0, 0.5, -2.0, 4.0, 0.25};  // powers of two: exact scaling
  auto const X = r::make_batch(xs, B, LX, d, std::span<r::index_t const>(lx));
  auto const Y = r::make_batch(ys, B, LY, d, std::span<r::index_t const>(ly));

  auto run = [&](auto const& meas, char const* name) {
    INFO(name);
    std::vector<double> out(B), gxs(xs.size(), 123.0), gys(ys.size(), 123.0);
    r::values_and_grads(r::host.with_threads(2), meas, X, Y, std::span<double>(out),
                        r::make_batch(gxs, B, LX, d), r::make_batch(gys, B, LY, d),
                        std::span<double const>(upstream));
    for (r::index_t b = 0; b < B; ++b) {
      r::index_t const n = lx[static_cast<std::size_t>(b)], m = ly[static_cast<std::size_t>(b)];
      INFO("pair " << b << " (" << n << " x " << m << ")");
      std::vector<double> x(xs.begin() + b * LX * d, xs.begin() + (b * LX + n) * d);
      std::vector<double> y(ys.begin() + b * LY * d, ys.begin() + (b * LY + m) * d);
      std::vector<double> gx(x.size()), gy(y.size());
      double const v = r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
      double const u = upstream[static_cast<std::size_t>(b)];
      CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], v));
      for (std::size_t k = 0; k < gx.size(); ++k)
        CHECK(resilin_test::bits_equal(gxs[static_cast<std::size_t>(b * LX * d) + k], u * gx[k]));
      for (std::size_t k = 0; k < gy.size(); ++k)
        CHECK(resilin_test::bits_equal(gys[static_cast<std::size_t>(b * LY * d) + k], u * gy[k]));
      for (r::index_t k = n * d; k < LX * d; ++k) CHECK(gxs[static_cast<std::size_t>(b * LX * d + k)] == 0.0);
      for (r::index_t k = m * d; k < LY * d; ++k) CHECK(gys[static_cast<std::size_t>(b * LY * d + k)] == 0.0);
      auto const fx = central_differences(
          [&](std::vector<double> const& p) { return r::value(meas, r::view(p, d), r::view(y, d)); }, x);
      auto const fy = central_differences(
          [&](std::vector<double> const& p) { return r::value(meas, r::view(x, d), r::view(p, d)); }, y);
      CHECK(max_rel_diff(gx, fx) <= fd_tol);
      CHECK(max_rel_diff(gy, fy) <= fd_tol);
    }
  };
  run(r::measures::soft_dtw(0.5), "soft-DTW");
  run(r::measures::soft_dtw(0.5, r::band_spec::radius(1)), "soft-DTW, radius 1");
  run(r::measures::soft_dtw<double, r::l1_distance>(0.5, r::band_spec::window(0.3)), "L1, window 0.3");
  run(r::measures::soft_dtw_divergence(0.5), "divergence");
  run(r::measures::soft_dtw_divergence(0.5, r::band_spec::radius(2)), "divergence, radius 2");
}

TEST_CASE("pairwise_grads: GX[a] = sum_b w_ab dM(X[a], Y[b])/dX[a] by finite differences", "[fd][pairwise]") {
  r::index_t const A = 3, B = 4, LX = 7, LY = 6, d = 2;
  std::vector<r::index_t> const lx{7, 2, 5}, ly{6, 1, 4, 3};
  auto xs = random_values(static_cast<std::size_t>(A * LX * d), 401);
  auto ys = random_values(static_cast<std::size_t>(B * LY * d), 402);
  auto const w = random_values(static_cast<std::size_t>(A * B), 403, -1, 1);
  auto const X = r::make_batch(xs, A, LX, d, std::span<r::index_t const>(lx));
  auto const Y = r::make_batch(ys, B, LY, d, std::span<r::index_t const>(ly));

  auto run = [&](auto const& meas, char const* name) {
    INFO(name);
    std::vector<double> gxs(xs.size(), 55.0), out(static_cast<std::size_t>(A * B), -1.0), D(out.size());
    r::pairwise_grads(r::host.with_threads(2), meas, X, Y, r::make_batch(gxs, A, LX, d),
                      r::matrix_view<double>{out.data(), A, B},
                      r::matrix_view<double const>{w.data(), A, B});
    r::pairwise(r::host, meas, X, Y, r::matrix_view<double>{D.data(), A, B});
    for (std::size_t k = 0; k < D.size(); ++k) CHECK(out[k] == Approx(D[k]).epsilon(1e-14).margin(1e-14));
    for (r::index_t a = 0; a < A; ++a) {
      r::index_t const n = lx[static_cast<std::size_t>(a)];
      INFO("a = " << a);
      std::vector<double> x(xs.begin() + a * LX * d, xs.begin() + (a * LX + n) * d);
      auto f = [&](std::vector<double> const& p) {
        double s = 0;
        for (r::index_t b = 0; b < B; ++b) {
          std::vector<double> y(ys.begin() + b * LY * d, ys.begin() + (b * LY + ly[static_cast<std::size_t>(b)]) * d);
          s += w[static_cast<std::size_t>(a * B + b)] * r::value(meas, r::view(p, d), r::view(y, d));
        }
        return s;
      };
      auto const fx = central_differences(f, x);
      std::vector<double> g(gxs.begin() + a * LX * d, gxs.begin() + (a * LX + n) * d);
      CHECK(max_rel_diff(g, fx) <= fd_tol);
      for (r::index_t k = n * d; k < LX * d; ++k) CHECK(gxs[static_cast<std::size_t>(a * LX * d + k)] == 0.0);
    }
    // Without weights: the plain sum over b.
    std::vector<double> g1(xs.size(), 9.0);
    r::pairwise_grads(r::host, meas, X, Y, r::make_batch(g1, A, LX, d));
    for (r::index_t a = 0; a < A; ++a) {
      r::index_t const n = lx[static_cast<std::size_t>(a)];
      std::vector<double> x(xs.begin() + a * LX * d, xs.begin() + (a * LX + n) * d);
      auto f = [&](std::vector<double> const& p) {
        double s = 0;
        for (r::index_t b = 0; b < B; ++b) {
          std::vector<double> y(ys.begin() + b * LY * d, ys.begin() + (b * LY + ly[static_cast<std::size_t>(b)]) * d);
          s += r::value(meas, r::view(p, d), r::view(y, d));
        }
        return s;
      };
      auto const fx = central_differences(f, x);
      std::vector<double> g(g1.begin() + a * LX * d, g1.begin() + (a * LX + n) * d);
      CHECK(max_rel_diff(g, fx) <= fd_tol);
    }
  };
  run(r::measures::soft_dtw(0.7), "soft-DTW");
  run(r::measures::soft_dtw(0.7, r::band_spec::radius(1)), "soft-DTW, radius 1");
  run(r::measures::soft_dtw<double, r::half_squared_euclidean>(0.7), "half squared");
  run(r::measures::soft_dtw_divergence(0.7), "divergence");
}

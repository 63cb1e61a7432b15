// Published test vectors of spec/softdtw.md §3.11: the tslearn SoftDTWLossPyTorch doctest, the
// cosine values of mblondel/soft-dtw issue #10 (with the divergences), tslearn issue #100, and
// the 3x4 example (gamma = 1 and 0.1, value and gradient in x). Each is also compared with the
// naive oracle, and the float path with a float-sized tolerance.
#include <cmath>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;

TEMPLATE_TEST_CASE("tslearn SoftDTWLossPyTorch doctest: mean loss 1081 and x.grad", "[published]",
                   float, double) {
  using T = TestType;
  // x = zeros(4, 3, 2), y = arange(24).reshape(4, 3, 2), gamma = 0.1, loss(x, y).mean().backward().
  r::index_t const B = 4, L = 3, D = 2;
  std::vector<T> x(static_cast<std::size_t>(B * L * D), T(0)), y(x.size());
  for (std::size_t k = 0; k < y.size(); ++k) y[k] = T(k);
  auto const X = r::make_batch(x, B, L, D);
  auto const Y = r::make_batch(y, B, L, D);
  std::vector<T> out(B), gx(x.size(), T(5)), gy(y.size(), T(5));
  std::vector<T> const upstream(B, T(0.25));  // d mean / d loss_b
  r::values_and_grads(r::host, r::measures::soft_dtw(T(0.1)), X, Y, std::span<T>(out),
                      r::make_batch(gx, B, L, D), r::make_batch(gy, B, L, D),
                      std::span<T const>(upstream));
  // Per pair: the diagonal path costs 55, 451, 1279, 2539; every other path costs >= 1 more,
  // so the soft minimum lies within gamma * 4 * exp(-10) ~ 2e-5 below.
  double const diag[4] = {55, 451, 1279, 2539};
  double mean = 0;
  for (r::index_t b = 0; b < B; ++b) {
    INFO("pair " << b);
    CHECK(double(out[static_cast<std::size_t>(b)]) <= diag[b] * (1 + 1e-7));
    CHECK(double(out[static_cast<std::size_t>(b)]) >= diag[b] - 1e-4);
    double const vref = ref::soft_dtw_value(std::vector<double>(x.begin(), x.end()).data() + b * L * D,
                                            std::vector<double>(y.begin(), y.end()).data() + b * L * D,
                                            L, L, D, 0.1);
    CHECK(double(out[static_cast<std::size_t>(b)]) == Approx(vref).epsilon(std::is_same_v<T, float> ? 1e-6 : 1e-14));
    mean += double(out[static_cast<std::size_t>(b)]) / B;
  }
  CHECK(mean == Approx(1081.0).epsilon(0).margin(1e-3));
  // x.grad = 0.25 * 2 (x - y) on the diagonal = -y / 2, printed to 4 decimals by tslearn.
  for (std::size_t k = 0; k < gx.size(); ++k) {
    INFO("k = " << k);
    CHECK(double(gx[k]) == Approx(-double(k) / 2).epsilon(0).margin(1e-4));
  }
  CHECK(double(gx[1]) == Approx(-0.5).epsilon(0).margin(1e-4));
  CHECK(double(gx[23]) == Approx(-11.5).epsilon(0).margin(1e-4));
}

TEMPLATE_TEST_CASE("soft-dtw issue #10: cosine values and divergences", "[published]", float, double) {
  using T = TestType;
  std::vector<T> X(100), Y(100), Z(100);
  for (int t = 0; t < 100; ++t) {
    X[static_cast<std::size_t>(t)] = T(std::cos(double(t)));
    Y[static_cast<std::size_t>(t)] = T(0.5 * std::cos(double(t) + 1));
    Z[static_cast<std::size_t>(t)] = T(2 * std::cos(double(t) + 1));
  }
  auto const s = r::measures::soft_dtw(T(1));
  auto const dv = r::measures::soft_dtw_divergence(T(1));
  double const eps = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  CHECK(double(r::value(s, r::view(X), r::view(X))) == Approx(-104.37094339998296).epsilon(eps));
  CHECK(double(r::value(s, r::view(X), r::view(Y))) == Approx(-106.85481189044374).epsilon(eps));
  CHECK(double(r::value(s, r::view(X), r::view(Z))) == Approx(-17.6724839115034).epsilon(std::max(eps, 1e-13)));
  CHECK(double(r::value(s, r::view(Y), r::view(Y))) == Approx(-141.8058766514353).epsilon(eps));
  CHECK(double(r::value(s, r::view(Z), r::view(Z))) == Approx(-46.5652765749929).epsilon(eps));
  CHECK(double(r::value(dv, r::view(X), r::view(Y))) == Approx(16.23359813526538).epsilon(eps * 10));
  CHECK(double(r::value(dv, r::view(X), r::view(Z))) == Approx(57.79562607598449).epsilon(eps * 10));
  CHECK(double(r::value(dv, r::view(X), r::view(X))) == Approx(0.0).epsilon(0).margin(1e-12));
  // The one-liner agrees.
  CHECK(double(r::soft_dtw(X, Y, T(1))) == Approx(-106.85481189044374).epsilon(eps));
}

TEST_CASE("soft-dtw issue #10 values equal the naive oracle", "[published]") {
  std::vector<double> X(100), Y(100);
  for (int t = 0; t < 100; ++t) {
    X[static_cast<std::size_t>(t)] = std::cos(double(t));
    Y[static_cast<std::size_t>(t)] = 0.5 * std::cos(double(t) + 1);
  }
  CHECK(ref::soft_dtw_value(X.data(), X.data(), 100, 100, 1, 1.0) == Approx(-104.37094339998296).epsilon(1e-13));
  CHECK(ref::soft_dtw_value(X.data(), Y.data(), 100, 100, 1, 1.0) == Approx(-106.85481189044374).epsilon(1e-13));
}

TEMPLATE_TEST_CASE("tslearn issue #100: soft_dtw([1,2],[3,2], gamma=0.01) = 4", "[published]", float, double) {
  using T = TestType;
  std::vector<T> x{1, 2}, y{3, 2};
  CHECK(r::soft_dtw(x, y, T(0.01)) == Approx(4.0).epsilon(1e-6).margin(0));
  CHECK(r::dtw(x, y) == T(4));
  if constexpr (std::is_same_v<T, double>) CHECK(r::soft_dtw(x, y, 0.01) == Approx(4.0).epsilon(1e-15));
}

TEMPLATE_TEST_CASE("the 3x4 example: value and gradient in x", "[published]", float, double) {
  using T = TestType;
  std::vector<T> x{T(0.3), T(-1.2), T(0.7)}, y{T(0.1), T(0.5), T(-0.9), T(1.1)};
  double const veps = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  double const gtol = std::is_same_v<T, float> ? 1e-5 : 1e-9;
  std::vector<T> gx(3), gy(4);
  {
    T const v = r::value_and_grad(r::measures::soft_dtw(T(1)), r::view(x), r::view(y), r::view(gx), r::view(gy));
    CHECK(double(v) == Approx(-0.09013775759054357).epsilon(veps));
    CHECK(double(gx[0]) == Approx(0.436184436).epsilon(0).margin(gtol));
    CHECK(double(gx[1]) == Approx(-1.021419325).epsilon(0).margin(gtol));
    CHECK(double(gx[2]) == Approx(-0.461646595).epsilon(0).margin(gtol));
  }
  {
    T const v = r::value_and_grad(r::measures::soft_dtw(T(0.1)), r::view(x), r::view(y), r::view(gx), r::view(gy));
    CHECK(double(v) == Approx(0.32999994426014645).epsilon(veps));
    CHECK(double(gx[0]) == Approx(1.338e-6).epsilon(0).margin(std::is_same_v<T, float> ? 1e-5 : 1e-9));
    CHECK(double(gx[1]) == Approx(-0.6).epsilon(0).margin(gtol));
    CHECK(double(gx[2]) == Approx(-0.8).epsilon(0).margin(gtol));
  }
}

TEST_CASE("the 3x4 example: the naive oracle reproduces it too", "[published]") {
  std::vector<double> x{0.3, -1.2, 0.7}, y{0.1, 0.5, -0.9, 1.1}, gx(3), gy(4);
  double const v1 = ref::soft_dtw_value_and_grad(x.data(), y.data(), 3, 4, 1, 1.0, gx.data(), gy.data());
  CHECK(v1 == Approx(-0.09013775759054357).epsilon(1e-13));
  CHECK(gx[0] == Approx(0.436184436).epsilon(0).margin(1e-9));
  CHECK(gx[1] == Approx(-1.021419325).epsilon(0).margin(1e-9));
  CHECK(gx[2] == Approx(-0.461646595).epsilon(0).margin(1e-9));
  double const v2 = ref::soft_dtw_value_and_grad(x.data(), y.data(), 3, 4, 1, 0.1, gx.data(), gy.data());
  CHECK(v2 == Approx(0.32999994426014645).epsilon(1e-13));
  CHECK(gx[0] == Approx(1.338e-6).epsilon(0).margin(1e-9));
  CHECK(gx[1] == Approx(-0.6).epsilon(0).margin(1e-9));
  CHECK(gx[2] == Approx(-0.8).epsilon(0).margin(1e-9));
}

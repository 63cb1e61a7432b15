// The PL interpolant: evaluation against a direct formula, locate on uniform and explicit grids,
// slopes, the adjoint against finite differences, and host validation.
#include <support/catch.hpp>

#include <cmath>
#include <vector>
#include <resilin/fcdtw/interpolant.hpp>
#include "host/helpers.hpp"

using namespace resilin;
using namespace resilin::fcdtw;

namespace {
// x(u) by scanning every segment (the oracle: no locate, no clamping tricks).
double scan_eval(std::vector<double> const& t, std::vector<double> const& v, index_t d, double u,
                 index_t c) {
  for (std::size_t i = 0; i + 1 < t.size(); ++i)
    if (u >= t[i] && u <= t[i + 1]) {
      double const w = (u - t[i]) / (t[i + 1] - t[i]);
      return (1 - w) * v[i * d + c] + w * v[(i + 1) * d + c];
    }
  return NAN;
}
std::vector<double> random_knots(std::size_t n, std::uint64_t seed) {
  auto g = resilin_test::random_values(n, seed, 0.2, 1.0);  // positive gaps
  std::vector<double> t(n, 0.0);
  for (std::size_t i = 1; i < n; ++i) t[i] = t[i - 1] + g[i];
  for (auto& e : t) e /= t.back();
  t.back() = 1.0;
  return t;
}
}  // namespace

TEST_CASE("interpolant evaluates the PL function on uniform and explicit grids", "[fcdtw][interp]") {
  index_t const n = 9, d = 2;
  auto const v = resilin_test::random_values(static_cast<std::size_t>(n * d), 7);
  auto const tk = random_knots(static_cast<std::size_t>(n), 8);
  std::vector<double> tu(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) tu[static_cast<std::size_t>(i)] = double(i) / double(n - 1);
  series_view<double const> const s{v.data(), n, d};
  auto const uni = uniform_interpolant(s);
  auto const exp = knotted_interpolant(s, tk.data());
  REQUIRE(uni.knot(0) == 0.0);
  REQUIRE(uni.knot(n - 1) == 1.0);
  for (int k = 0; k <= 1000; ++k) {
    double const u = k / 1000.0;
    for (index_t c = 0; c < d; ++c) {
      CHECK(std::abs(uni(u, c) - scan_eval(tu, v, d, u, c)) < 1e-14);
      CHECK(std::abs(exp(u, c) - scan_eval(tk, v, d, u, c)) < 1e-14);
    }
    auto const p = exp.locate(u);
    CHECK(tk[static_cast<std::size_t>(p.segment)] <= u);
    CHECK(u <= tk[static_cast<std::size_t>(p.segment + 1)]);
    CHECK(p.w >= 0.0);
    CHECK(p.w <= 1.0);
  }
  // At a knot, the value is the sample exactly (either neighbouring segment).
  for (index_t i = 0; i < n; ++i)
    for (index_t c = 0; c < d; ++c) CHECK(exp(tk[static_cast<std::size_t>(i)], c) == v[static_cast<std::size_t>(i * d + c)]);
  // Out-of-range arguments clamp to the end values.
  CHECK(uni(-0.5, 1) == v[1]);
  CHECK(uni(1.5, 0) == v[static_cast<std::size_t>((n - 1) * d)]);
}

TEST_CASE("interpolant slope and adjoint match finite differences", "[fcdtw][interp]") {
  index_t const n = 6, d = 3;
  auto v = resilin_test::random_values(static_cast<std::size_t>(n * d), 11);
  auto const tk = random_knots(static_cast<std::size_t>(n), 12);
  double const u = 0.437;
  std::vector<double> slope(d), val(d);
  auto const s = knotted_interpolant(series_view<double const>{v.data(), n, d}, tk.data());
  s.slope_at(u, slope.data());
  for (index_t c = 0; c < d; ++c) {
    double const h = 1e-6;
    CHECK(std::abs(slope[static_cast<std::size_t>(c)] - (s(u + h, c) - s(u - h, c)) / (2 * h)) < 1e-8);
  }
  // Adjoint: F = <a, x(u)> with a fixed; dF/dv by scatter vs finite differences on v.
  auto const a = resilin_test::random_values(static_cast<std::size_t>(d), 13);
  std::vector<double> grad(v.size(), 0.0);
  s.scatter(u, a.data(), series_view<double>{grad.data(), n, d}, 2.0);
  auto F = [&](std::vector<double> const& vv) {
    auto const si = knotted_interpolant(series_view<double const>{vv.data(), n, d}, tk.data());
    double f = 0;
    for (index_t c = 0; c < d; ++c) f += 2.0 * a[static_cast<std::size_t>(c)] * si(u, c);
    return f;
  };
  auto const fd = resilin_test::central_differences(F, v);
  CHECK(resilin_test::max_rel_diff(grad, fd) < 1e-9);
}

TEST_CASE("interpolant validation names the argument", "[fcdtw][interp]") {
  std::vector<double> v{0, 1, 2};
  std::vector<double> bad_end{0, 0.5, 0.9}, bad_order{0, 0.7, 0.7}, good{0, 0.3, 1};
  series_view<double const> const s{v.data(), 3, 1};
  REQUIRE_NOTHROW(resilin::fcdtw::detail::check_interpolant(knotted_interpolant(s, good.data()), "x"));
  REQUIRE_NOTHROW(resilin::fcdtw::detail::check_interpolant(uniform_interpolant(s), "x"));
  REQUIRE_THROWS_AS(resilin::fcdtw::detail::check_interpolant(knotted_interpolant(s, bad_end.data()), "x"),
                    resilin::invalid_argument);
  REQUIRE_THROWS_AS(resilin::fcdtw::detail::check_interpolant(knotted_interpolant(s, bad_order.data()), "y"),
                    resilin::invalid_argument);
  REQUIRE_THROWS_AS(resilin::fcdtw::detail::check_interpolant(uniform_interpolant(series_view<double const>{v.data(), 1, 1}), "x"),
                    resilin::invalid_argument);
  // knots closer than the value type resolves (a gap of 1e-320 gave NaN gradients)
  std::vector<double> tiny_gap{0, 1e-320, 1}, eps_gap{0, 0x1p-52, 1};
  REQUIRE_THROWS_WITH(resilin::fcdtw::detail::check_interpolant(knotted_interpolant(s, tiny_gap.data()), "x"),
                      Catch::Contains("x: knots 0 and 1 are"));
  REQUIRE_NOTHROW(resilin::fcdtw::detail::check_interpolant(knotted_interpolant(s, eps_gap.data()), "x"));
  v[1] = NAN;
  REQUIRE_THROWS_AS(resilin::fcdtw::detail::check_interpolant(uniform_interpolant(s), "x"), resilin::invalid_argument);
  // a uniform grid's knots i / (n - 1) obey the explicit knots' rule, gaps of at least epsilon:
  // at most 2^23 + 1 samples in float (a reviewer's 2^24 + 2^22 samples gave 3.4 million pairs
  // of equal knots and NaN estimates)
  using resilin::fcdtw::detail::check_uniform_resolution;
  REQUIRE_NOTHROW(check_uniform_resolution<float>((index_t{1} << 23) + 1, "x"));
  REQUIRE_THROWS_WITH(check_uniform_resolution<float>((index_t{1} << 23) + 2, "x"),
                      Catch::Contains("x: 8388610 samples on a uniform grid are closer than float's resolution"));
  REQUIRE_NOTHROW(check_uniform_resolution<double>((index_t{1} << 24) + 2, "x"));
}

TEST_CASE("interpolant works in float", "[fcdtw][interp]") {
  std::vector<float> v{0.f, 2.f, 1.f};
  auto const s = uniform_interpolant(series_view<float const>{v.data(), 3, 1});
  CHECK(std::abs(s(0.25f, 0) - 1.f) < 1e-6f);
  CHECK(std::abs(s(0.75f, 0) - 1.5f) < 1e-6f);
}

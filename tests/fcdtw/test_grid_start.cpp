// FastCDTW started from the grid CDTW alignment (grid_start.hpp, fit_options::init = grid):
// the path-to-warp reading by hand and against a brute-force scan of every path segment; the
// identity for x = y; a start far better than the identity for time-shifted bumps; and every
// host entry point (fit, distances, distances_and_grads, pairwise_distances) honouring init.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>
#include <support/catch.hpp>
#include <resilin/fcdtw/fcdtw.hpp>
#include "host/helpers.hpp"

namespace fc = resilin::fcdtw;
using resilin::index_t;
using path_t = std::vector<std::array<index_t, 2>>;

namespace {

fc::interpolant<double> uniform(std::vector<double> const& s) {
  return fc::uniform_interpolant(resilin::series_view<double const>{s.data(), static_cast<index_t>(s.size()), 1});
}

std::vector<double> knots_of(path_t const& path, index_t n, index_t m, index_t K) {
  std::vector<double> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(m)), v(static_cast<std::size_t>(K + 1));
  fc::warp_knots_from_path<double>(path, uniform(xs), uniform(ys), K, v.data());
  return v;
}

/// The midpoint of the x-times the polyline through the path's points takes at t = g, from
/// every segment separately.
double brute_midpoint(path_t const& path, index_t n, index_t m, double g) {
  double lo = 2, hi = -1;
  auto const t = [&](std::size_t a) { return static_cast<double>(path[a][1]) / static_cast<double>(m - 1); };
  auto const u = [&](std::size_t a) { return static_cast<double>(path[a][0]) / static_cast<double>(n - 1); };
  for (std::size_t a = 0; a + 1 < path.size(); ++a) {
    double const t0 = t(a), t1 = t(a + 1);
    if (t0 == g) { lo = std::min(lo, u(a)); hi = std::max(hi, u(a)); }
    if (t1 == g) { lo = std::min(lo, u(a + 1)); hi = std::max(hi, u(a + 1)); }
    if (t0 < g && g < t1) {
      double const x = u(a) + (g - t0) / (t1 - t0) * (u(a + 1) - u(a));
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  return (lo + hi) / 2;
}

/// A random monotone lattice path from (0, 0) to (n - 1, m - 1).
path_t random_path(index_t n, index_t m, std::uint64_t seed) {
  auto const r = resilin_test::random_values(static_cast<std::size_t>(2 * (n + m)), seed, 0.0, 3.0);
  path_t p{{0, 0}};
  std::size_t k = 0;
  while (p.back()[0] < n - 1 || p.back()[1] < m - 1) {
    auto [i, j] = p.back();
    int const move = static_cast<int>(r[k++ % r.size()]);  // 0 diagonal, 1 up, 2 right
    if (i == n - 1) ++j;
    else if (j == m - 1) ++i;
    else if (move == 0) { ++i; ++j; }
    else if (move == 1) ++i;
    else ++j;
    p.push_back({i, j});
  }
  return p;
}

std::vector<double> bump(index_t n, double centre) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    double const t = static_cast<double>(i) / static_cast<double>(n - 1);
    s[static_cast<std::size_t>(i)] = std::exp(-std::pow((t - centre) / 0.08, 2));
  }
  return s;
}

}  // namespace

TEST_CASE("a lattice path read as a warp, by hand", "[fcdtw][grid_start]") {
  // (t, u) points (0, 0), (0, 1/2), (1/2, 1), (1, 1): a climb at t = 0, then a diagonal
  path_t const climb_first{{0, 0}, {1, 0}, {2, 1}, {2, 2}};
  CHECK(knots_of(climb_first, 3, 3, 2) == std::vector<double>{0, 1, 1});
  CHECK(knots_of(climb_first, 3, 3, 4) == std::vector<double>{0, 0.75, 1, 1, 1});
  // a climb from u = 1/3 to 2/3 at t = 1/2: the warp takes its middle
  path_t const climb_middle{{0, 0}, {1, 1}, {2, 1}, {3, 2}};
  auto const v = knots_of(climb_middle, 4, 3, 2);
  CHECK(v[0] == 0);
  CHECK(v[1] == Approx(0.5).epsilon(1e-15));
  CHECK(v[2] == 1);
}

TEST_CASE("a lattice path read as a warp equals a scan of every segment", "[fcdtw][grid_start]") {
  std::uint64_t seed = 40;
  for (auto [n, m, K] : {std::array<index_t, 3>{5, 7, 6}, {12, 4, 3}, {9, 9, 8}, {30, 17, 45}, {17, 30, 7}}) {
    for (int rep = 0; rep < 5; ++rep) {
      path_t const p = random_path(n, m, ++seed);
      auto const v = knots_of(p, n, m, K);
      INFO("n " << n << " m " << m << " K " << K << " path " << seed);
      CHECK(v.front() == 0);
      CHECK(v.back() == 1);
      for (index_t k = 1; k < K; ++k) {
        double const g = static_cast<double>(k) / static_cast<double>(K);
        CHECK(v[static_cast<std::size_t>(k)] == Approx(brute_midpoint(p, n, m, g)).margin(1e-14));
        CHECK(v[static_cast<std::size_t>(k)] >= v[static_cast<std::size_t>(k - 1)]);
      }
    }
  }
}

TEST_CASE("the grid start of x = y is the identity", "[fcdtw][grid_start]") {
  auto const x = resilin_test::random_values(40, 3, -1.0, 1.0);
  fc::fit_options o;
  o.init = fc::warp_init::grid;
  o.steps = 0;
  auto const r = fc::fit(uniform(x), uniform(x), o);
  for (std::size_t k = 0; k < r.knots.size(); ++k)
    CHECK(r.knots[k] == Approx(static_cast<double>(k) / 39.0).margin(1e-14));
  CHECK(r.distance < 1e-20);
}

TEST_CASE("the grid start of time-shifted bumps beats the identity", "[fcdtw][grid_start]") {
  // x is y shifted by 0.3: the identity warp compares two disjoint bumps
  auto const x = bump(100, 0.65), y = bump(100, 0.35);
  fc::fit_options o;
  o.steps = 0;
  double const identity0 = fc::fit(uniform(x), uniform(y), o).distance;
  o.init = fc::warp_init::grid;
  double const grid0 = fc::fit(uniform(x), uniform(y), o).distance;
  INFO("F at the start: identity " << identity0 << ", grid " << grid0);
  CHECK(grid0 < identity0 / 20);
  o.steps = 300;
  double const grid300 = fc::fit(uniform(x), uniform(y), o).distance;
  o.init = fc::warp_init::identity;
  double const identity300 = fc::fit(uniform(x), uniform(y), o).distance;
  INFO("after 300 steps: identity " << identity300 << ", grid " << grid300);
  CHECK(grid300 < identity300);
}

TEST_CASE("a grid start's flat stretches still move", "[fcdtw][grid_start]") {
  // x = (3, 2) onto y = (1, 2, 3): the grid path stands still in x's time over y's first half.
  // Started flat (a logit near -68, gradient near 3e-30), that segment never moved: F stayed
  // 1.5393 for any budget, where the identity start reaches 1.3713.
  std::vector<double> const x{3, 2}, y{1, 2, 3};
  fc::fit_options o;
  o.init = fc::warp_init::grid;
  o.steps = 0;
  auto const start = fc::fit(uniform(x), uniform(y), o);
  for (double r : start.logits) CHECK(r > -10);
  CHECK(start.knots[1] < 0.1);  // still the grid path's shape: a tenth of the identity's slope
  o.steps = 300;
  double const grid300 = fc::fit(uniform(x), uniform(y), o).distance;
  o.init = fc::warp_init::identity;
  double const identity300 = fc::fit(uniform(x), uniform(y), o).distance;
  CHECK(grid300 < start.distance - 0.1);
  CHECK(grid300 == Approx(identity300).epsilon(1e-5));
}

TEST_CASE("a grid start's flat stretches move also in float with many segments", "[fcdtw][grid_start]") {
  // Raised as knots in float, increments of 1e-3 / K near v = 1 had no room once K passed about
  // 16800: a flat stretch at the end came out flat again (8500 of 17000 logits near -60). The
  // raised increments are worked out in double now.
  std::vector<float> const x{1, 3}, y{1, 3, 3};
  fc::fit_options o;
  o.init = fc::warp_init::grid;
  o.steps = 0;
  o.segments = 17000;
  auto const xi = fc::uniform_interpolant(resilin::series_view<float const>{x.data(), 2, 1});
  auto const yi = fc::uniform_interpolant(resilin::series_view<float const>{y.data(), 3, 1});
  auto const start = fc::fit(xi, yi, o);
  REQUIRE(start.logits.size() == 17000);
  float const lowest = *std::min_element(start.logits.begin(), start.logits.end());
  CHECK(lowest > -10.0f);
}

TEST_CASE("every host entry point starts where init says", "[fcdtw][grid_start]") {
  index_t const B = 3, L = 24;
  auto const xs = resilin_test::random_values(static_cast<std::size_t>(B * L), 8, -1.0, 1.0);
  auto const ys = resilin_test::random_values(static_cast<std::size_t>(B * L), 9, -1.0, 1.0);
  resilin::batch_view<double const> const X{xs.data(), B, L, 1}, Y{ys.data(), B, L, 1};
  fc::fit_options o;
  o.steps = 20;
  o.threads = 2;
  o.init = fc::warp_init::grid;
  std::vector<double> want(static_cast<std::size_t>(B)), ident(static_cast<std::size_t>(B));
  for (index_t b = 0; b < B; ++b) want[static_cast<std::size_t>(b)] = fc::fit(X[b], Y[b], o).distance;
  std::vector<double> got(static_cast<std::size_t>(B)), gx(xs.size()), gy(ys.size());
  fc::distances(o, X, Y, std::span<double>(got));
  CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
  fc::distances_and_grads(o, X, Y, std::span<double>(got), resilin::batch_view<double>{gx.data(), B, L, 1},
                          resilin::batch_view<double>{gy.data(), B, L, 1});
  CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
  std::vector<double> pw(static_cast<std::size_t>(B * B));
  fc::pairwise_distances(o, X, Y, resilin::matrix_view<double>{pw.data(), B, B});
  for (index_t b = 0; b < B; ++b) CHECK(pw[static_cast<std::size_t>(b * B + b)] == want[static_cast<std::size_t>(b)]);
  o.init = fc::warp_init::identity;
  fc::distances(o, X, Y, std::span<double>(ident));
  CHECK(ident != want);
}

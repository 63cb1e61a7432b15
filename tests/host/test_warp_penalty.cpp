// warp_penalty_cost: every alignment path enumerated for small shapes (value, soft alignment
// matrix and hard path, with the penalty counted per vertical and horizontal move), a plain
// full-table recursion written here for long ragged shapes through the SIMD strips (both
// orientations, bands, value-only and training paths), central differences for the gradients,
// the inner model's bits at w = 0, and bad penalties refused.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using r::index_t;
using resilin_test::random_values;

static_assert(r::differentiable_cost_model<r::warp_penalty_cost<r::dtw_cost<>>, double>);
static_assert(r::differentiable_cost_model<r::warp_penalty_cost<r::soft_msm_cost<>>, float>);

namespace {

/// Every monotone path from (0, 0) to (n-1, m-1) inside the band, its cost the sum of the cost
/// model's step costs of its moves: the smoothed value over all paths (gamma = 0: the minimum)
/// and the expected visits of each cell (gamma = 0: the cells of the minimal path, unique for
/// the tests' random data).
struct enumeration {
  double value = 0;
  std::vector<double> E;
  long paths = 0;
};

template <class Cost>
enumeration enumerate(Cost const& cost, std::vector<double> const& x, std::vector<double> const& y,
                      index_t n, index_t m, index_t d, double gamma, ref::mask const& band) {
  r::series_view<double const> const xv{x.data(), n, d}, yv{y.data(), m, d};
  std::vector<double> totals;
  std::vector<std::vector<index_t>> cells;
  std::vector<index_t> path;
  std::function<void(index_t, index_t, double)> walk = [&](index_t i, index_t j, double acc) {
    path.push_back(i * m + j);
    if (i == n - 1 && j == m - 1) {
      totals.push_back(acc);
      cells.push_back(path);
    } else {
      if (i + 1 < n && j + 1 < m && band(i + 1, j + 1)) walk(i + 1, j + 1, acc + cost.step(xv, yv, i + 1, j + 1).diag);
      if (i + 1 < n && band(i + 1, j)) walk(i + 1, j, acc + cost.step(xv, yv, i + 1, j).up);
      if (j + 1 < m && band(i, j + 1)) walk(i, j + 1, acc + cost.step(xv, yv, i, j + 1).left);
    }
    path.pop_back();
  };
  walk(0, 0, cost.step(xv, yv, 0, 0).diag);
  enumeration e;
  e.paths = static_cast<long>(totals.size());
  e.E.assign(static_cast<std::size_t>(n * m), 0.0);
  double const lo = *std::min_element(totals.begin(), totals.end());
  if (gamma == 0) {
    e.value = lo;
    for (std::size_t p = 0; p < totals.size(); ++p)
      if (totals[p] == lo) {
        for (index_t c : cells[p]) e.E[static_cast<std::size_t>(c)] = 1;
        break;
      }
    return e;
  }
  double z = 0;
  for (double t : totals) z += std::exp(-(t - lo) / gamma);
  e.value = lo - gamma * std::log(z);
  for (std::size_t p = 0; p < totals.size(); ++p) {
    double const w = std::exp(-(totals[p] - lo) / gamma) / z;
    for (index_t c : cells[p]) e.E[static_cast<std::size_t>(c)] += w;
  }
  return e;
}

/// The recursion over the full (n, m) table, one cell at a time, with the cost model's scalar
/// step and a soft-min written here (gamma = 0: min). Band: the library's documented mask.
template <class T, class Cost>
T full_table(Cost const& cost, r::series_view<T const> x, r::series_view<T const> y, double gamma,
             ref::mask const& band) {
  index_t const n = x.length, m = y.length;
  double const inf = std::numeric_limits<double>::infinity();
  std::vector<double> R(static_cast<std::size_t>((n + 1) * (m + 1)), inf);
  auto at = [&](index_t i, index_t j) -> double& { return R[static_cast<std::size_t>((i + 1) * (m + 1) + j + 1)]; };
  at(-1, -1) = 0;
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < m; ++j) {
      if (!band(i, j)) continue;
      r::step3<T> const c = cost.step(x, y, i, j);
      double const v[3] = {at(i - 1, j - 1) + double(c.diag), at(i - 1, j) + double(c.up),
                           at(i, j - 1) + double(c.left)};
      double const lo = std::min({v[0], v[1], v[2]});
      if (gamma == 0 || lo == inf) {
        at(i, j) = lo;
        continue;
      }
      double z = 0;
      for (double t : v) z += std::exp(-(t - lo) / gamma);
      at(i, j) = lo - gamma * std::log(z);
    }
  return static_cast<T>(at(n - 1, m - 1));
}

ref::mask mask_for(r::band_spec const& b, index_t n, index_t m) {
  return ref::sakoe_chiba(n, m, b.radius_for(n, m));
}

std::vector<r::band_spec> bands() {
  return {r::band_spec::none(), r::band_spec::radius(1), r::band_spec::window(0.3)};
}

}  // namespace

TEST_CASE("warp penalty: values, alignment matrices and hard paths against every path",
          "[warp_penalty]") {
  std::uint64_t seed = 11;
  for (double w : {0.0, 0.3, 2.0})
    for (index_t n = 1; n <= 5; ++n)
      for (index_t m = 1; m <= 5; ++m)
        for (auto const& band : bands()) {
          index_t const d = 1 + (n + m) % 2;
          auto const x = random_values(static_cast<std::size_t>(n * d), ++seed, -2, 2);
          auto const y = random_values(static_cast<std::size_t>(m * d), ++seed, -2, 2);
          auto const mask = mask_for(band, n, m);
          auto const xv = r::view(x, d);
          auto const yv = r::view(y, d);
          INFO("w = " << w << ", n = " << n << ", m = " << m << ", d = " << d);
          // soft-DTW, hard DTW and soft-MSM (one channel: its factories align channels apart)
          auto const sdtw = r::with_warp_penalty(r::measures::soft_dtw(0.5, band), w);
          auto const bf = enumerate(sdtw.cost, x, y, n, m, d, 0.5, mask);
          REQUIRE(bf.paths >= 1);
          CHECK(r::value(sdtw, xv, yv) == Approx(bf.value).epsilon(1e-12).margin(1e-12));
          std::vector<double> E(static_cast<std::size_t>(n * m));
          r::alignment_matrix(sdtw, xv, yv, r::matrix_view<double>{E.data(), n, m});
          CHECK(resilin_test::max_abs_diff(E, bf.E) <= 1e-12);

          auto const dtw = r::with_warp_penalty(r::measures::dtw(band), w);
          auto const hard = enumerate(dtw.cost, x, y, n, m, d, 0.0, mask);
          CHECK(r::value(dtw, xv, yv) == Approx(hard.value).epsilon(1e-14).margin(1e-14));
          std::vector<double> on_path(static_cast<std::size_t>(n * m), 0.0);
          for (auto const& [i, j] : r::alignment_path(dtw, xv, yv)) on_path[static_cast<std::size_t>(i * m + j)] = 1;
          CHECK(on_path == hard.E);

          auto const x1 = std::vector<double>(x.begin(), x.begin() + n);
          auto const y1 = std::vector<double>(y.begin(), y.begin() + m);
          auto const smsm = r::with_warp_penalty(r::measures::soft_msm(0.5, 1.0, band), w);
          auto const bm = enumerate(smsm.cost, x1, y1, n, m, 1, 0.5, mask);
          CHECK(r::value(smsm, r::view(x1), r::view(y1)) == Approx(bm.value).epsilon(1e-12).margin(1e-12));
        }
}

TEST_CASE("warp penalty: long ragged pairs through the SIMD strips equal the full table",
          "[warp_penalty]") {
  // lengths past several strips of every vector width, both orientations (value-only runs
  // along the shorter series), training paths (R kept, and soft-MSM's cached partials)
  std::uint64_t seed = 500;
  for (auto [n, m] : {std::array<index_t, 2>{300, 257}, {131, 390}, {70, 70}})
    for (auto const& band : bands()) {
      auto const mask = mask_for(band, n, m);
      auto const x = random_values(static_cast<std::size_t>(n * 2), ++seed, -1, 1);
      auto const y = random_values(static_cast<std::size_t>(m * 2), ++seed, -1, 1);
      INFO("n = " << n << ", m = " << m);
      auto check = [&](auto const& meas, auto const& meas_float, index_t d, double gamma) {
        auto const xv = r::series_view<double const>{x.data(), n, d};
        auto const yv = r::series_view<double const>{y.data(), m, d};
        double const expect = full_table<double>(meas.cost, xv, yv, gamma, mask);
        CHECK(r::value(meas, xv, yv) == Approx(expect).epsilon(1e-11));
        std::vector<double> gx(static_cast<std::size_t>(n * d)), gy(static_cast<std::size_t>(m * d));
        double const v = r::value_and_grad(meas, xv, yv, r::series_view<double>{gx.data(), n, d},
                                           r::series_view<double>{gy.data(), m, d});
        CHECK(v == Approx(expect).epsilon(1e-11));
        // the gradient along a random direction u against a central difference of the values
        auto const u = random_values(x.size() + y.size(), ++seed, -1, 1);
        // soft-MSM's gate is stiff where values nearly repeat: a smaller step (its central
        // difference at 1e-6 is off by 2e-5 relative here, at 1e-7 by 100 times less)
        double const h = d == 1 && gamma > 0 ? 1e-7 : 1e-6;
        auto shifted = [&](double s) {
          std::vector<double> xs(x.begin(), x.begin() + n * d), ys(y.begin(), y.begin() + m * d);
          for (std::size_t k = 0; k < xs.size(); ++k) xs[k] += s * u[k];
          for (std::size_t k = 0; k < ys.size(); ++k) ys[k] += s * u[x.size() + k];
          return r::value(meas, r::view(xs, d), r::view(ys, d));
        };
        double along = 0;
        for (std::size_t k = 0; k < gx.size(); ++k) along += gx[k] * u[k];
        for (std::size_t k = 0; k < gy.size(); ++k) along += gy[k] * u[x.size() + k];
        CHECK(along == Approx((shifted(h) - shifted(-h)) / (2 * h)).epsilon(2e-6).margin(1e-6));
        // float: the same recursion in the value type
        auto const xf = resilin_test::cast<float>(std::vector<double>(x.begin(), x.begin() + n * d));
        auto const yf = resilin_test::cast<float>(std::vector<double>(y.begin(), y.begin() + m * d));
        CHECK(double(r::value(meas_float, r::series_view<float const>{xf.data(), n, d},
                              r::series_view<float const>{yf.data(), m, d})) ==
              Approx(expect).epsilon(2e-4).margin(1e-3));
      };
      auto const dtw = r::with_warp_penalty(r::measures::dtw(band), 0.4);
      check(r::with_warp_penalty(r::measures::soft_dtw(0.7, band), 0.4),
            r::with_warp_penalty(r::measures::soft_dtw(0.7f, band), 0.4), 2, 0.7);
      check(dtw, dtw, 2, 0.0);
      check(r::with_warp_penalty(r::measures::soft_msm(0.7, 0.5, band), 0.4),
            r::with_warp_penalty(r::measures::soft_msm(0.7f, 0.5f, band), 0.4), 1, 0.7);
    }
}

TEST_CASE("warp penalty: gradients against central differences", "[warp_penalty]") {
  index_t const n = 9, m = 12, d = 2;
  auto const x = random_values(static_cast<std::size_t>(n * d), 71, -1, 1);
  auto const y = random_values(static_cast<std::size_t>(m * d), 72, -1, 1);
  auto run = [&](auto const& meas, index_t channels) {
    std::vector<double> xs(x.begin(), x.begin() + n * channels), ys(y.begin(), y.begin() + m * channels);
    std::vector<double> gx(xs.size()), gy(ys.size());
    r::value_and_grad(meas, r::view(xs, channels), r::view(ys, channels), r::view(gx, channels),
                      r::view(gy, channels));
    auto const fx = resilin_test::central_differences(
        [&](std::vector<double> const& p) { return r::value(meas, r::view(p, channels), r::view(ys, channels)); }, xs);
    auto const fy = resilin_test::central_differences(
        [&](std::vector<double> const& p) { return r::value(meas, r::view(xs, channels), r::view(p, channels)); }, ys);
    CHECK(resilin_test::max_abs_diff(gx, fx) <= 1e-7);
    CHECK(resilin_test::max_abs_diff(gy, fy) <= 1e-7);
  };
  for (double w : {0.1, 1.5}) {
    INFO("w = " << w);
    run(r::with_warp_penalty(r::measures::soft_dtw(0.5), w), d);
    run(r::with_warp_penalty(r::measures::soft_dtw_divergence(0.5, r::band_spec::radius(3)), w), d);
    run(r::with_warp_penalty(r::measures::soft_msm(0.5, 1.0), w), 1);
    run(r::with_warp_penalty(r::measures::soft_cdtw(0.5), w), 1);
  }
}

TEST_CASE("warp penalty: properties", "[warp_penalty]") {
  index_t const n = 40, m = 33;
  auto const x = random_values(static_cast<std::size_t>(n), 91, -1, 1);
  auto const y = random_values(static_cast<std::size_t>(m), 92, -1, 1);
  auto const xv = r::view(x), yv = r::view(y);
  SECTION("w = 0 gives the inner model's bits where both take the same traversal") {
    auto const msm = r::measures::soft_msm(0.5, 1.0);
    auto const pen = r::with_warp_penalty(msm, 0.0);
    CHECK(resilin_test::bits_equal(r::value(pen, xv, yv), r::value(msm, xv, yv)));
    std::vector<double> g1(n), h1(m), g2(n), h2(m);
    double const v1 = r::value_and_grad(msm, xv, yv, r::view(g1), r::view(h1));
    double const v2 = r::value_and_grad(pen, xv, yv, r::view(g2), r::view(h2));
    CHECK(resilin_test::bits_equal(v1, v2));
    CHECK(resilin_test::bitwise_equal(g1, g2));
    CHECK(resilin_test::bitwise_equal(h1, h2));
    auto const dtw = r::measures::dtw();
    CHECK(resilin_test::bits_equal(r::value(r::with_warp_penalty(dtw, 0.0), xv, yv), r::value(dtw, xv, yv)));
    // soft-DTW: the exponential domain against the log domain, a few ulp per cell
    auto const sd = r::measures::soft_dtw(1.0);
    CHECK(r::value(r::with_warp_penalty(sd, 0.0), xv, yv) == Approx(r::value(sd, xv, yv)).epsilon(1e-12));
  }
  SECTION("hard DTW grows with w; a large w forces the fewest warping moves") {
    auto const dtw = r::measures::dtw();
    double prev = r::value(dtw, xv, yv);
    for (double w : {0.01, 0.1, 1.0, 10.0}) {
      double const v = r::value(r::with_warp_penalty(dtw, w), xv, yv);
      CHECK(v >= prev);
      prev = v;
    }
    // n = m: the diagonal alone, sum of (x_i - y_i)^2
    std::vector<double> const y2(x.rbegin(), x.rend());
    double diag = 0;
    for (index_t i = 0; i < n; ++i) diag += (x[i] - y2[i]) * (x[i] - y2[i]);
    CHECK(r::value(r::with_warp_penalty(dtw, 1e3), xv, r::view(y2)) == Approx(diag).epsilon(1e-13));
  }
  SECTION("the divergence of a series with itself is 0, and it is symmetric") {
    auto const div = r::with_warp_penalty(r::measures::soft_dtw_divergence(0.5), 0.7);
    CHECK(std::abs(r::value(div, xv, xv)) <= 1e-12);
    CHECK(r::value(div, xv, yv) == Approx(r::value(div, yv, xv)).epsilon(1e-12));
  }
  SECTION("batches, pairwise and threads give the single calls' values") {
    auto const meas = r::with_warp_penalty(r::measures::soft_dtw(0.5, r::band_spec::window(0.5)), 0.25);
    index_t const B = 5, L = 37;
    auto data = random_values(static_cast<std::size_t>(B * L), 93, -1, 1);
    std::vector<index_t> lengths{37, 12, 30, 5, 21};
    auto const X = r::make_batch(std::span<double const>(data), B, L, 1, std::span<index_t const>(lengths));
    std::vector<double> out(B * B);
    r::pairwise(r::host.with_threads(2), meas, X, X, r::matrix_view<double>{out.data(), B, B});
    for (index_t a = 0; a < B; ++a)
      for (index_t b = 0; b < B; ++b)
        CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(a * B + b)], r::value(meas, X[a], X[b])));
  }
  SECTION("bad penalties are refused") {
    auto const sd = r::measures::soft_dtw(1.0);
    for (double w : {-0.5, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
      CHECK_THROWS_WITH(r::with_warp_penalty(sd, w), Catch::Contains("warp penalty must be >= 0 and finite"));
    auto bad = r::with_warp_penalty(sd, 0.5);
    bad.cost.penalty = -1;
    CHECK_THROWS_AS(r::value(bad, xv, yv), r::invalid_argument);
  }
}

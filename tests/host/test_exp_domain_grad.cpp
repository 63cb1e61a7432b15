// The exponential-domain value and gradient of soft-DTW (backend/host/exp_domain_grad.hpp)
// against the straightforward log-domain loop of tests/support/reference.hpp. Small pairs keep
// the whole table; long pairs (table > 32 MiB) recompute each strip from the row above it, so
// both paths run, with and without bands, n != m, several gammas and every point distance.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using resilin_test::max_rel_diff;
using resilin_test::random_values;

namespace {

template <class Distance>
void against_reference(r::index_t n, r::index_t m, r::index_t d, double gamma, r::index_t radius,
                       ref::point_cost cost, std::uint64_t seed, double tol) {
  INFO("n = " << n << ", m = " << m << ", d = " << d << ", gamma = " << gamma
              << ", radius = " << radius);
  auto const x = random_values(static_cast<std::size_t>(n * d), seed);
  auto const y = random_values(static_cast<std::size_t>(m * d), seed + 1, -1.5, 1.0);
  auto const spec = radius < 0 ? r::band_spec{} : r::band_spec::radius(radius);
  auto const meas = r::measures::soft_dtw<double, Distance>(gamma, spec);
  auto const mask = radius < 0 ? ref::mask{} : ref::sakoe_chiba(n, m, spec.radius_for(n, m));
  std::vector<double> gx(x.size()), gy(y.size()), gxr(x.size()), gyr(y.size());
  double const vr = ref::soft_dtw_value_and_grad(x.data(), y.data(), n, m, d, gamma, gxr.data(),
                                                 gyr.data(), nullptr, cost, &mask);
  double const v = r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
  REQUIRE(std::isfinite(v));
  CHECK(v == Approx(vr).epsilon(tol));
  CHECK(max_rel_diff(gx, gxr) <= tol);
  CHECK(max_rel_diff(gy, gyr) <= tol);
  // the value-only path (transposed when m > n) agrees with the training forward
  CHECK(r::value(meas, r::view(x, d), r::view(y, d)) == Approx(v).epsilon(tol));
}

}  // namespace

TEST_CASE("exp-domain gradients of short pairs (whole table) equal the log-domain loop", "[expdomain]") {
  std::uint64_t seed = 100;
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{1, 1}, {1, 9}, {9, 1}, {15, 17}, {16, 16},
                      {33, 20}, {20, 70}, {64, 64}})
    for (double gamma : {1.0, 0.1, 0.01})
      for (r::index_t radius : {-1, 0, 3}) {
        against_reference<r::squared_euclidean>(n, m, 2, gamma, radius,
                                                ref::point_cost::squared_euclidean, seed += 2, 1e-11);
      }
  against_reference<r::l1_distance>(40, 29, 3, 0.3, -1, ref::point_cost::l1, seed += 2, 1e-11);
  against_reference<r::half_squared_euclidean>(29, 40, 1, 0.3, 5, ref::point_cost::half_squared_euclidean,
                                               seed += 2, 1e-11);
}

TEST_CASE("exp-domain gradients of long pairs (strips recomputed) equal the log-domain loop", "[expdomain]") {
  // Tables past 32 MiB (16 bytes per cell and skew step): the backward recomputes every strip.
  std::uint64_t seed = 200;
  against_reference<r::squared_euclidean>(1500, 1450, 1, 1.0, -1, ref::point_cost::squared_euclidean,
                                          seed += 2, 1e-10);
  against_reference<r::l1_distance>(1450, 1500, 1, 0.5, -1, ref::point_cost::l1, seed += 2, 1e-10);
  against_reference<r::squared_euclidean>(2000, 2000, 1, 0.5, 600, ref::point_cost::squared_euclidean,
                                          seed += 2, 1e-10);
  // below the threshold: the whole table, with a band and n != m
  against_reference<r::squared_euclidean>(470, 530, 2, 0.1, 40, ref::point_cost::squared_euclidean,
                                          seed += 2, 1e-10);
}

TEMPLATE_TEST_CASE("exp-domain gradients in float follow the double loop", "[expdomain]", float) {
  std::uint64_t seed = 300;
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{23, 31}, {300, 280}}) {
    INFO("n = " << n << ", m = " << m);
    auto const xd = random_values(static_cast<std::size_t>(n), seed += 2);
    auto const yd = random_values(static_cast<std::size_t>(m), seed += 2);
    auto const x = resilin_test::cast<TestType>(xd), y = resilin_test::cast<TestType>(yd);
    std::vector<TestType> gx(x.size()), gy(y.size());
    std::vector<double> gxr(x.size()), gyr(y.size());
    double const vr = ref::soft_dtw_value_and_grad(resilin_test::cast<double>(x).data(),
                                                   resilin_test::cast<double>(y).data(), n, m, 1, 0.5,
                                                   gxr.data(), gyr.data());
    TestType const v = r::value_and_grad(r::measures::soft_dtw(TestType(0.5)), r::view(x, 1), r::view(y, 1),
                                         r::view(gx, 1), r::view(gy, 1));
    CHECK(double(v) == Approx(vr).epsilon(1e-4));
    CHECK(max_rel_diff(gx, gxr) <= 1e-4);
    CHECK(max_rel_diff(gy, gyr) <= 1e-4);
  }
}

namespace {

/// Value and gradients through the exponential-domain forward and backward directly: the whole
/// table (every = 0 here) or rows kept above every `every`-th strip (every > 1: two levels).
template <class T>
T exp_domain_grad(r::measure<r::dtw_cost<r::squared_euclidean>, r::soft_min<T>> const& meas,
                  std::vector<T> const& x, std::vector<T> const& y, r::index_t d, r::index_t every,
                  std::vector<T>& gx, std::vector<T>& gy) {
  namespace rh = r::host_detail;
  r::index_t const n = static_cast<r::index_t>(x.size()) / d, k = static_cast<r::index_t>(y.size()) / d;
  rh::pair_problem<T, r::dtw_cost<r::squared_euclidean>, r::soft_min<T>> const p{
      meas.cost, meas.smooth, {x.data(), n, d}, {y.data(), k, d}, meas.band.geometry(n, k)};
  REQUIRE(rh::exp_domain_exact<T, r::squared_euclidean>(p.x, p.y, meas.smooth.gamma, p.band));
  rh::dtw_lane_cost<T, r::squared_euclidean> lanes;
  rh::exp_rows<T> rows;
  rh::table_buffer<r::simd::pack<T>> cells;
  std::vector<T> g_up, g_diag;
  gx.assign(x.size(), T(0));
  gy.assign(y.size(), T(0));
  bool const whole = every == 0;
  auto const packs = static_cast<std::size_t>(rh::exp_table_packs<T>(p.band, n));
  T const v = rh::forward_exp_domain(p, lanes, rows, whole ? 1 : every, whole ? cells.reserve(packs) : nullptr);
  rh::backward_exp_domain(p, rows, cells, whole, T(1), lanes, g_up, g_diag, r::series_view<T>{gx.data(), n, d},
                          r::series_view<T>{gy.data(), k, d});
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("exp-domain gradients: whole table, rows above every strip and two levels give the same bits",
                   "[expdomain][checkpoint]", float, double) {
  using T = TestType;
  std::uint64_t seed = 400;
  for (auto [n, k] : {std::pair<r::index_t, r::index_t>{1, 1}, {1, 40}, {40, 1}, {17, 23}, {70, 33}, {33, 70},
                      {200, 61}, {170, 180}})
    for (auto const& band : {r::band_spec{}, r::band_spec::radius(0), r::band_spec::radius(1), r::band_spec::radius(3),
                             r::band_spec::window(0.2), r::band_spec::itakura(1.5), r::band_spec::itakura(3.0)})
      for (r::index_t d : {1, 2}) {
        auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n * d), ++seed));
        auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(k * d), ++seed));
        INFO("n " << n << " m " << k << " d " << d << " band kind " << int(band.type()));
        auto const meas = r::measures::soft_dtw<T>(T(0.3), band);
        std::vector<T> gx1, gy1, gx2, gy2;
        T const whole = exp_domain_grad(meas, x, y, d, 0, gx1, gy1);
        CHECK(std::isfinite(double(whole)));
        for (r::index_t every : {1, 2, 3, 5}) {
          INFO("checkpoint interval " << every);
          CHECK(exp_domain_grad(meas, x, y, d, every, gx2, gy2) == whole);
          CHECK(resilin_test::bitwise_equal(gx2, gx1));
          CHECK(resilin_test::bitwise_equal(gy2, gy1));
        }
        // the front end (whole table at these sizes) gives the same, except for a single row or
        // column, which it takes in the log domain (exp_domain_applies: the exact path sum)
        if (n == 1 || k == 1) continue;
        std::vector<T> gx3(x.size()), gy3(y.size());
        CHECK(r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx3, d), r::view(gy3, d)) == whole);
        CHECK(resilin_test::bitwise_equal(gx3, gx1));
      }
}

TEST_CASE("exp-domain training keeps the slots of the rows between the strips", "[expdomain][checkpoint]") {
  namespace rh = r::host_detail;
  using T = double;
  constexpr r::index_t H = rh::strip_rows<T>;
  for (auto [n, radius] : {std::pair<r::index_t, r::index_t>{100000, 32}, {100000, 1}, {4096, 100}}) {
    INFO("n = m = " << n << ", radius " << radius);
    auto const band = r::band_spec::radius(radius).geometry(n, n);
    rh::strip_row_slices<T> slices;
    slices.plan(band, n);
    r::index_t const strips = (n + H - 1) / H;
    CHECK(slices.slots() == strips);
    // each slot: the span of its strip's first row and one entry (2r + 2 at most), not all
    // n + H + 1 entries of a row
    for (r::index_t s = 0; s < slices.slots(); ++s) {
      auto const span = band.row(s * H);
      CHECK(slices.width(s) == span.hi - span.lo + 2);
      CHECK(slices.width(s) <= 2 * radius + 2);
    }
    CHECK(rh::row_checkpoint_interval<T>(band, n, 2) == 1);
  }
  // the whole grid: rows of n + H + 1 entries, two levels beyond checkpoint_rows_bytes
  auto const full = r::band_spec{}.geometry(65536, 65536);
  CHECK(rh::row_checkpoint_interval<T>(full, 65536, 2) > 1);
  CHECK(rh::row_checkpoint_interval<T>(r::band_spec{}.geometry(1024, 1024), 1024, 2) == 1);
}

namespace {

/// A z-normalised random walk of n samples in float (the shape of real series).
std::vector<float> random_walk(r::index_t n, std::uint64_t seed) {
  auto const steps = random_values(static_cast<std::size_t>(n), seed);
  std::vector<double> w(steps.size());
  double s = 0, sum = 0, sq = 0;
  for (std::size_t i = 0; i < w.size(); ++i) sum += (w[i] = s += steps[i]);
  double const mean = sum / static_cast<double>(w.size());
  for (double v : w) sq += (v - mean) * (v - mean);
  double const sd = std::sqrt(sq / static_cast<double>(w.size())) + 1e-12;
  std::vector<float> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>((w[i] - mean) / sd);
  return out;
}

}  // namespace

TEST_CASE("float keeps the exponential domain where its exponents provably stay exact", "[expdomain]") {
  namespace rh = r::host_detail;
  // the bound on R was (n + m) times the largest delta: float left the exponential domain from
  // n = m of about 5500-6000 at gamma = 0.1 on z-normalised series (the log domain costs 3x, more
  // in narrow bands). The edge paths' bound keeps 10^4 x 10^4 in it, banded or not (the value
  // checked in the band: the grid's 10^8 cells take minutes in the sanitizer build).
  auto const x = random_walk(10000, 71), y = random_walk(10000, 72);
  r::series_view<float const> const xv{x.data(), 10000, 1}, yv{y.data(), 10000, 1};
  for (auto const& spec : {r::band_spec{}, r::band_spec::radius(10)}) {
    CHECK(rh::exp_domain_applies<float, r::squared_euclidean>(xv, yv, 0.1f, spec.geometry(10000, 10000)));
    if (spec.type() == r::band_spec::kind::none) continue;
    auto const xd = resilin_test::cast<double>(x), yd = resilin_test::cast<double>(y);
    double const want = r::value(r::measures::soft_dtw<double>(0.1, spec), r::view(xd, 1), r::view(yd, 1));
    CHECK(double(r::value(r::measures::soft_dtw<float>(0.1f, spec), xv, yv)) == Approx(want).epsilon(1e-4));
  }
  // wherever the bound admits a pair, its float value is right: gamma down to where it stops
  // admitting (the exponents then near 2^22 of float's 2^24 exact integers), constant and
  // random series, bands, several lengths; the double value (2^50) is the reference
  std::uint64_t seed = 500;
  for (r::index_t n : {40, 300, 900})
    for (auto const& spec : {r::band_spec{}, r::band_spec::radius(3), r::band_spec::itakura(2.0)})
      for (int kind = 0; kind < 2; ++kind) {
        r::index_t const m = n + n / 3;
        std::vector<float> a = kind == 0 ? random_walk(n, ++seed) : std::vector<float>(static_cast<std::size_t>(n), 3.0f);
        std::vector<float> b = kind == 0 ? random_walk(m, ++seed) : std::vector<float>(static_cast<std::size_t>(m), -2.0f);
        r::series_view<float const> const av{a.data(), n, 1}, bv{b.data(), m, 1};
        auto const band = spec.geometry(n, m);
        auto const ad = resilin_test::cast<double>(a), bd = resilin_test::cast<double>(b);
        int admitted = 0;
        for (double g = 1.0; g > 1e-6; g /= 2) {
          if (!rh::exp_domain_applies<float, r::squared_euclidean>(av, bv, float(g), band)) break;
          ++admitted;
          INFO("n " << n << " m " << m << " kind " << kind << " band " << int(spec.type()) << " gamma " << g);
          double const want = r::value(r::measures::soft_dtw<double>(double(float(g)), spec), r::view(ad, 1), r::view(bd, 1));
          CHECK(double(r::value(r::measures::soft_dtw<float>(float(g), spec), av, bv)) ==
                Approx(want).epsilon(1e-4).margin(1e-3 * g));
          // the decision is symmetric, and so is the value
          CHECK(rh::exp_domain_applies<float, r::squared_euclidean>(bv, av, float(g), spec.geometry(m, n)));
        }
        CHECK(admitted > 0);
      }
}

TEST_CASE("the edge paths' bound exceeds R in every cell of the band", "[expdomain]") {
  namespace rh = r::host_detail;
  // R (soft) <= R (hard) <= the cost of any path into the cell; the bound must hold for every
  // cell, not only the last: a hard-DTW recursion over the band gives R's largest value
  std::uint64_t seed = 700;
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{1, 5}, {5, 1}, {37, 37}, {120, 300}, {300, 120}})
    for (auto const& spec : {r::band_spec{}, r::band_spec::radius(0), r::band_spec::radius(4), r::band_spec::window(0.3),
                             r::band_spec::itakura(1.5), r::band_spec::itakura(4.0)})
      for (r::index_t d : {1, 3}) {
        auto const x = random_values(static_cast<std::size_t>(n * d), ++seed, -3.0, 2.0);
        auto const y = random_values(static_cast<std::size_t>(m * d), ++seed, -1.0, 4.0);
        r::series_view<double const> const xv{x.data(), n, d}, yv{y.data(), m, d};
        auto const band = spec.geometry(n, m);
        double const inf = std::numeric_limits<double>::infinity();
        std::vector<double> R(static_cast<std::size_t>(n * m), inf);
        auto const at = [&](r::index_t i, r::index_t j) {
          if (i < 0 || j < 0) return i == -1 && j == -1 ? 0.0 : inf;
          return R[static_cast<std::size_t>(i * m + j)];
        };
        double largest = 0;
        for (r::index_t i = 0; i < n; ++i)
          for (r::index_t j = 0; j < m; ++j) {
            if (!band.contains(i, j)) continue;
            double const c = r::squared_euclidean::value(xv.row(i), yv.row(j), d);
            double const v = c + std::min({at(i - 1, j - 1), at(i - 1, j), at(i, j - 1)});
            R[static_cast<std::size_t>(i * m + j)] = v;
            if (v < inf) largest = std::max(largest, v);
          }
        INFO("n " << n << " m " << m << " d " << d << " band " << int(spec.type()));
        CHECK(largest <= rh::edge_path_bound<double, r::squared_euclidean>(xv, yv, band));
        CHECK(largest <= rh::edge_path_bound<double, r::squared_euclidean>(yv, xv, spec.geometry(m, n)));
      }
}

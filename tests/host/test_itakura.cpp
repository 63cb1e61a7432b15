// The Itakura parallelogram (core/band.hpp): its rows against tslearn's masks for n = m (data
// generated offline, tests/data/itakura), its rows, anti-diagonals and columns against the
// mask written cell by cell from its definition (reference.hpp), its properties (monotone
// non-empty rows, symmetry, the slope's limits), and every host engine on it against the masked
// references: the enumeration of every path, the straightforward loop, the hard recursion and
// the brute-force nearest neighbour.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/backend/device/wavefront.hpp>
#include <resilin/resilin.hpp>
#include <data/itakura/tslearn_masks.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
namespace dd = resilin::device_detail;
using resilin_test::max_rel_diff;
using resilin_test::random_values;

namespace {
constexpr double slopes[] = {1.0, 1.1, 1.5, 2.0, 3.0, 7.25, 1e6};
}

TEST_CASE("itakura: rows, anti-diagonals and columns are the parallelogram's cells", "[band][itakura]") {
  for (double s : slopes)
    for (r::index_t n = 1; n <= 30; n += (n < 8 ? 1 : 5))
      for (r::index_t m = 1; m <= 30; m += (m < 8 ? 1 : 4)) {
        CAPTURE(s, n, m);
        auto const spec = r::band_spec::itakura(s);
        auto const g = spec.geometry(n, m);
        ref::mask const mask = ref::itakura(n, m, spec.itakura_slope_scaled(), r::itakura_slope_scale);
        r::index_range prev{0, 0};
        for (r::index_t i = 0; i < n; ++i) {
          r::index_range const row = g.row(i);
          CHECK(row.size() >= 1);
          CHECK(row.lo >= prev.lo);  // both ends non-decreasing
          CHECK(row.hi >= prev.hi);
          prev = row;
          for (r::index_t j = 0; j < m; ++j) REQUIRE(g.contains(i, j) == mask(i, j));
        }
        CHECK(g.contains(0, 0));
        CHECK(g.contains(n - 1, m - 1));
        // the transpose's rows are the columns
        auto const t = spec.geometry(m, n);
        for (r::index_t i = 0; i < n; ++i)
          for (r::index_t j = 0; j < m; ++j) REQUIRE(t.contains(j, i) == mask(i, j));
        // the device's anti-diagonal spans and column walk
        for (r::index_t d = 0; d <= n + m - 2; ++d) {
          dd::diag_span const span = dd::diagonal(g, d);
          for (r::index_t i = 0; i < n; ++i) {
            r::index_t const j = d - i;
            REQUIRE(span.contains(i) == (j >= 0 && j < m && mask(i, j)));
          }
        }
        if (n >= 2 && m >= 2) {
          auto w = dd::band_column_walk::first(g);
          for (r::index_t j = 0; j < m; ++j) {
            for (r::index_t i = 0; i < n; ++i) REQUIRE((w.lo <= i && i <= w.hi) == mask(i, j));
            w.advance();
          }
        }
      }
}

TEST_CASE("itakura: for n = m, tslearn's itakura_mask", "[band][itakura]") {
  long const* p = resilin_test::tslearn::itakura_masks;
  int cases = 0;
  while (*p != 0) {
    r::index_t const n = p[0];
    double const s = static_cast<double>(p[1]) / 1000.0;
    p += 2;
    CAPTURE(n, s);
    auto const g = r::band_spec::itakura(s).geometry(n, n);
    for (r::index_t i = 0; i < n; ++i, p += 2) {
      CAPTURE(i);
      CHECK(g.row(i).lo == p[0]);
      CHECK(g.row(i).hi == p[1]);
    }
    ++cases;
  }
  CHECK(cases == 64);
}

TEST_CASE("itakura: the slope's limits and the device's band", "[band][itakura]") {
  // slope 1 on n = m: the diagonal alone (the narrowest Sakoe-Chiba band)
  auto const one = r::band_spec::itakura(1.0).geometry(40, 40);
  for (r::index_t i = 0; i < 40; ++i) CHECK((one.row(i).lo == i && one.row(i).hi == i));
  // a slope beyond the grid's aspect: every cell but the first and last rows' and columns'
  auto const wide = r::band_spec::itakura(1e9).geometry(20, 30);
  CHECK(wide.row(0).hi == 1);
  CHECK(wide.row(10).lo == 1);
  CHECK(wide.row(10).hi == 28);
  CHECK(wide.row(19).lo == 28);
  // larger slopes never remove a cell
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{50, 50}, {37, 91}, {120, 64}}) {
    CAPTURE(n, m);
    for (std::size_t k = 1; k < std::size(slopes); ++k) {
      auto const small = r::band_spec::itakura(slopes[k - 1]).geometry(n, m), big = r::band_spec::itakura(slopes[k]).geometry(n, m);
      for (r::index_t i = 0; i < n; ++i) CHECK((big.row(i).lo <= small.row(i).lo && big.row(i).hi >= small.row(i).hi));
    }
  }
  // long series: 128-bit products, no overflow (n^3 s exceeds 2^63 here)
  auto const huge = r::band_spec::itakura(1e6).geometry(3'000'000, 2'000'000);
  CHECK(huge.row(1'500'000).size() > 1'000'000);
  CHECK(huge.contains(2'999'999, 1'999'999));
  // the device band resolves the same geometry
  for (double s : slopes) {
    auto const spec = r::band_spec::itakura(s);
    auto const db = dd::make_device_band(spec);
    for (auto [n, m] : {std::pair<r::index_t, r::index_t>{17, 17}, {5, 300}, {300, 7}}) {
      auto const a = db.geometry(n, m), b = spec.geometry(n, m);
      CHECK((a.n == b.n && a.m == b.m && a.half_width == b.half_width && a.slope == b.slope));
    }
  }
  CHECK(resilin_test::message_of<r::invalid_argument>([] { r::band_spec::itakura(0.5); }) ==
        "Itakura slope must be a finite value >= 1, got 0.5");
  CHECK(resilin_test::message_of<r::invalid_argument>([] { r::band_spec::itakura(std::nan("")); }) ==
        "Itakura slope must be a finite value >= 1, got nan");
}

TEST_CASE("itakura: soft-DTW against the enumeration of the parallelogram's paths", "[band][itakura]") {
  std::uint64_t seed = 70;
  for (double s : {1.0, 1.5, 2.0})
    for (r::index_t n = 2; n <= 6; ++n)
      for (r::index_t m = 2; m <= 6; ++m)
        for (double gamma : {0.1, 1.0}) {
          CAPTURE(s, n, m, gamma);
          auto const x = random_values(static_cast<std::size_t>(n), ++seed), y = random_values(static_cast<std::size_t>(m), ++seed);
          auto const spec = r::band_spec::itakura(s);
          ref::mask const mask = ref::itakura(n, m, spec.itakura_slope_scaled(), r::itakura_slope_scale);
          auto const b = ref::brute_force(x.data(), y.data(), n, m, r::index_t(1), gamma, ref::point_cost::squared_euclidean, &mask);
          auto const meas = r::measures::soft_dtw<double>(gamma, spec);
          std::vector<double> gx(static_cast<std::size_t>(n)), gy(static_cast<std::size_t>(m));
          CHECK(r::value(meas, r::view(x), r::view(y)) == Approx(b.value).epsilon(1e-12));
          CHECK(r::value_and_grad(meas, r::view(x), r::view(y), r::view(gx), r::view(gy)) == Approx(b.value).epsilon(1e-12));
          CHECK(max_rel_diff(gx, b.gx) <= 1e-10);
          CHECK(max_rel_diff(gy, b.gy) <= 1e-10);
          CHECK(r::value(r::measures::dtw(spec), r::view(x), r::view(y)) == Approx(b.min_cost).epsilon(1e-14));
        }
}

TEST_CASE("itakura: every host engine against the masked references", "[band][itakura]") {
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{60, 45}, {100, 100}, {33, 170}, {257, 250}})
    for (double s : {1.25, 2.0}) {
      CAPTURE(n, m, s);
      r::index_t const d = 2;
      auto const x = random_values(static_cast<std::size_t>(n * d), 11), y = random_values(static_cast<std::size_t>(m * d), 12);
      auto const spec = r::band_spec::itakura(s);
      ref::mask const mask = ref::itakura(n, m, spec.itakura_slope_scaled(), r::itakura_slope_scale);
      for (double gamma : {1.0, 0.05}) {
        auto const meas = r::measures::soft_dtw<double>(gamma, spec);
        std::vector<double> E(static_cast<std::size_t>(n * m), -1.0), Er(E.size()), gx(static_cast<std::size_t>(n * d)),
            gy(static_cast<std::size_t>(m * d)), gxr(gx.size()), gyr(gy.size());
        double const vr = ref::soft_dtw_value_and_grad(x.data(), y.data(), n, m, d, gamma, gxr.data(), gyr.data(), Er.data(),
                                                       ref::point_cost::squared_euclidean, &mask);
        // the exponential-domain value and gradient (gamma = 1), the log-domain strips (0.05)
        CHECK(r::value(meas, r::view(x, d), r::view(y, d)) == Approx(vr).epsilon(1e-12));
        CHECK(r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d)) == Approx(vr).epsilon(1e-12));
        CHECK(max_rel_diff(gx, gxr) <= 1e-9);
        CHECK(max_rel_diff(gy, gyr) <= 1e-9);
        CHECK(r::alignment_matrix(meas, r::view(x, d), r::view(y, d), r::matrix_view<double>{E.data(), n, m}) ==
              Approx(vr).epsilon(1e-12));
        double worst = 0;
        for (r::index_t i = 0; i < n; ++i)
          for (r::index_t j = 0; j < m; ++j) {
            auto const k = static_cast<std::size_t>(i * m + j);
            if (!mask(i, j)) CHECK(E[k] == 0.0);
            worst = std::max(worst, std::abs(E[k] - Er[k]));
          }
        CHECK(worst <= 1e-10);
        // the second-order passes see the same band: the sharp value is <E, Delta>
        double sharp = 0;
        for (r::index_t i = 0; i < n; ++i)
          for (r::index_t j = 0; j < m; ++j) {
            double dist = 0;
            for (r::index_t c = 0; c < d; ++c) {
              double const e = x[static_cast<std::size_t>(i * d + c)] - y[static_cast<std::size_t>(j * d + c)];
              dist += e * e;
            }
            sharp += Er[static_cast<std::size_t>(i * m + j)] * dist;
          }
        CHECK(r::sharp_value(meas, r::view(x, d), r::view(y, d)) == Approx(sharp).epsilon(1e-9));
      }
      CHECK(r::value(r::measures::dtw(spec), r::view(x, d), r::view(y, d)) ==
            Approx(ref::hard_dtw_value(x.data(), y.data(), n, m, d, ref::point_cost::squared_euclidean, &mask)).epsilon(1e-14));
    }
}

TEST_CASE("itakura: batches in lock-step groups and pairwise forms equal their pairs", "[band][itakura]") {
  // short pairs of equal lengths run in lock-step groups; a ragged batch mixes the engines
  resilin_test::ragged<double> const xs(40, 24, 1, 21, true), ys(40, 24, 1, 22, true), zs(13, 50, 1, 23);
  auto const spec = r::band_spec::itakura(1.5);
  for (double gamma : {1.0, 0.1}) {
    CAPTURE(gamma);
    auto const meas = r::measures::soft_dtw<double>(gamma, spec);
    std::vector<double> out(40);
    r::values(r::host, meas, xs.view(), ys.view(), std::span<double>(out));
    for (r::index_t b = 0; b < 40; ++b)
      CHECK(out[static_cast<std::size_t>(b)] == Approx(r::value(meas, xs.view()[b], ys.view()[b])).epsilon(1e-12));
    std::vector<double> pw(static_cast<std::size_t>(13 * 40));
    r::pairwise(r::host, meas, zs.view(), xs.view(), r::matrix_view<double>{pw.data(), 13, 40});
    for (r::index_t a = 0; a < 13; ++a)
      for (r::index_t b = 0; b < 40; b += 7) {
        auto const za = zs.series(a), xb = xs.series(b);
        ref::mask const mask = ref::itakura(static_cast<r::index_t>(za.size()), 24, spec.itakura_slope_scaled(), r::itakura_slope_scale);
        double const expected = ref::soft_dtw_value_and_grad(za.data(), xb.data(), static_cast<r::index_t>(za.size()), 24, 1,
                                                             gamma, nullptr, nullptr, nullptr,
                                                             ref::point_cost::squared_euclidean, &mask);
        CHECK(pw[static_cast<std::size_t>(a * 40 + b)] == Approx(expected).epsilon(1e-11));
      }
  }
}

TEST_CASE("itakura: the pruned nearest neighbours are the brute force's", "[band][itakura][nearest]") {
  resilin_test::ragged<double> const refs(60, 80, 1, 31), queries(20, 80, 1, 32);
  for (double s : {1.2, 2.0}) {
    CAPTURE(s);
    auto const meas = r::measures::dtw(r::band_spec::itakura(s));
    auto const found = r::nearest_neighbors(r::host, meas, queries.view(), refs.view());
    std::vector<double> all(static_cast<std::size_t>(20 * 60));
    r::pairwise(r::host, meas, queries.view(), refs.view(), r::matrix_view<double>{all.data(), 20, 60});
    for (r::index_t q = 0; q < 20; ++q) {
      auto const row = all.begin() + q * 60;
      auto const best = std::min_element(row, row + 60) - row;
      CHECK(found[static_cast<std::size_t>(q)].index == best);
      CHECK(found[static_cast<std::size_t>(q)].distance == row[best]);
    }
  }
}

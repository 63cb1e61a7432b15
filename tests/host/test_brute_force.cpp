// Brute force (issue 2, item 6): for n, m <= 5 enumerate every monotone alignment path and
// compare the value, the soft alignment matrix E and the gradients of the library with the
// enumeration, soft and hard, for every shape (1xk and kx1 included), 1-3 channels, the three
// point distances and several bands. The naive table oracle (reference (a)) is checked against
// the enumeration too, so both oracles are validated before they are trusted elsewhere.
#include <array>
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
using resilin_test::max_abs_diff;
using resilin_test::random_values;

namespace {

struct band_case {
  char const* name;
  r::band_spec spec;
};

std::vector<band_case> band_cases() {
  return {{"none", r::band_spec::none()},
          {"radius 0", r::band_spec::radius(0)},
          {"radius 1", r::band_spec::radius(1)},
          {"radius 2", r::band_spec::radius(2)},
          {"window 0.3", r::band_spec::window(0.3)}};
}

/// The documented band mask for this spec and these lengths.
ref::mask mask_for(r::band_spec const& b, r::index_t n, r::index_t m) {
  return ref::sakoe_chiba(n, m, b.radius_for(n, m));
}

template <class Distance>
ref::point_cost cost_of() {
  if constexpr (std::is_same_v<Distance, r::squared_euclidean>)
    return ref::point_cost::squared_euclidean;
  else if constexpr (std::is_same_v<Distance, r::half_squared_euclidean>)
    return ref::point_cost::half_squared_euclidean;
  else
    return ref::point_cost::l1;
}

/// Every shape up to 5 x 5, 1-3 channels, every band: soft-DTW against the enumeration.
template <class Distance>
void soft_against_enumeration(double gamma, double tol) {
  auto const pc = cost_of<Distance>();
  std::uint64_t seed = 1;
  for (r::index_t n = 1; n <= 5; ++n)
    for (r::index_t m = 1; m <= 5; ++m)
      for (r::index_t d = 1; d <= 3; ++d)
        for (auto const& bc : band_cases()) {
          auto const x = random_values(static_cast<std::size_t>(n * d), ++seed, -2, 2);
          auto const y = random_values(static_cast<std::size_t>(m * d), ++seed, -2, 2);
          auto const mask = mask_for(bc.spec, n, m);
          auto const bf = ref::brute_force(x.data(), y.data(), n, m, d, gamma, pc, &mask);
          INFO("n = " << n << ", m = " << m << ", d = " << d << ", band " << bc.name
                      << ", gamma = " << gamma << ", paths " << bf.paths);
          REQUIRE(bf.paths >= 1);  // the documented band never disconnects (0,0) from (n-1,m-1)

          auto const meas = r::measures::soft_dtw<double, Distance>(gamma, bc.spec);
          auto const xv = r::view(x, d);
          auto const yv = r::view(y, d);
          double const v = r::value(meas, xv, yv);
          CHECK(std::abs(v - bf.value) <= tol * std::max(1.0, std::abs(bf.value)));

          // The naive table oracle agrees with the enumeration (validates the oracle).
          std::vector<double> Eref(static_cast<std::size_t>(n * m)), gxr(x.size()), gyr(y.size());
          double const vr = ref::soft_dtw_value_and_grad(x.data(), y.data(), n, m, d, gamma,
                                                         gxr.data(), gyr.data(), Eref.data(), pc,
                                                         &mask);
          CHECK(std::abs(vr - bf.value) <= tol * std::max(1.0, std::abs(bf.value)));
          CHECK(max_abs_diff(Eref, bf.E) <= tol);

          std::vector<double> E(static_cast<std::size_t>(n * m), -7.0);
          double const ve = r::alignment_matrix(meas, xv, yv, r::matrix_view<double>{E.data(), n, m});
          CHECK(resilin_test::values_agree(ve, v));
          CHECK(max_abs_diff(E, bf.E) <= tol);

          std::vector<double> gx(x.size(), 99.0), gy(y.size(), 99.0);
          double const vg = r::value_and_grad(meas, xv, yv, r::view(gx, d), r::view(gy, d));
          CHECK(resilin_test::values_agree(vg, v));
          CHECK(max_abs_diff(gx, bf.gx) <= tol * 10);
          CHECK(max_abs_diff(gy, bf.gy) <= tol * 10);
        }
}

}  // namespace

TEST_CASE("the enumeration counts Delannoy paths", "[brute]") {
  // |A_{n,m}| = Delannoy(n-1, m-1) (spec §3.1); Delannoy(2,3) = 25, Delannoy(4,4) = 321.
  CHECK(ref::all_paths(3, 4).size() == 25);
  CHECK(ref::all_paths(5, 5).size() == 321);
  CHECK(ref::delannoy(2, 3) == 25);
  CHECK(ref::delannoy(9, 9) == 1462563);
  for (r::index_t n = 1; n <= 6; ++n)
    for (r::index_t m = 1; m <= 6; ++m) {
      auto const count = ref::all_paths(n, m).size();
      CHECK(count == ref::delannoy(static_cast<std::uint64_t>(n - 1), static_cast<std::uint64_t>(m - 1)));
      CHECK(std::log(double(count)) == Approx(ref::log_delannoy(n - 1, m - 1)).epsilon(1e-12).margin(1e-12));
      CHECK(std::log(double(count)) == Approx(ref::log_path_count(n, m)).epsilon(1e-12).margin(1e-12));
    }
  CHECK(std::log(1462563.0) == Approx(ref::log_delannoy(9, 9)).epsilon(1e-13));
}

TEST_CASE("soft-DTW of constant series is -gamma log(number of paths)", "[brute]") {
  // Every path costs 0, so the soft minimum is -gamma log |A_{n,m}| exactly.
  for (r::index_t n = 1; n <= 10; ++n)
    for (r::index_t m : {r::index_t(1), r::index_t(3), r::index_t(10)}) {
      std::vector<double> x(static_cast<std::size_t>(n), 0.5), y(static_cast<std::size_t>(m), 0.5);
      double const expected = -0.7 * std::log(double(ref::delannoy(
                                         static_cast<std::uint64_t>(n - 1), static_cast<std::uint64_t>(m - 1))));
      INFO("n = " << n << ", m = " << m);
      CHECK(r::value(r::measures::soft_dtw(0.7), r::view(x), r::view(y)) ==
            Approx(expected).epsilon(1e-13).margin(1e-14));
    }
}

TEST_CASE("soft-DTW value, E and gradients equal the enumeration (squared Euclidean)", "[brute]") {
  soft_against_enumeration<r::squared_euclidean>(1.0, 1e-12);
  soft_against_enumeration<r::squared_euclidean>(0.1, 1e-12);
}

TEST_CASE("soft-DTW value, E and gradients equal the enumeration (half squared, L1)", "[brute]") {
  soft_against_enumeration<r::half_squared_euclidean>(0.5, 1e-12);
  soft_against_enumeration<r::l1_distance>(0.3, 1e-12);
}

TEMPLATE_TEST_CASE("soft-DTW in float and double against the enumeration", "[brute]", float, double) {
  using T = TestType;
  double const tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  std::uint64_t seed = 500;
  for (r::index_t n = 1; n <= 5; ++n)
    for (r::index_t m = 1; m <= 5; ++m) {
      r::index_t const d = 2;
      auto const x = random_values(static_cast<std::size_t>(n * d), ++seed);
      auto const y = random_values(static_cast<std::size_t>(m * d), ++seed);
      auto const bf = ref::brute_force(x.data(), y.data(), n, m, d, 0.25);
      auto const xt = resilin_test::cast<T>(x), yt = resilin_test::cast<T>(y);
      std::vector<T> E(static_cast<std::size_t>(n * m)), gx(xt.size()), gy(yt.size());
      auto const meas = r::measures::soft_dtw(T(0.25));
      T const v = r::alignment_matrix(meas, r::view(xt, d), r::view(yt, d), r::matrix_view<T>{E.data(), n, m});
      r::value_and_grad(meas, r::view(xt, d), r::view(yt, d), r::view(gx, d), r::view(gy, d));
      INFO("n = " << n << ", m = " << m);
      CHECK(std::abs(double(v) - bf.value) <= tol * std::max(1.0, std::abs(bf.value)));
      CHECK(max_abs_diff(E, bf.E) <= tol);
      CHECK(max_abs_diff(gx, bf.gx) <= 10 * tol);
      CHECK(max_abs_diff(gy, bf.gy) <= 10 * tol);
    }
}

TEST_CASE("hard DTW: value, E, gradient and path against the enumeration", "[brute][hard]") {
  std::uint64_t seed = 9000;
  for (r::index_t n = 1; n <= 5; ++n)
    for (r::index_t m = 1; m <= 5; ++m)
      for (r::index_t d = 1; d <= 3; ++d)
        for (auto const& bc : band_cases()) {
          auto const x = random_values(static_cast<std::size_t>(n * d), ++seed, -2, 2);
          auto const y = random_values(static_cast<std::size_t>(m * d), ++seed, -2, 2);
          auto const mask = mask_for(bc.spec, n, m);
          auto const bf = ref::brute_force(x.data(), y.data(), n, m, d, 0.0,
                                           ref::point_cost::squared_euclidean, &mask);
          INFO("n = " << n << ", m = " << m << ", d = " << d << ", band " << bc.name);
          // Random data: the optimum is unique with overwhelming probability; make sure.
          std::size_t optimal = 0;
          for (double c : bf.costs) optimal += (c - bf.min_cost) <= 1e-9 ? 1 : 0;
          REQUIRE(optimal == 1);

          auto const meas = r::measures::dtw(bc.spec);
          auto const xv = r::view(x, d);
          auto const yv = r::view(y, d);
          double const v = r::value(meas, xv, yv);
          CHECK(v == Approx(bf.min_cost).epsilon(1e-13).margin(1e-14));
          CHECK(v == Approx(ref::hard_dtw_value(x.data(), y.data(), n, m, d,
                                                ref::point_cost::squared_euclidean, &mask))
                         .epsilon(1e-13).margin(1e-14));

          std::vector<double> E(static_cast<std::size_t>(n * m), -1.0);
          r::alignment_matrix(meas, xv, yv, r::matrix_view<double>{E.data(), n, m});
          CHECK(max_abs_diff(E, bf.E) == 0.0);  // the indicator of the optimal path

          std::vector<double> gx(x.size()), gy(y.size());
          r::value_and_grad(meas, xv, yv, r::view(gx, d), r::view(gy, d));
          CHECK(max_abs_diff(gx, bf.gx) <= 1e-13);
          CHECK(max_abs_diff(gy, bf.gy) <= 1e-13);

          double pv = -1;
          auto const p = r::alignment_path(meas, xv, yv, &pv);
          CHECK(pv == v);
          ref::path const pp(p.begin(), p.end());
          REQUIRE(ref::is_alignment_path(pp, n, m));
          CHECK(pp == bf.all[bf.argmin]);
          for (auto const& c : pp) CHECK(mask(c[0], c[1]));
          CHECK(ref::path_cost(pp, x.data(), y.data(), d) == Approx(v).epsilon(1e-13).margin(1e-14));
        }
}

TEST_CASE("hard DTW with ties: the path is one of the optimal paths and costs the value", "[brute][hard]") {
  // Integer series with many equal costs, so several paths are optimal.
  std::mt19937_64 gen(77);
  std::uniform_int_distribution<int> u(0, 2);
  for (int rep = 0; rep < 200; ++rep) {
    r::index_t const n = 1 + rep % 5, m = 1 + (rep / 5) % 5;
    std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(m));
    for (auto& v : x) v = u(gen);
    for (auto& v : y) v = u(gen);
    auto const bf = ref::brute_force(x.data(), y.data(), n, m, 1, 0.0);
    double v = -1;
    auto const p = r::alignment_path(r::measures::dtw(), r::view(x), r::view(y), &v);
    ref::path const pp(p.begin(), p.end());
    INFO("rep " << rep << ", n = " << n << ", m = " << m);
    CHECK(v == bf.min_cost);
    REQUIRE(ref::is_alignment_path(pp, n, m));
    CHECK(ref::path_cost(pp, x.data(), y.data(), 1) == bf.min_cost);
    // The hard E is the indicator of one optimal path, and the gradient is its gradient.
    std::vector<double> E(static_cast<std::size_t>(n * m));
    r::alignment_matrix(r::measures::dtw(), r::view(x), r::view(y), r::matrix_view<double>{E.data(), n, m});
    double ecost = 0, esum = 0;
    for (r::index_t i = 0; i < n; ++i)
      for (r::index_t j = 0; j < m; ++j) {
        double const e = E[static_cast<std::size_t>(i * m + j)];
        CHECK((e == 0.0 || e == 1.0));
        esum += e;
        ecost += e * (x[static_cast<std::size_t>(i)] - y[static_cast<std::size_t>(j)]) *
                 (x[static_cast<std::size_t>(i)] - y[static_cast<std::size_t>(j)]);
      }
    CHECK(ecost == bf.min_cost);
    CHECK(esum == double(pp.size()));
    for (auto const& c : pp) CHECK(E[static_cast<std::size_t>(c[0] * m + c[1])] == 1.0);
  }
}

TEST_CASE("hard paths stay on the grid where every step cost overflows", "[path]") {
  // (a reviewer's case) x = 1e200, y = -1e200: every squared difference is +inf, every candidate
  // ties, and the tie's diagonal moves left the grid: (0, -1), (1, 0), (2, 1)
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{3, 2}, {1, 3}, {4, 1}, {3, 3}}) {
    std::vector<double> const x(static_cast<std::size_t>(n), 1e200), y(static_cast<std::size_t>(m), -1e200);
    double v = 0;
    auto const p = r::alignment_path(r::measures::dtw(), r::view(x), r::view(y), &v);
    INFO("n = " << n << ", m = " << m);
    CHECK(v == std::numeric_limits<double>::infinity());
    REQUIRE(ref::is_alignment_path(ref::path(p.begin(), p.end()), n, m));
  }
  // and in the band (a second reviewer's case): radius 0 with n = 10, m = 3 went down the first
  // column to (7, 0), outside rows 5-9's columns [1, 2]
  for (auto const band : {r::band_spec::radius(0), r::band_spec::radius(1), r::band_spec::itakura(1.5),
                          r::band_spec::window(0.1)})
    for (auto [n, m] : {std::pair<r::index_t, r::index_t>{10, 3}, {3, 10}, {7, 7}, {12, 5}}) {
      std::vector<double> const x(static_cast<std::size_t>(n), 1e200), y(static_cast<std::size_t>(m), -1e200);
      auto const meas = r::measures::dtw(band);
      double v = 0;
      auto const p = r::alignment_path(meas, r::view(x), r::view(y), &v);
      INFO("n = " << n << ", m = " << m);
      CHECK(v == std::numeric_limits<double>::infinity());
      REQUIRE(ref::is_alignment_path(ref::path(p.begin(), p.end()), n, m));
      auto const g = band.geometry(n, m);
      for (auto const& c : p) CHECK(g.contains(c[0], c[1]));
    }
}

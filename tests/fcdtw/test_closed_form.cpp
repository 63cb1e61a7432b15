// The closed-form objective (spec/cdtw.md B.4.4, invariants 1-3 and 5-9, 12): quadrature,
// an independent sorted-union closed form, identity factors, inversion symmetry, sampling
// invariance, constant series, scaling, and gradients against central differences, including
// coincident breakpoints.
#include <support/catch.hpp>

#include <cmath>
#include <random>
#include <vector>
#include "fcdtw_test_support.hpp"

using namespace fcdtw_test;
using resilin::series_view;

namespace {
double F(pl_series const& x, pl_series const& y, owned_warp const& w, path_norm n = path_norm::l2) {
  return value(x.view(), y.view(), w.view(), n);
}
owned_warp identity(index_t K) {
  owned_warp w{std::vector<double>(static_cast<std::size_t>(K + 1)), {}};
  identity_warp(K, w.values.data());
  return w;
}
// The exact integral of ||x - y||^2 for PL x, y on one common grid.
double pl_l2(pl_series const& x, pl_series const& y) {
  auto const xi = x.view();
  double s = 0;
  for (index_t k = 0; k + 1 < x.length(); ++k) {
    double br = 0;
    for (index_t c = 0; c < x.channels; ++c) {
      double const a = x.values[k * x.channels + c] - y.values[k * x.channels + c];
      double const b = x.values[(k + 1) * x.channels + c] - y.values[(k + 1) * x.channels + c];
      br += a * a + a * b + b * b;
    }
    s += (xi.knot(k + 1) - xi.knot(k)) * br / 3;
  }
  return s;
}
}  // namespace

TEST_CASE("closed form equals dense quadrature and the sorted-union oracle", "[fcdtw][closed]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    auto const x = random_series(13, 2, seed, false);
    auto const y = random_series(17, 2, seed + 50, false);
    auto const w = warp_from(resilin_test::random_values(9, seed + 99, -1.5, 1.5));
    for (auto norm : {path_norm::l2, path_norm::l1}) {
      double const f = F(x, y, w, norm);
      double const q = quadrature(x, y, w, 400000, norm);
      CHECK(rel(f, q) < 1e-8);
      CHECK(rel(f, sorted_union(x, y, w, true, norm)) < 1e-13);
    }
    // The warp knots are needed: without them the piecewise integral is visibly wrong.
    double const q = quadrature(x, y, w, 400000);
    CHECK(rel(sorted_union(x, y, w, false), q) > 1e-3);
  }
  // A warp on its own explicit grid, channels 3, uniform x.
  auto const x = random_series(8, 3, 7, true);
  auto const y = random_series(21, 3, 8, false);
  owned_warp w{{0, 0.05, 0.05, 0.5, 0.9, 1}, {0, 0.1, 0.3, 0.35, 0.8, 1}};  // one flat segment
  CHECK(rel(F(x, y, w), quadrature(x, y, w, 400000)) < 1e-8);
  CHECK(rel(F(x, y, w), sorted_union(x, y, w)) < 1e-13);
}

TEST_CASE("closed form equals the sorted-union oracle on many random shapes", "[fcdtw][closed]") {
  // Random sizes, grids and logits up to +-50 (flat and near-vertical warp segments).
  std::mt19937_64 gen(123);
  for (int trial = 0; trial < 300; ++trial) {
    auto const nx = static_cast<index_t>(2 + gen() % 20), ny = static_cast<index_t>(2 + gen() % 20);
    auto const K = static_cast<index_t>(1 + gen() % 20), d = static_cast<index_t>(1 + gen() % 3);
    double const spread = trial % 3 == 0 ? 50.0 : 2.0;
    auto const x = random_series(nx, d, gen(), gen() % 2);
    auto const y = random_series(ny, d, gen(), gen() % 2);
    auto const w = warp_from(resilin_test::random_values(static_cast<std::size_t>(K), gen(), -spread, spread),
                             gen() % 2 ? warp_map::softplus_cumsum : warp_map::softmax_cumsum);
    double const f = F(x, y, w), o = sorted_union(x, y, w);
    CHECK(std::abs(f - o) <= 1e-12 * std::max(1.0, o));
    std::vector<double> dv(w.values.size(), 0.0);
    double const g = value_and_grad(x.view(), y.view(), w.view(), objective_grads<double>{dv.data()});
    CHECK(g == f);
    for (double e : dv) CHECK(std::isfinite(e));
  }
}

TEST_CASE("F >= 0, and F(id; x, x) = 0", "[fcdtw][closed]") {
  auto const x = random_series(16, 2, 4, true);
  CHECK(F(x, x, identity(15)) == 0.0);  // K = T - 1: every breakpoint is a shared knot
  CHECK(F(x, x, identity(7)) < 1e-28);
  CHECK(F(x, x, identity(40)) < 1e-28);
  for (std::uint64_t s = 0; s < 20; ++s) {
    auto const w = warp_from(resilin_test::random_values(11, s, -5, 5));
    CHECK(F(x, random_series(9, 2, s + 3, s % 2), w) >= 0.0);
    CHECK(F(x, x, w) >= 0.0);
  }
}

TEST_CASE("identity factor sqrt(2) (L2) and 2 (L1), and the trapezoid bound", "[fcdtw][closed]") {
  auto const x = random_series(25, 2, 10, true);
  auto const y = random_series(25, 2, 11, true);
  double const l2 = pl_l2(x, y);
  for (index_t K : {24, 7, 48, 61}) {
    CHECK(rel(F(x, y, identity(K)), std::sqrt(2.0) * l2) < 1e-12);
    CHECK(rel(F(x, y, identity(K), path_norm::l1), 2.0 * l2) < 1e-12);
  }
  // Zero logits (softplus and softmax) give the same F as the exact identity.
  std::vector<double> zero(24, 0.0);
  CHECK(rel(F(x, y, warp_from(zero)), std::sqrt(2.0) * l2) < 1e-10);
  CHECK(rel(F(x, y, warp_from(zero, warp_map::softmax_cumsum)), F(x, y, warp_from(zero))) < 1e-12);
  // Trapezoid bound on the common grid.
  double trap = 0;
  for (index_t k = 0; k + 1 < x.length(); ++k)
    for (index_t i : {k, k + 1}) {
      double d2 = 0;
      for (index_t c = 0; c < 2; ++c) d2 += std::pow(x.values[i * 2 + c] - y.values[i * 2 + c], 2);
      trap += d2 / 2 / double(x.length() - 1);
    }
  CHECK(F(x, y, identity(24)) <= std::sqrt(2.0) * trap + 1e-15);
}

TEST_CASE("inversion symmetry F(phi; x, y) = F(phi^-1; y, x)", "[fcdtw][closed]") {
  for (std::uint64_t seed : {5u, 6u}) {
    auto const x = random_series(11, 2, seed, false);
    auto const y = random_series(14, 2, seed + 1, true);
    auto const w = warp_from(resilin_test::random_values(10, seed + 2, -1, 1));
    owned_warp inv{std::vector<double>(w.values.size()), w.values};  // knots (v_j, g_j)
    for (index_t j = 0; j <= w.segments(); ++j) inv.values[j] = w.view().knot(j);
    for (auto norm : {path_norm::l2, path_norm::l1})
      CHECK(rel(F(x, y, w, norm), F(y, x, inv, norm)) < 1e-13);
  }
}

TEST_CASE("sampling invariance: interpolated knots leave F unchanged", "[fcdtw][closed]") {
  auto const x = random_series(9, 2, 20, true);
  auto const y = random_series(12, 2, 21, false);
  auto const w = warp_from(resilin_test::random_values(7, 22, -1, 1));
  double const f = F(x, y, w);
  // Insert a linearly interpolated sample in every other segment of a series.
  auto upsample = [](pl_series const& s) {
    auto const si = s.view();
    pl_series r{{}, {}, s.channels};
    for (index_t i = 0; i < s.length(); ++i) {
      r.knots.push_back(si.knot(i));
      for (index_t c = 0; c < s.channels; ++c) r.values.push_back(s.values[i * s.channels + c]);
      if (i + 1 < s.length() && i % 2 == 0) {
        double const t = 0.3 * si.knot(i) + 0.7 * si.knot(i + 1);
        r.knots.push_back(t);
        for (index_t c = 0; c < s.channels; ++c) r.values.push_back(si(t, c));
      }
    }
    return r;
  };
  CHECK(rel(F(upsample(x), y, w), f) < 1e-13);
  CHECK(rel(F(x, upsample(y), w), f) < 1e-13);
  // Refine the warp grid (uniform K -> 2K) with interpolated knot values.
  owned_warp fine{std::vector<double>(static_cast<std::size_t>(2 * w.segments() + 1)), {}};
  for (index_t j = 0; j <= 2 * w.segments(); ++j)
    fine.values[j] = j % 2 ? 0.5 * (w.values[j / 2] + w.values[j / 2 + 1]) : w.values[j / 2];
  CHECK(rel(F(x, y, fine), f) < 1e-13);
}

TEST_CASE("constant series: F = |a - b|^2 length(phi), zero gradient at the identity", "[fcdtw][closed]") {
  pl_series x{{1.0, -2.0, 1.0, -2.0, 1.0, -2.0}, {}, 2};
  pl_series y{{0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0}, {0, 0.2, 0.7, 1}, 2};
  double const c = 0.25 + 9.0;
  auto const w = warp_from(resilin_test::random_values(6, 30, -2, 2));
  double len = 0;
  for (index_t j = 0; j < 6; ++j) len += std::hypot(1.0 / 6, w.values[j + 1] - w.values[j]);
  CHECK(rel(F(x, y, w), c * len) < 1e-13);
  CHECK(rel(F(x, y, identity(6)), c * std::sqrt(2.0)) < 1e-13);
  std::vector<double> r(6, 0.0), v(7), dv(7, 0.0), dr(6);
  warp_from_logits(warp_map::softplus_cumsum, r.data(), 6, v.data());
  value_and_grad(x.view(), y.view(), uniform_warp(v.data(), 6), objective_grads<double>{dv.data()});
  logits_backward(warp_map::softplus_cumsum, r.data(), 6, dv.data(), dr.data());
  // Zero logits miss the identity by the 1e-12 in the normaliser (v_K is then forced to 1, so
  // the last segment is steeper by ~1e-12): a gradient of that size, and no more.
  for (double g : dr) CHECK(std::abs(g) < 1e-11 * c);
  auto const id = identity(6);
  std::fill(dv.begin(), dv.end(), 0.0);
  value_and_grad(x.view(), y.view(), id.view(), objective_grads<double>{dv.data()});
  for (index_t j = 1; j < 6; ++j) CHECK(std::abs(dv[j]) < 1e-15 * c);
}

TEST_CASE("scaling: F(lambda x, lambda y) = lambda^2 F", "[fcdtw][closed]") {
  auto x = random_series(10, 2, 40, false);
  auto y = random_series(7, 2, 41, true);
  auto const w = warp_from(resilin_test::random_values(6, 42));
  double const f = F(x, y, w);
  for (auto& e : x.values) e *= 3.5;
  for (auto& e : y.values) e *= 3.5;
  CHECK(rel(F(x, y, w), 3.5 * 3.5 * f) < 1e-13);
}

namespace {
// Checks dF/dv (interior knots), dF/dx, dF/dy against central differences; returns max errors.
void check_gradients(pl_series const& x, pl_series const& y, owned_warp const& w, path_norm norm,
                     double tol_v) {
  std::vector<double> dv(w.values.size(), 0.0), dx(x.values.size(), 0.0), dy(y.values.size(), 0.0);
  objective_grads<double> g{dv.data(), {dx.data(), x.length(), x.channels},
                            {dy.data(), y.length(), y.channels}, 1.0};
  double const f = value_and_grad(x.view(), y.view(), w.view(), g, norm);
  CHECK(rel(f, F(x, y, w, norm)) < 1e-15);
  std::vector<double> interior(w.values.begin() + 1, w.values.end() - 1);
  // F is C^1 but not C^2 where a warp knot sits on an x knot (x' jumps there), so a central
  // difference carries an O(h) term; Richardson's 2 D(h/2) - D(h) removes it.
  auto const fv = [&](std::vector<double> const& p) {
    owned_warp q = w;
    std::copy(p.begin(), p.end(), q.values.begin() + 1);
    return F(x, y, q, norm);
  };
  auto const fd1 = resilin_test::central_differences(fv, interior, 1e-5);
  auto const fd2 = resilin_test::central_differences(fv, interior, 5e-6);
  std::vector<double> fdv(fd1.size());
  for (std::size_t k = 0; k < fdv.size(); ++k) fdv[k] = 2 * fd2[k] - fd1[k];
  std::vector<double> dv_in(dv.begin() + 1, dv.end() - 1);
  CHECK(resilin_test::max_rel_diff(dv_in, fdv) < tol_v);
  auto const fdx = resilin_test::central_differences(
      [&](std::vector<double> const& p) {
        pl_series q = x;
        q.values = p;
        return F(q, y, w, norm);
      },
      x.values, 1e-6);
  CHECK(resilin_test::max_rel_diff(dx, fdx) < 1e-8);
  auto const fdy = resilin_test::central_differences(
      [&](std::vector<double> const& p) {
        pl_series q = y;
        q.values = p;
        return F(x, q, w, norm);
      },
      y.values, 1e-6);
  CHECK(resilin_test::max_rel_diff(dy, fdy) < 1e-8);
}
}  // namespace

TEST_CASE("gradients match finite differences on generic instances", "[fcdtw][closed][grad]") {
  for (std::uint64_t seed : {60u, 61u, 62u})
    for (auto norm : {path_norm::l2, path_norm::l1}) {
      auto const x = random_series(9, 2, seed, seed % 2);
      auto const y = random_series(12, 2, seed + 7, false);
      auto const r = resilin_test::random_values(8, seed + 8, -1.5, 1.5);
      check_gradients(x, y, warp_from(r), norm, 1e-7);
      // through the logits
      auto const w = warp_from(r);
      std::vector<double> dv(w.values.size(), 0.0), dr(r.size());
      value_and_grad(x.view(), y.view(), w.view(), objective_grads<double>{dv.data()}, norm);
      logits_backward(warp_map::softplus_cumsum, r.data(), 8, dv.data(), dr.data());
      auto const fdr = resilin_test::central_differences(
          [&](std::vector<double> const& p) { return F(x, y, warp_from(p), norm); }, r, 1e-6);
      CHECK(resilin_test::max_rel_diff(dr, fdr) < 1e-7);
    }
}

TEST_CASE("gradients match finite differences at coincident breakpoints", "[fcdtw][closed][grad]") {
  // phi grid = series grids at the identity: every breakpoint is all three kinds at once.
  {
    auto const x = random_series(9, 2, 70, true);
    auto const y = random_series(9, 2, 71, true);
    check_gradients(x, y, identity(8), path_norm::l2, 1e-7);
    check_gradients(x, y, identity(8), path_norm::l1, 1e-7);
  }
  // x-knot pre-images on y knots, and warp knots on x knots: phi(1/8) = 0.05, phi(3/8) = 0.3,
  // phi(1/2) = 0.5 and phi(3/4) = 0.6 are all x knots; y knots are m / 8.
  {
    pl_series x = random_series(7, 2, 72, true);
    x.knots = {0, 0.05, 0.3, 0.5, 0.6, 0.8, 1};
    auto const y = random_series(9, 2, 73, true);
    owned_warp const w{{0, 0.1, 0.5, 0.6, 1}, {}};
    REQUIRE(evaluate(w.view(), 0.125).phi == 0.05);
    check_gradients(x, y, w, path_norm::l2, 1e-7);
    check_gradients(x, y, w, path_norm::l1, 1e-7);
  }
}

TEST_CASE("float instantiation agrees with double", "[fcdtw][closed]") {
  auto const x = random_series(20, 2, 80, true);
  auto const y = random_series(15, 2, 81, false);
  auto const w = warp_from(resilin_test::random_values(14, 82));
  auto const xf = resilin_test::cast<float>(x.values), yf = resilin_test::cast<float>(y.values);
  auto const ykf = resilin_test::cast<float>(y.knots), wf = resilin_test::cast<float>(w.values);
  auto const xi = uniform_interpolant(series_view<float const>{xf.data(), 20, 2});
  auto const yi = knotted_interpolant(series_view<float const>{yf.data(), 15, 2}, ykf.data());
  std::vector<float> dv(15, 0.f), dx(40, 0.f), dy(30, 0.f);
  float const f = value_and_grad(xi, yi, uniform_warp(wf.data(), 14),
                                 objective_grads<float>{dv.data(), {dx.data(), 20, 2}, {dy.data(), 15, 2}});
  CHECK(rel(f, F(x, y, w)) < 1e-5);
  CHECK(value(xi, yi, uniform_warp(wf.data(), 14)) == f);
}

TEST_CASE("float sums of long pairs stay accurate", "[fcdtw][closed]") {
  // one term per piece, summed plainly in float: 0.7 % off at 4e6 samples, 2.6 % at 2^23
  index_t const n = index_t{1} << 21;
  std::vector<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) {
    double const t = static_cast<double>(k) / static_cast<double>(n - 1);
    x[static_cast<std::size_t>(k)] = static_cast<float>(std::sin(40.0 * t));
    y[static_cast<std::size_t>(k)] = static_cast<float>(std::cos(31.0 * t));
  }
  std::vector<double> xd(x.begin(), x.end()), yd(y.begin(), y.end());
  std::vector<float> v(2);
  std::vector<double> vd(2);
  identity_warp<float>(1, v.data());
  identity_warp<double>(1, vd.data());
  float const f = value(uniform_interpolant(series_view<float const>{x.data(), n, 1}),
                        uniform_interpolant(series_view<float const>{y.data(), n, 1}), uniform_warp(v.data(), 1));
  double const exact = value(uniform_interpolant(series_view<double const>{xd.data(), n, 1}),
                             uniform_interpolant(series_view<double const>{yd.data(), n, 1}),
                             uniform_warp(vd.data(), 1));
  INFO("float " << f << " double " << exact);
  CHECK(rel(f, exact) < 1e-5);
}

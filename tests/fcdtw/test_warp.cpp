// PL warps from logits: identity at zero, validity for extreme logits, the logit backward and
// the evaluate pullback against central differences.
#include <support/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#include <resilin/fcdtw/warp.hpp>
#include "host/helpers.hpp"

using namespace resilin;
using namespace resilin::fcdtw;

namespace {
std::vector<double> warp_of(warp_map map, std::vector<double> const& r) {
  std::vector<double> v(r.size() + 1);
  warp_from_logits(map, r.data(), static_cast<index_t>(r.size()), v.data());
  return v;
}
// A nonlinear functional of the interior knots: sum_j c_j v_j^2 + b_j v_j (j = 1..K-1).
double functional(std::vector<double> const& v, std::vector<double> const& c, std::vector<double>& dv) {
  double f = 0;
  dv.assign(v.size(), 0.0);
  for (std::size_t j = 0; j < v.size(); ++j) {
    f += c[j] * v[j] * v[j] + c[c.size() - 1 - j] * v[j];
    dv[j] = 2 * c[j] * v[j] + c[c.size() - 1 - j];
  }
  return f;
}
}  // namespace

TEST_CASE("zero logits give the identity warp for both maps", "[fcdtw][warp]") {
  for (index_t K : {1, 2, 7, 64}) {
    std::vector<double> r(static_cast<std::size_t>(K), 0.0);
    for (auto map : {warp_map::softplus_cumsum, warp_map::softmax_cumsum}) {
      auto const v = warp_of(map, r);
      for (index_t j = 0; j <= K; ++j) CHECK(std::abs(v[static_cast<std::size_t>(j)] - double(j) / double(K)) < 1e-12);
      CHECK(v.front() == 0.0);
      CHECK(v.back() == 1.0);
    }
  }
}

TEST_CASE("warps are valid for extreme logits", "[fcdtw][warp]") {
  index_t const K = 33;
  std::vector<std::vector<double>> cases;
  for (double big : {50.0, 1e3}) {
    cases.push_back(std::vector<double>(K, big));
    cases.push_back(std::vector<double>(K, -big));
    std::vector<double> alt(K);
    for (index_t i = 0; i < K; ++i) alt[static_cast<std::size_t>(i)] = (i % 2 ? big : -big);
    cases.push_back(alt);
    std::vector<double> one(K, -big);  // all mass in one increment
    one[5] = big;
    cases.push_back(one);
  }
  auto rnd = resilin_test::random_values(K, 3, -1e3, 1e3);
  cases.push_back(rnd);
  for (auto const& r : cases)
    for (auto map : {warp_map::softplus_cumsum, warp_map::softmax_cumsum}) {
      auto const v = warp_of(map, r);
      CHECK(v.front() == 0.0);
      CHECK(v.back() == 1.0);
      for (std::size_t j = 0; j < v.size(); ++j) {
        CHECK(std::isfinite(v[j]));
        CHECK(v[j] >= 0.0);
        CHECK(v[j] <= 1.0);
        if (j) CHECK(v[j] >= v[j - 1]);
      }
      std::vector<double> dv(v.size(), 1.0), dr(r.size());
      logits_backward(map, r.data(), K, dv.data(), dr.data());
      for (double g : dr) CHECK(std::isfinite(g));
    }
  // All mass in one increment: a single jump of height 1 at increment 5.
  std::vector<double> one(K, -1e3);
  one[5] = 1e3;
  auto const v = warp_of(warp_map::softplus_cumsum, one);
  CHECK(v[5] == 0.0);
  CHECK(v[6] > 1.0 - 1e-12);  // the 1e-12 in the normaliser keeps it a hair below 1
  // float too
  std::vector<float> rf(K, 50.f), vf(K + 1);
  rf[3] = -1e3f;
  warp_from_logits(warp_map::softplus_cumsum, rf.data(), K, vf.data());
  for (std::size_t j = 1; j < vf.size(); ++j) CHECK((std::isfinite(vf[j]) && vf[j] >= vf[j - 1]));
  CHECK(vf.back() == 1.f);
}

TEST_CASE("logits_backward matches finite differences", "[fcdtw][warp]") {
  for (auto map : {warp_map::softplus_cumsum, warp_map::softmax_cumsum})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      index_t const K = 12;
      auto const r = resilin_test::random_values(K, seed, -2, 2);
      auto const c = resilin_test::random_values(K + 1, seed + 10);
      std::vector<double> dv;
      functional(warp_of(map, r), c, dv);
      std::vector<double> dr(K);
      logits_backward(map, r.data(), K, dv.data(), dr.data());
      auto const fd = resilin_test::central_differences(
          [&](std::vector<double> const& rr) {
            std::vector<double> scratch;
            return functional(warp_of(map, rr), c, scratch);
          },
          r, 1e-6);
      CHECK(resilin_test::max_rel_diff(dr, fd) < 1e-8);
    }
}

TEST_CASE("softmax map is shift invariant; softplus is not", "[fcdtw][warp]") {
  auto r = resilin_test::random_values(9, 5);
  auto const a = warp_of(warp_map::softmax_cumsum, r);
  auto const s = warp_of(warp_map::softplus_cumsum, r);
  for (auto& e : r) e += 3.0;
  auto const b = warp_of(warp_map::softmax_cumsum, r);
  auto const t = warp_of(warp_map::softplus_cumsum, r);
  CHECK(resilin_test::max_rel_diff(a, b) < 1e-14);
  CHECK(resilin_test::max_rel_diff(s, t) > 1e-3);
}

TEST_CASE("evaluate and its pullback on uniform and explicit grids", "[fcdtw][warp]") {
  index_t const K = 6;
  auto v = warp_of(warp_map::softplus_cumsum, resilin_test::random_values(K, 9));
  std::vector<double> g{0, 0.1, 0.15, 0.4, 0.6, 0.9, 1.0};
  for (bool uniform : {true, false}) {
    for (double t : {0.0, 0.05, 0.33, 0.5, 0.77, 1.0}) {
      warp_view<double> const phi{v.data(), knot_grid<double>{uniform ? nullptr : g.data(), K + 1}};
      auto const p = evaluate(phi, t);
      // phi against a direct scan, slope against the segment's chord
      double const g0 = phi.knot(p.segment), g1 = phi.knot(p.segment + 1);
      REQUIRE(g0 <= t);
      REQUIRE(t <= g1);
      CHECK(std::abs(p.phi - (v[p.segment] + (t - g0) / (g1 - g0) * (v[p.segment + 1] - v[p.segment]))) < 1e-15);
      CHECK(std::abs(p.slope - (v[p.segment + 1] - v[p.segment]) / (g1 - g0)) < 1e-12);
      // pullback of 2 phi + 3 phi' vs finite differences on v (segment held fixed)
      std::vector<double> dv(v.size(), 0.0);
      evaluate_backward(phi, p, 2.0, 3.0, dv.data());
      auto const fd = resilin_test::central_differences(
          [&](std::vector<double> const& vv) {
            warp_view<double> const q{vv.data(), phi.grid};
            auto const e = evaluate(q, t);
            return 2 * e.phi + 3 * e.slope;
          },
          v, 1e-7);
      CHECK(resilin_test::max_rel_diff(dv, fd) < 1e-6);
    }
  }
}

TEST_CASE("logits_from_knots inverts warp_from_logits", "[fcdtw][warp]") {
  for (auto map : {warp_map::softplus_cumsum, warp_map::softmax_cumsum}) {
    auto const v = warp_of(map, resilin_test::random_values(10, 31, -3, 3));
    std::vector<double> r(10);
    logits_from_knots(map, v.data(), 10, r.data());
    CHECK(resilin_test::max_rel_diff(warp_of(map, r), v) < 1e-12);
    // identity -> zero logits
    std::vector<double> id(11), r0(10);
    identity_warp(10, id.data());
    logits_from_knots(map, id.data(), 10, r0.data());
    for (double e : r0) CHECK(std::abs(e) < 1e-14);
    // a flat increment survives as a (numerically) flat segment
    std::vector<double> flat{0, 0.3, 0.3, 1};
    std::vector<double> rf(3);
    logits_from_knots(map, flat.data(), 3, rf.data());
    auto const back = warp_of(map, rf);
    CHECK(std::abs(back[2] - back[1]) < 1e-12);
    CHECK(std::abs(back[1] - 0.3) < 1e-12);
  }
}

TEMPLATE_TEST_CASE("the fit's kept increments give warp_from_logits' and logits_backward's bits",
                   "[fcdtw][warp]", float, double) {
  // adam_fit keeps each step's increments and exp(-|r|) for the backward instead of
  // recomputing them: the same warp and gradient bits, or nothing kept where the recomputing
  // path differs (softmax, a normaliser that overflowed and was rescaled)
  using T = TestType;
  auto const check = [](warp_map map, std::vector<T> const& r, bool expect_kept) {
    auto const K = static_cast<index_t>(r.size());
    std::vector<T> v(r.size() + 1), vk(v.size()), p(r.size()), e(r.size()), dv(v.size());
    for (std::size_t j = 0; j < dv.size(); ++j) dv[j] = static_cast<T>(std::sin(1.0 + 0.7 * static_cast<double>(j)));
    warp_from_logits(map, r.data(), K, v.data());
    T const total = fcdtw::detail::warp_from_logits_kept(map, r.data(), K, vk.data(), p.data(), e.data());
    CHECK((total > T(0)) == expect_kept);
    for (std::size_t j = 0; j < v.size(); ++j) CHECK(resilin_test::bits_equal(v[j], vk[j]));
    if (total > T(0)) {
      std::vector<T> dr(r.size()), drk(r.size());
      logits_backward(map, r.data(), K, dv.data(), dr.data());
      fcdtw::detail::logits_backward_kept(r.data(), K, dv.data(), p.data(), e.data(), total, drk.data());
      for (std::size_t i = 0; i < dr.size(); ++i) CHECK(resilin_test::bits_equal(dr[i], drk[i]));
    }
  };
  for (std::uint64_t seed : {4u, 5u, 6u}) {
    auto const wide = resilin_test::random_values(37, seed, -40, 40), narrow = resilin_test::random_values(9, seed, -1, 1);
    check(warp_map::softplus_cumsum, std::vector<T>(wide.begin(), wide.end()), true);
    check(warp_map::softplus_cumsum, std::vector<T>(narrow.begin(), narrow.end()), true);
    check(warp_map::softmax_cumsum, std::vector<T>(narrow.begin(), narrow.end()), false);
  }
  check(warp_map::softplus_cumsum, {T(0), T(0), T(0)}, true);
  T const big = std::numeric_limits<T>::max() / T(2);
  check(warp_map::softplus_cumsum, {big, big, big}, false);
}

TEST_CASE("logits near the largest finite value keep the warp's shape", "[fcdtw][warp]") {
  // the softplus normaliser overflowed: equal logits of 1e308 gave the step (0, 0, 0, 1)
  for (double big : {1e300, 1e308, 1.7e308}) {
    auto const v = warp_of(warp_map::softplus_cumsum, {big, big, big});
    CHECK(v[0] == 0.0);
    CHECK(v[1] == Approx(1.0 / 3));
    CHECK(v[2] == Approx(2.0 / 3));
    CHECK(v[3] == 1.0);
  }
  auto const uneven = warp_of(warp_map::softplus_cumsum, {1e308, 0.0, 1e308});
  CHECK(uneven[1] == Approx(0.5));
  CHECK(uneven[2] == Approx(0.5));
  std::vector<float> rf{2e38f, 2e38f}, vf(3);
  warp_from_logits(warp_map::softplus_cumsum, rf.data(), 2, vf.data());
  CHECK(vf[1] == Approx(0.5f));
  // the identity of no segments is a single knot at 0, not 0 / 0
  double single = -1;
  identity_warp<double>(0, &single);
  CHECK(single == 0.0);
}

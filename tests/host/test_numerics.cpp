// Numerics (issue 2, item 5): no NaN or inf for gamma = 1e-4 with values around 1e4 at
// n = m = 4096 (value and gradient, double and float); soft <= hard;
// hard - gamma log|A| <= soft; gamma -> 0 approaches hard DTW (value, E, gradient); float and
// double agree; extreme but finite inputs and temperatures stay finite.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using resilin_test::all_finite;
using resilin_test::random_values;

namespace {

constexpr bool kSanitized = resilin_test::sanitized;

/// A smooth random walk around `centre` (values around 1e4 with a spread of `spread`).
std::vector<double> walk(std::size_t n, std::uint64_t seed, double centre, double spread) {
  auto const steps = random_values(n, seed, -1, 1);
  std::vector<double> v(n);
  double s = 0;
  for (std::size_t k = 0; k < n; ++k) {
    s = 0.98 * s + steps[k];
    v[k] = centre + spread * s / 5;
  }
  return v;
}

double l1(std::vector<double> const& a) {
  double s = 0;
  for (double v : a) s += std::abs(v);
  return s;
}


/// Soft-DTW of univariate x and y by the plain recursion in long double (log1p of the
/// min-shifted sum): the reference of the accuracy tests below.
double soft_dtw_long_double(std::vector<double> const& x, std::vector<double> const& y, double gamma) {
  std::size_t const n = x.size(), m = y.size();
  long double const inf = std::numeric_limits<long double>::infinity(), g = gamma;
  std::vector<long double> R((n + 1) * (m + 1), inf);
  R[0] = 0;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      long double const a = R[(i - 1) * (m + 1) + j - 1], b = R[(i - 1) * (m + 1) + j], c = R[i * (m + 1) + j - 1];
      long double const lo = std::min({a, b, c});
      long double const d = static_cast<long double>(x[i - 1]) - y[j - 1];
      R[i * (m + 1) + j] = d * d + lo - g * std::log1p(std::exp(-(a - lo) / g) + std::exp(-(b - lo) / g) +
                                                       std::exp(-(c - lo) / g) - 1);
    }
  return static_cast<double>(R.back());
}
}  // namespace

TEST_CASE("n = m = 4096, gamma = 1e-4, values around 1e4: finite, bounded, equal to the oracle",
          "[numerics][large]") {
  // the sanitizer build (-O0 under ASan and UBSan: 58 s at 4096) runs n = m = 1024
  r::index_t const n = kSanitized ? 1024 : 4096;
  double const gamma = 1e-4;
  // Float-representable inputs, so the float and double runs see the same series.
  auto const x = resilin_test::cast<double>(resilin_test::cast<float>(walk(static_cast<std::size_t>(n), 1, 1e4, 100)));
  auto const y = resilin_test::cast<double>(resilin_test::cast<float>(walk(static_cast<std::size_t>(n), 2, 1e4, 100)));
  auto const soft = r::measures::soft_dtw(gamma);
  std::vector<double> gx(x.size()), gy(y.size());
  double const v = r::value_and_grad(soft, r::view(x), r::view(y), r::view(gx), r::view(gy));
  double const h = r::value(r::measures::dtw(), r::view(x), r::view(y));
  REQUIRE(std::isfinite(v));
  REQUIRE(std::isfinite(h));
  CHECK(all_finite(gx));
  CHECK(all_finite(gy));
  double const log_paths = ref::log_delannoy(n - 1, n - 1);
  if (!kSanitized)  // n log(3 + 2 sqrt 2) asymptotically
    CHECK(log_paths == Approx(1.7627 * double(n)).epsilon(2e-3));
  double const slack = 1e-12 * h;  // rounding of two independent sums of ~1e4 terms
  INFO("soft = " << v << ", hard = " << h << ", gamma log|A| = " << gamma * log_paths);
  CHECK(v <= h + slack);
  CHECK(v >= h - gamma * log_paths - slack);

  // float: finite, and close to double.
  auto const xf = resilin_test::cast<float>(x), yf = resilin_test::cast<float>(y);
  std::vector<float> fx(xf.size()), fy(yf.size());
  float const vf = r::value_and_grad(r::measures::soft_dtw(1e-4f), r::view(xf), r::view(yf), r::view(fx), r::view(fy));
  REQUIRE(std::isfinite(vf));
  CHECK(all_finite(fx));
  CHECK(all_finite(fy));
  CHECK(double(vf) == Approx(v).epsilon(1e-4));
  double fl1 = 0;
  for (float g : fx) fl1 += std::abs(double(g));
  CHECK(fl1 == Approx(l1(gx)).epsilon(1e-2));

  if (kSanitized) {
    WARN("sanitizer build: the oracle and hard-gradient comparisons at n = 4096 are skipped");
    return;
  }
  // The value-only path (rolling buffer) and the stored-R path agree.
  CHECK(r::value(soft, r::view(x), r::view(y)) == Approx(v).epsilon(1e-13));
  // The straightforward full-table oracle.
  CHECK(ref::soft_dtw_value(x.data(), y.data(), n, n, 1, gamma) == Approx(v).epsilon(1e-12));
  // gamma is far below the gap between the optimal and the other paths: the soft gradient is
  // (close to) the hard one.
  std::vector<double> hx(x.size()), hy(y.size());
  CHECK(r::value_and_grad(r::measures::dtw(), r::view(x), r::view(y), r::view(hx), r::view(hy)) == h);
  INFO("max |g_soft - g_hard| = " << resilin_test::max_abs_diff(gx, hx) << ", ||g_hard||_1 = " << l1(hx));
  CHECK(std::abs(l1(gx) - l1(hx)) <= 1e-3 * l1(hx));
  CHECK(std::abs(l1(gy) - l1(hy)) <= 1e-3 * l1(hy));
}

TEST_CASE("hard - gamma log(number of paths) <= soft <= hard, with the bound nearly attained", "[numerics]") {
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{1024, 1024}, {700, 300}, {1, 50}, {33, 1}}) {
    double const log_paths = ref::log_path_count(n, m);
    CHECK(log_paths == Approx(ref::log_delannoy(n - 1, m - 1)).epsilon(1e-10).margin(1e-12));
    auto const x = random_values(static_cast<std::size_t>(n), 21 + static_cast<std::uint64_t>(n));
    auto const y = random_values(static_cast<std::size_t>(m), 22 + static_cast<std::uint64_t>(m));
    double const h = r::value(r::measures::dtw(), r::view(x), r::view(y));
    for (double gamma : {10.0, 1.0, 0.01}) {
      INFO("n = " << n << ", m = " << m << ", gamma = " << gamma);
      double const s = r::value(r::measures::soft_dtw(gamma), r::view(x), r::view(y));
      CHECK(s <= h + 1e-12 * std::max(1.0, h));
      CHECK(s >= h - gamma * log_paths - 1e-12 * std::max(1.0, h));
    }
    // Constant series: every path costs 0 and soft-DTW is exactly -gamma log |A| (the lower bound).
    std::vector<double> cx(static_cast<std::size_t>(n), 3.0), cy(static_cast<std::size_t>(m), 3.0);
    CHECK(r::value(r::measures::soft_dtw(1.0), r::view(cx), r::view(cy)) == Approx(-log_paths).epsilon(1e-11));
  }
}

TEST_CASE("gamma -> 0 approaches hard DTW: value, E and gradient", "[numerics]") {
  r::index_t const n = 60, m = 45, d = 2;
  auto const x = random_values(static_cast<std::size_t>(n * d), 31);
  auto const y = random_values(static_cast<std::size_t>(m * d), 32);
  auto const hard = r::measures::dtw();
  std::vector<double> hE(static_cast<std::size_t>(n * m)), hx(x.size()), hy(y.size());
  double const h = r::alignment_matrix(hard, r::view(x, d), r::view(y, d), r::matrix_view<double>{hE.data(), n, m});
  r::value_and_grad(hard, r::view(x, d), r::view(y, d), r::view(hx, d), r::view(hy, d));
  double const log_paths = ref::log_delannoy(n - 1, m - 1);
  double previous_gap = std::numeric_limits<double>::infinity();
  for (double gamma : {10.0, 1.0, 0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8}) {
    INFO("gamma = " << gamma);
    auto const soft = r::measures::soft_dtw(gamma);
    double const s = r::value(soft, r::view(x, d), r::view(y, d));
    double const gap = h - s;
    CHECK(gap >= -1e-13);
    CHECK(gap <= gamma * log_paths + 1e-13);
    CHECK(gap <= previous_gap + 1e-13);  // monotone in gamma
    previous_gap = gap;
  }
  // At gamma = 1e-6 (far below the gap to the second-best path) E is the hard indicator and
  // the gradient is the hard gradient, up to exponentially small terms.
  std::vector<double> E(hE.size()), gx(x.size()), gy(y.size());
  auto const soft = r::measures::soft_dtw(1e-6);
  r::alignment_matrix(soft, r::view(x, d), r::view(y, d), r::matrix_view<double>{E.data(), n, m});
  r::value_and_grad(soft, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
  CHECK(resilin_test::max_abs_diff(E, hE) <= 1e-9);
  CHECK(resilin_test::max_abs_diff(gx, hx) <= 1e-8);
  CHECK(resilin_test::max_abs_diff(gy, hy) <= 1e-8);
}

TEST_CASE("float and double agree", "[numerics]") {
  r::index_t const n = 200, m = 150, d = 3;
  auto const xd = random_values(static_cast<std::size_t>(n * d), 41);
  auto const yd = random_values(static_cast<std::size_t>(m * d), 42);
  auto const x = resilin_test::cast<float>(xd), y = resilin_test::cast<float>(yd);
  auto const xr = resilin_test::cast<double>(x), yr = resilin_test::cast<double>(y);  // same inputs
  for (double gamma : {10.0, 1.0, 0.1, 0.01}) {
    for (auto const band : {r::band_spec::none(), r::band_spec::radius(10)}) {
      INFO("gamma = " << gamma << ", radius " << band.radius_for(n, m));
      std::vector<float> gx(x.size()), gy(y.size());
      std::vector<double> gxd(x.size()), gyd(y.size());
      float const vf = r::value_and_grad(r::measures::soft_dtw(float(gamma), band), r::view(x, d), r::view(y, d),
                                         r::view(gx, d), r::view(gy, d));
      double const vd = r::value_and_grad(r::measures::soft_dtw(gamma, band), r::view(xr, d), r::view(yr, d),
                                          r::view(gxd, d), r::view(gyd, d));
      CHECK(double(vf) == Approx(vd).epsilon(1e-5).margin(1e-4));
      CHECK(double(r::value(r::measures::soft_dtw(float(gamma), band), r::view(x, d), r::view(y, d))) ==
            Approx(vd).epsilon(1e-5).margin(1e-4));
      double gmax = 0;
      for (double g : gxd) gmax = std::max(gmax, std::abs(g));
      CHECK(resilin_test::max_abs_diff(gx, gxd) <= 2e-4 * std::max(1.0, gmax));
      CHECK(resilin_test::max_abs_diff(gy, gyd) <= 2e-4 * std::max(1.0, gmax));
    }
  }
}

TEMPLATE_TEST_CASE("extreme but finite inputs and temperatures stay finite", "[numerics]", float, double) {
  using T = TestType;
  r::index_t const n = 64, m = 48;
  // Values up to 1e15 (float) / 1e100 (double): costs stay representable along any path.
  double const big = std::is_same_v<T, float> ? 1e15 : 1e100;
  auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n), 51, -big, big));
  auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(m), 52, -big, big));
  auto const small = resilin_test::cast<T>(random_values(static_cast<std::size_t>(m), 53, -1, 1));
  std::vector<T> const zx(static_cast<std::size_t>(n), T(0)), zy(static_cast<std::size_t>(m), T(0));
  T const tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-300);
  T const huge = std::is_same_v<T, float> ? T(1e30) : T(1e250);
  for (T gamma : {tiny, T(1e-4), T(1), huge}) {
    auto const meas = r::measures::soft_dtw(gamma);
    for (auto const* pair : {&x, &small, &zy}) {
      auto const& a = (pair == &zy) ? zx : x;
      auto const& b = *pair;
      INFO("gamma = " << gamma << ", case " << (pair == &x ? "x vs x-ish" : pair == &small ? "big vs small" : "zeros vs zeros"));
      std::vector<T> ga(a.size()), gb(b.size());
      T const v = r::value_and_grad(meas, r::view(a), r::view(b), r::view(ga), r::view(gb));
      CHECK(std::isfinite(v));
      CHECK(all_finite(ga));
      CHECK(all_finite(gb));
    }
  }
}

TEMPLATE_TEST_CASE("a subnormal gamma is refused by name", "[numerics][subnormal]", float, double) {
  // Issue 2 item 5: no NaN or inf for any gamma > 0. A subnormal gamma has no finite inverse,
  // and the capped one made cost gaps below about 4e-306 (double) weigh as if gamma were
  // 5.6e-309: wrong gradients, the same bits for gamma = 1e-315 and 1e-320. Refused instead.
  using T = TestType;
  T const tiny = std::numeric_limits<T>::denorm_min() * T(4);
  auto const soft = resilin_test::message_of<r::invalid_argument>([&] { (void)r::measures::soft_dtw(tiny); });
  CHECK_THAT(soft, RESILIN_CONTAINS("gamma must be > 0, finite and at least the smallest normal number"));
  auto const msm = resilin_test::message_of<r::invalid_argument>([&] { (void)r::measures::soft_msm(tiny); });
  CHECK_THAT(msm, RESILIN_CONTAINS("gamma"));
  // the smallest normal gamma works, also where candidates tie (no 0 * inf = NaN)
  auto const meas = r::measures::soft_dtw(std::numeric_limits<T>::min());
  std::vector<T> const x(5, T(0)), y(4, T(0)), a{T(1), T(2), T(3)}, b{T(1), T(2.5), T(3)};
  for (auto [p, q] : {std::pair{&x, &y}, std::pair{&a, &b}}) {
    std::vector<T> gp(p->size()), gq(q->size());
    T const v = r::value_and_grad(meas, r::view(*p), r::view(*q), r::view(gp), r::view(gq));
    INFO("n = " << p->size() << ", m = " << q->size() << ", value " << v);
    CHECK(std::isfinite(v));
    CHECK(all_finite(gp));
    CHECK(all_finite(gq));
    T const h = r::value(r::measures::dtw(), r::view(*p), r::view(*q));
    CHECK(double(v) == Approx(double(h)).epsilon(0).margin(1e-6));
  }
}

TEMPLATE_TEST_CASE("differences beyond the largest finite value: exact values, no NaN gradients",
                   "[numerics]", float, double) {
  // x = y = (0, B, -B): the diagonal path costs 0, every other at least about (2B)^2, so S = 0
  // for DTW and ~0 for the soft measures. Soft-MSM's transition took 0 * inf = NaN (a = -inf,
  // b = 0), which the outer soft-min dropped: S = -log 3, E(0, 0) = 1/3; the vectorised
  // backwards multiplied zero adjoints by infinite partials: NaN gradients for DTW, soft-DTW, its
  // divergence and soft-MSM.
  using T = TestType;
  T const B = std::numeric_limits<T>::max() / T(1.8);
  std::vector<T> const x{T(0), B, -B}, y{T(0), B, -B};
  auto check = [&](auto const& m, char const* name) {
    INFO(name);
    std::vector<T> gx(3, T(7)), gy(3, T(7));
    T const v = r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy));
    CHECK(std::abs(v) < T(1e-6));
    CHECK(std::abs(r::value(m, r::view(x), r::view(y))) < T(1e-6));
    for (T g : gx) CHECK(g == T(0));
    for (T g : gy) CHECK(g == T(0));
  };
  check(r::measures::dtw(), "dtw");
  check(r::measures::soft_dtw(T(1)), "soft-dtw");
  check(r::measures::soft_dtw_divergence(T(1)), "soft-dtw divergence");
  check(r::measures::soft_msm(T(1)), "soft-msm");
  check(r::measures::soft_msm_divergence(T(1)), "soft-msm divergence");
  auto const sm = r::measures::soft_msm(T(1));
  std::vector<T> E(9);
  r::alignment_matrix(sm, r::view(x), r::view(y), r::matrix_view<T>{E.data(), 3, 3});
  CHECK(E[0] == Approx(1.0));
  CHECK(E[8] == Approx(1.0));
  CHECK(sm.cost.transition(-B, B, -B) == Approx(1.0));  // c + softmin(4B^2, 0) / 2, softmin = 0
  // a closed gate (a b < 0) where a and b overflowed: T = c, and finite partials (2 g1 a w_a
  // was 0 * inf there)
  T const huge = std::numeric_limits<T>::max();
  CHECK(sm.cost.transition(huge / T(1.8), -huge / T(1.8), huge / T(1.2)) == Approx(1.0));
  auto const d = sm.cost.transition_grad(huge / T(1.8), -huge / T(1.8), huge / T(1.2));
  CHECK(std::isfinite(d.v));
  CHECK(std::isfinite(d.p));
  CHECK(std::isfinite(d.o));
}

TEST_CASE("a pair of one row or column has the exact sum of its costs at any gamma", "[numerics]") {
  // One path: the soft-min of one finite candidate is that candidate, so S is the sum of the
  // path's costs. The exponential domain carries a few ulp of gamma per cell instead: a 1 x 1
  // float pair at gamma = 1e6 gave 0.178814 for 0.192100, and values() the same.
  std::vector<float> const x{0.5f}, y{0.0617f};
  float const exact = (0.5f - 0.0617f) * (0.5f - 0.0617f);
  auto const m = r::measures::soft_dtw(1e6f);
  CHECK(r::value(m, r::view(x), r::view(y)) == exact);
  std::vector<float> out(1), gx(1), gy(1);
  r::values(r::host, m, r::make_batch(x, 1, 1, 1), r::make_batch(y, 1, 1, 1), std::span<float>(out));
  CHECK(out[0] == exact);
  CHECK(r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy)) == exact);
  // ten rows, one column, in double: 1.05 exactly summed, not 1.0500000003871384
  std::vector<double> xs(10), ys{0.0};
  double sum = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = 0.1 * static_cast<double>(i + 1) / 2;
    sum += xs[i] * xs[i];
  }
  double const v = r::value(r::measures::soft_dtw(1e6), r::view(xs), r::view(ys));
  CHECK(std::abs(v - sum) <= 4e-16 * sum);
}

TEST_CASE("soft-DTW of a series against a slightly perturbed copy keeps its relative accuracy",
          "[numerics]") {
  // One cheap path among far dearer ones: S is tiny against gamma (n + m), where the exponential
  // domain's error (a few ulp of gamma per cell) swamps it: float S of 8e-7 came out 0 or 100 %
  // off in value, value_and_grad and the lock-step batches. Against the same float data in
  // double (whose exponential domain is accurate here).
  constexpr r::index_t n = 200, B = 64;
  std::vector<float> x(n), y(n);
  for (r::index_t i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = i % 2 ? 7.0f : 0.0f;
    y[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(i)] + (i % 3 ? 1e-4f : -5e-5f);
  }
  std::vector<double> const xd(x.begin(), x.end()), yd(y.begin(), y.end());
  double const exact = r::value(r::measures::soft_dtw(1.0), r::view(xd), r::view(yd));
  REQUIRE(exact > 0);
  REQUIRE(exact < 1e-5);
  auto const m = r::measures::soft_dtw(1.0f);
  CHECK(std::abs(r::value(m, r::view(x), r::view(y)) - exact) <= 1e-4 * exact);
  std::vector<float> gx(n), gy(n);
  CHECK(std::abs(r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy)) - exact) <= 1e-4 * exact);
  std::vector<float> X, Y, out(B);
  for (r::index_t b = 0; b < B; ++b) {
    X.insert(X.end(), x.begin(), x.end());
    Y.insert(Y.end(), y.begin(), y.end());
  }
  r::values(r::host, m, r::make_batch(X, B, n, 1), r::make_batch(Y, B, n, 1), std::span<float>(out));
  for (float const v : out) CHECK(std::abs(v - exact) <= 1e-4 * exact);
  // the divergence, D(x, y) > 0 for x != y (it came out 0)
  CHECK(r::value(r::measures::soft_dtw_divergence(1.0f), r::view(x), r::view(y)) > 0.0f);
}

TEST_CASE("double soft-DTW values keep about 1e-12 of relative accuracy near the exponential domain's limit",
          "[numerics]") {
  // The exponential domain's error is a few ulp of gamma per cell whatever S; with float's rerun
  // threshold (|S| < 4096 eps gamma (n + m)) a double S just above it came out 1.1e-5 off (a
  // reviewer's case: alternating +-1 against a perturbed copy, gamma = 0.05). Against a long
  // double log-domain recursion, at several multiples of that old threshold.
  constexpr int n = 10;
  double const gamma = 0.05;
  double const old_threshold = 4096 * std::numeric_limits<double>::epsilon() * gamma * 2 * n;
  for (double factor : {1.05, 1.3, 2.0, 8.0, 1e3, 1e6}) {
    std::vector<double> x(n), y(n), w(n);
    double sw = 0;
    for (int i = 0; i < n; ++i) {
      w[static_cast<std::size_t>(i)] = ((i * 7) % 5 - 2) * 0.5 + 0.1;
      sw += w[static_cast<std::size_t>(i)] * w[static_cast<std::size_t>(i)];
    }
    double const p = std::sqrt(factor * old_threshold / sw);
    for (int i = 0; i < n; ++i) {
      x[static_cast<std::size_t>(i)] = i % 2 ? -1.0 : 1.0;
      y[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(i)] + p * w[static_cast<std::size_t>(i)];
    }
    double const want = soft_dtw_long_double(x, y, gamma);
    INFO("S / old threshold " << factor << ", S " << want);
    auto const m = r::measures::soft_dtw(gamma);
    CHECK(std::abs(r::value(m, r::view(x), r::view(y)) - want) <= 1e-12 * std::abs(want));
    std::vector<double> gx(n), gy(n);
    CHECK(std::abs(r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy)) - want) <=
          1e-12 * std::abs(want));
  }
}

TEST_CASE("a soft-min whose other candidates are below 1's rounding keeps them (log1p)", "[numerics]") {
  // log(1 + e_mid + e_hi) dropped sums below eps: an error of gamma eps per cell, all of a
  // small S (a reviewer's case: float S(x, x) = -4.5e-8 at gamma = 0.01 came out 1.1e-3 off,
  // 1.1e-5 at 0.02). Against a long double recursion.
  std::vector<float> const x{0.0f, 0.37f, 1.5f, 1.87f, 3.0f};
  for (double gamma : {0.01, 0.02, 0.05}) {
    std::vector<double> const xd(x.begin(), x.end());
    double const want = soft_dtw_long_double(xd, xd, gamma);
    INFO("gamma " << gamma << ", S(x, x) " << want);
    float const got = r::value(r::measures::soft_dtw(static_cast<float>(gamma)), r::view(x), r::view(x));
    CHECK(std::abs(got - want) <= 1e-5 * std::abs(want));
    double const got_d = r::value(r::measures::soft_dtw(gamma), r::view(xd), r::view(xd));
    CHECK(std::abs(got_d - want) <= 1e-12 * std::abs(want));
  }
}

TEST_CASE("a band that holds one path: value() has value_and_grad()'s bits", "[numerics][band]") {
  // value() takes such pairs through the min (the soft-min of one finite candidate is that
  // candidate), value_and_grad() through the soft-min: the same bits, for every soft measure,
  // one row, one column, the diagonal of a radius-0 or slope-1 band
  std::uint64_t seed = 40;
  for (auto [n, k] : {std::pair<r::index_t, r::index_t>{1, 1}, {1, 300}, {300, 1}, {77, 77}})
    for (auto const band : {r::band_spec{}, r::band_spec::radius(0), r::band_spec::itakura(1.0)}) {
      if (n != k && band.type() != r::band_spec{}.type()) continue;
      auto const x = random_values(static_cast<std::size_t>(n), ++seed);
      auto const y = random_values(static_cast<std::size_t>(k), ++seed);
      INFO("n " << n << " m " << k << " band kind " << int(band.type()));
      auto const same = [&](auto const& m) {
        std::vector<double> gx(static_cast<std::size_t>(n)), gy(static_cast<std::size_t>(k));
        double const v = r::value(m, r::view(x), r::view(y));
        CHECK(v == r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy)));
      };
      for (double gamma : {1e-3, 1.0, 1e3}) {
        same(r::measures::soft_dtw(gamma, band));
        same(r::measures::soft_msm(gamma, 1.0, band));
        same(r::measures::soft_cdtw(gamma, band));
      }
    }
}

TEST_CASE("a band that holds one path: the sum of its costs and their partials, symmetric", "[numerics][band]") {
  // such bands take a scalar walk along the path (single_path.hpp; the strips spent a vector of
  // lanes per real cell: soft-DTW value+grad at n = 10^5, m = 1 took 533 ns per cell). Against
  // the path's costs summed in order, central differences, and the pair swapped bit for bit;
  // one row, one column, one cell, the diagonal of a radius-0 or slope-1 band, 1 and 2 channels
  std::uint64_t seed = 90;
  struct shape {
    r::index_t n, m;
    r::band_spec band;
  };
  for (auto const& [n, k, band] : {shape{1, 1, {}}, shape{1, 40, {}}, shape{40, 1, {}}, shape{1, 40, r::band_spec::radius(3)},
                                  shape{33, 33, r::band_spec::radius(0)}, shape{33, 33, r::band_spec::itakura(1.0)}})
    for (r::index_t d : {1, 2}) {
      REQUIRE(band.geometry(n, k).single_path());
      auto const x = random_values(static_cast<std::size_t>(n * d), ++seed);
      auto const y = random_values(static_cast<std::size_t>(k * d), ++seed);
      r::series_view<double const> const xv{x.data(), n, d}, yv{y.data(), k, d};
      INFO("n " << n << " m " << k << " d " << d << " band kind " << int(band.type()));
      auto const check = [&](auto const& m, char const* name) {
        INFO(name);
        // the path: (0, 0), then down the column, along the row or the diagonal
        double sum = 0;
        for (r::index_t s = 0; s < std::max(n, k); ++s) {
          r::index_t const i = std::min(s, n - 1), j = std::min(s, k - 1);
          auto const c = m.cost.step(xv, yv, i, j);
          sum += s == 0 || (i > 0 && j > 0) ? c.diag : j == 0 ? c.up : c.left;
        }
        double const v = r::value(m, xv, yv);
        CHECK(v == Approx(sum).epsilon(1e-13).margin(1e-13));
        std::vector<double> gx(x.size()), gy(y.size()), hx(x.size()), hy(y.size());
        CHECK(r::value_and_grad(m, xv, yv, r::view(gx, d), r::view(gy, d)) == v);
        // swapped: the same value, the gradients swapped
        CHECK(r::value(m, yv, xv) == v);
        CHECK(r::value_and_grad(m, yv, xv, r::view(hy, d), r::view(hx, d)) == v);
        CHECK(hx == gx);
        CHECK(hy == gy);
        auto const fd = [&](std::vector<double> const& a, std::vector<double> const& b, bool first, std::size_t e) {
          auto p = first ? a : b, q = p;
          double const h = 1e-6;
          p[e] += h;
          q[e] -= h;
          r::index_t const na = first ? n : k, nb = first ? k : n;
          r::series_view<double const> const pv{p.data(), na, d}, qv{q.data(), na, d}, ov{(first ? b : a).data(), nb, d};
          return first ? (r::value(m, pv, ov) - r::value(m, qv, ov)) / (2 * h)
                       : (r::value(m, ov, pv) - r::value(m, ov, qv)) / (2 * h);
        };
        // (soft-MSM's gate is stiff where a value nearly repeats: the differences then carry
        // about 4e-6 of their own error, the strips' gradients the same as the walk's)
        for (std::size_t e = 0; e < x.size(); ++e) CHECK(gx[e] == Approx(fd(x, y, true, e)).epsilon(2e-5).margin(1e-7));
        for (std::size_t e = 0; e < y.size(); ++e) CHECK(gy[e] == Approx(fd(x, y, false, e)).epsilon(2e-5).margin(1e-7));
      };
      check(r::measures::soft_dtw(0.5, band), "soft-DTW");
      check(r::measures::dtw(band), "DTW");
      check(r::measures::soft_msm(0.5, 0.7, band), "soft-MSM");
      check(r::measures::soft_cdtw(0.5, band), "soft-CDTW");
      if (d == 1) check(r::measures::msm(0.7, band), "MSM");
    }
}

TEST_CASE("a band that holds one path has the exact sum of its costs at any gamma", "[numerics][band]") {
  // A radius-0 band (or an Itakura slope of 1) with n = m leaves the diagonal alone. The
  // exponential domain gave the 50 x 50 float pair below 6e-5 off at gamma = 1; the log domain
  // adds the diagonal's costs one by one.
  constexpr r::index_t n = 50;
  std::vector<float> x(n), y(n);
  for (r::index_t i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = 0.01f * std::sin(0.3f * static_cast<float>(i));
    y[static_cast<std::size_t>(i)] = 0.01f * std::cos(0.2f * static_cast<float>(i));
  }
  double exact = 0;
  for (std::size_t i = 0; i < x.size(); ++i) exact += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
  for (auto const band : {r::band_spec::radius(0), r::band_spec::itakura(1.0)}) {
    INFO("band kind " << int(band.type()));
    auto const m = r::measures::soft_dtw(1.0f, band);
    CHECK(std::abs(r::value(m, r::view(x), r::view(y)) - exact) <= 1e-6 * exact);
    std::vector<float> gx(n), gy(n);
    CHECK(std::abs(r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy)) - exact) <= 1e-6 * exact);
    for (std::size_t i = 0; i < x.size(); ++i) {  // the diagonal's gradient, 2 (x_i - y_i)
      CHECK(gx[i] == Approx(2.0 * (double(x[i]) - y[i])).epsilon(1e-5));
      CHECK(gy[i] == -gx[i]);
    }
    // a batch large enough for the lock-step groups takes the same path
    constexpr r::index_t B = 128;
    std::vector<float> X, Y;
    for (r::index_t b = 0; b < B; ++b) {
      X.insert(X.end(), x.begin(), x.end());
      Y.insert(Y.end(), y.begin(), y.end());
    }
    std::vector<float> out(B);
    r::values(r::host, m, r::make_batch(X, B, n, 1), r::make_batch(Y, B, n, 1), std::span<float>(out));
    for (float const v : out) CHECK(std::abs(v - exact) <= 1e-6 * exact);
  }
}

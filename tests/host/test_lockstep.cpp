// Lock-step groups (backend/host/lockstep.hpp): DTW and soft-DTW values of many equal-shape
// pairs, one pair per SIMD lane. values() and pairwise() must give every pair exactly the bits of the
// single-pair value() (the strip traversal), whichever traversal the batch planner picks, for
// both orientations, bands, channels, point distances, float and double, small gamma, pairs
// outside the exponential domain and mixed-shape batches; and the planner must actually group.
// values_and_grads() of soft-DTW groups (lockstep_training.hpp) likewise against the single-pair
// value_and_grad(): values and gradients, seeds, bands, distances, fallbacks, Y = X.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <thread>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace hd = resilin::host_detail;
using resilin_test::bitwise_equal;
using resilin_test::random_values;

namespace {

/// count series of (length, channels) values in [-1, 1), one equal-length batch.
template <class T>
std::vector<T> series_set(r::index_t count, r::index_t length, r::index_t d, std::uint64_t seed) {
  return resilin_test::cast<T>(random_values(static_cast<std::size_t>(count * length * d), seed));
}

template <class T, class Measure>
std::vector<T> singles(Measure const& m, std::vector<T> const& xs, std::vector<T> const& ys,
                       r::index_t count, r::index_t n, r::index_t k, r::index_t d) {
  std::vector<T> out(static_cast<std::size_t>(count));
  for (r::index_t b = 0; b < count; ++b)
    out[static_cast<std::size_t>(b)] =
        r::value(m, r::series_view<T const>{xs.data() + b * n * d, n, d},
                 r::series_view<T const>{ys.data() + b * k * d, k, d});
  return out;
}

template <class T, class Measure>
void check_paired(Measure const& m, r::index_t n, r::index_t k, r::index_t d) {
  INFO("n " << n << " m " << k << " d " << d);
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  // two groups and a few pairs on their own (fewer than half a group: none with idle lanes)
  r::index_t const alone = std::min<r::index_t>(5, G / 2 - 1), B = 2 * G + alone;
  auto const xs = series_set<T>(B, n, d, 100 + static_cast<std::uint64_t>(n));
  auto const ys = series_set<T>(B, k, d, 200 + static_cast<std::uint64_t>(k));
  auto const X = r::make_batch(std::span<T const>(xs), B, n, d);
  auto const Y = r::make_batch(std::span<T const>(ys), B, k, d);
  hd::lockstep_plan const plan =
      hd::plan_lockstep<T>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; });
  // pairs of one row or column (a band of one path) take the single-pair walk, alone: its
  // scalar costs may round differently from the lanes' (contraction), and value() is the walk
  bool const groups = std::min(n, k) > 1;
  CHECK(plan.grouped.size() == static_cast<std::size_t>(groups ? 2 * G : 0));
  CHECK(plan.rest.size() == static_cast<std::size_t>(groups ? alone : B));
  // fewer groups than workers that run at once: none formed (the pairs spread over the threads
  // instead); threads beyond the cores share them and do not count (20000 threads for 300
  // series of 16 took every pair out of the groups: 1.22 s instead of 0.05 s)
  unsigned const cores = std::thread::hardware_concurrency();
  for (int threads : {3, 100000}) {
    INFO("threads " << threads << ", cores " << cores);
    int const busy = cores > 0 ? std::min(threads, static_cast<int>(cores)) : threads;
    bool const grouped = groups && busy <= 2;
    auto const spread = hd::plan_lockstep<T>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; }, threads);
    CHECK(spread.grouped.size() == static_cast<std::size_t>(grouped ? 2 * G : 0));
    CHECK(spread.rest.size() == static_cast<std::size_t>(grouped ? alone : B));
  }
  auto const expected = singles(m, xs, ys, B, n, k, d);
  for (int threads : {1, 0}) {
    std::vector<T> out(static_cast<std::size_t>(B), T(-7));
    r::values(r::host.with_threads(threads), m, X, Y, std::span<T>(out));
    CHECK(bitwise_equal(out, expected));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("lock-step values equal the single-pair values bit for bit", "[lockstep]",
                   float, double) {
  using T = TestType;
  struct shape { r::index_t n, m, d; };
  for (shape const s : {shape{20, 20, 1}, shape{17, 29, 2}, shape{29, 17, 3}, shape{1, 5, 1},
                        shape{5, 1, 2}, shape{1, 1, 1}, shape{64, 64, 2}}) {
    check_paired<T>(r::measures::soft_dtw<T>(T(1)), s.n, s.m, s.d);
    check_paired<T>(r::measures::soft_dtw<T>(T(0.1), r::band_spec::radius(2)), s.n, s.m, s.d);
    check_paired<T>(r::measures::soft_dtw<T, r::half_squared_euclidean>(T(1), r::band_spec::window(0.1)),
                    s.n, s.m, s.d);
    check_paired<T>(r::measures::soft_dtw<T, r::l1_distance>(T(0.01)), s.n, s.m, s.d);
    check_paired<T>(r::measures::dtw(), s.n, s.m, s.d);
    check_paired<T>(r::measures::dtw<r::l1_distance>(r::band_spec::radius(1)), s.n, s.m, s.d);
  }
}

TEMPLATE_TEST_CASE("lock-step groups in mixed batches and pairwise", "[lockstep]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  auto const m = r::measures::soft_dtw<T>(T(0.5));
  r::index_t const d = 2, L = 24;
  SECTION("ragged: one shape fills a group, the others run alone; huge values leave the "
          "exponential domain") {
    r::index_t const B = G + 9;
    std::vector<r::index_t> lx(static_cast<std::size_t>(B), L), ly(static_cast<std::size_t>(B), L - 3);
    for (r::index_t b = G; b < B; ++b) lx[static_cast<std::size_t>(b)] = 5 + b % 7;
    auto xs = series_set<T>(B, L, d, 1);
    auto const ys = series_set<T>(B, L, d, 2);
    xs[static_cast<std::size_t>(3 * L * d)] = T(1e17);  // pair 3: outside the exponential domain
    auto const X = r::make_batch(std::span<T const>(xs), B, L, d, std::span<r::index_t const>(lx));
    auto const Y = r::make_batch(std::span<T const>(ys), B, L, d, std::span<r::index_t const>(ly));
    auto const plan = hd::plan_lockstep<T>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; });
    // only G - 1 pairs of the full shape stay in the domain: a ragged group with the next shape
    CHECK(plan.grouped.size() == static_cast<std::size_t>(G));
    CHECK(std::find(plan.grouped.begin(), plan.grouped.end(), 3) == plan.grouped.end());
    xs[static_cast<std::size_t>(3 * L * d)] = T(0.5);
    auto const plan2 = hd::plan_lockstep<T>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; });
    CHECK(plan2.grouped.size() == static_cast<std::size_t>(G));
    for (T const x3 : {T(0.5), T(1e17)}) {
      xs[static_cast<std::size_t>(3 * L * d)] = x3;
      std::vector<T> out(static_cast<std::size_t>(B));
      r::values(r::host, m, X, Y, std::span<T>(out));
      for (r::index_t b = 0; b < B; ++b)
        CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(m, X[b], Y[b])));
    }
  }
  SECTION("pairwise, plain and divergence") {
    r::index_t const A = 9, B = 7;  // 63 pairs: three groups (double) or one (float) and a rest
    auto const xs = series_set<T>(A, L, d, 3), ys = series_set<T>(B, L + 1, d, 4);
    auto const X = r::make_batch(std::span<T const>(xs), A, L, d);
    auto const Y = r::make_batch(std::span<T const>(ys), B, L + 1, d);
    auto independent = m;  // a sum of per-channel values: no groups
    independent.independent_channels = true;
    CHECK(hd::plan_lockstep<T>(independent, A * B, [&](r::index_t k) { return std::pair{X[k / B], Y[k % B]}; })
              .grouped.empty());
    CHECK(r::value(independent, X[0], Y[0]) != r::value(m, X[0], Y[0]));
    for (auto const& meas : {m, r::measures::soft_dtw_divergence<T>(T(0.5)), independent}) {
      std::vector<T> out(static_cast<std::size_t>(A * B));
      r::pairwise(r::host, meas, X, Y, r::matrix_view<T>{out.data(), A, B});
      for (r::index_t a = 0; a < A; ++a)
        for (r::index_t b = 0; b < B; ++b)
          CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(a * B + b)],
                                         r::value(meas, X[a], Y[b])));
    }
    auto dtw_independent = r::measures::dtw(r::band_spec::window(0.2));
    dtw_independent.independent_channels = true;
    for (auto const& dtw : {r::measures::dtw(r::band_spec::window(0.2)), dtw_independent}) {
      std::vector<T> out(static_cast<std::size_t>(A * B));
      r::pairwise(r::host.with_threads(2), dtw, X, Y, r::matrix_view<T>{out.data(), A, B});
      for (r::index_t a = 0; a < A; ++a)
        for (r::index_t b = 0; b < B; ++b)
          CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(a * B + b)], r::value(dtw, X[a], Y[b])));
      // values() of the pairs (a, a mod B) too
      std::vector<T> v(static_cast<std::size_t>(A));
      std::vector<T> ys2;
      for (r::index_t a = 0; a < A; ++a)
        for (r::index_t k = 0; k < (L + 1) * d; ++k) ys2.push_back(ys[static_cast<std::size_t>((a % B) * (L + 1) * d + k)]);
      auto const Y2 = r::make_batch(std::span<T const>(ys2), A, L + 1, d);
      r::values(r::host, dtw, X, Y2, std::span<T>(v));
      for (r::index_t a = 0; a < A; ++a)
        CHECK(resilin_test::bits_equal(v[static_cast<std::size_t>(a)], r::value(dtw, X[a], Y[a % B])));
    }
  }
}

namespace {

/// values_and_grads of a batch, ragged or not (seeds: the upstream), against value_and_grad of
/// each pair alone: the values and every gradient sample bit for bit, padding zeros included,
/// for 1 and all threads.
template <class T, class Measure>
void check_ragged_training(Measure const& m, r::batch_view<T const> X, r::batch_view<T const> Y,
                           std::vector<T> const& given) {
  r::index_t const B = X.batch, d = X.channels;
  auto const gx_size = static_cast<std::size_t>(B * X.max_length * d), gy_size = static_cast<std::size_t>(B * Y.max_length * d);
  // the given seeds, then the least negative one everywhere (adjoints and gradient terms that
  // round to -0)
  for (std::vector<T> const& seeds : {given, std::vector<T>(static_cast<std::size_t>(B), -std::numeric_limits<T>::denorm_min())}) {
    std::vector<T> out1(static_cast<std::size_t>(B)), gx1(gx_size, T(0)), gy1(gy_size, T(0));
    hd::workspace<T> ws;
    for (r::index_t b = 0; b < B; ++b) {
      r::series_view<T> const gx{gx1.data() + b * X.max_length * d, X.length(b), d};
      r::series_view<T> const gy{gy1.data() + b * Y.max_length * d, Y.length(b), d};
      out1[static_cast<std::size_t>(b)] = hd::value_and_grad(m, X[b], Y[b], gx, gy, seeds[static_cast<std::size_t>(b)], ws);
    }
    for (int threads : {1, 0}) {
      INFO("training, threads " << threads);
      std::vector<T> out(static_cast<std::size_t>(B), T(-7)), gx(gx_size, T(-5)), gy(gy_size, T(-5));
      r::batch_view<T> const GX{gx.data(), B, X.max_length, d, X.lengths}, GY{gy.data(), B, Y.max_length, d, Y.lengths};
      r::values_and_grads(r::host.with_threads(threads), m, X, Y, std::span<T>(out), GX, GY, std::span<T const>(seeds));
      CHECK(bitwise_equal(out, out1));
      CHECK(bitwise_equal(gx, gx1));
      CHECK(bitwise_equal(gy, gy1));
    }
  }
}

/// check_ragged_training of B pairs of n x k (d channels) after the training plan's check: groups
/// (expect_groups) or none.
template <class T, class Measure>
void check_training(Measure const& m, std::vector<T> const& xs, std::vector<T> const& ys, r::index_t B,
                    r::index_t n, r::index_t k, r::index_t d, std::vector<T> const& upstream,
                    bool expect_groups) {
  auto const X = r::make_batch(std::span<T const>(xs), B, n, d);
  auto const Y = r::make_batch(std::span<T const>(ys), B, k, d);
  auto const plan = hd::plan_lockstep<T>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; }, 1, true);
  CHECK(plan.grouped.empty() != expect_groups);
  check_ragged_training(m, X, Y, upstream);
}

/// Upstream seeds in [-2, 2), one of them 0 (the sixth, or the last of fewer).
template <class T>
std::vector<T> upstream_seeds(r::index_t B) {
  std::vector<T> s = resilin_test::cast<T>(random_values(static_cast<std::size_t>(B), 77, -2.0, 2.0));
  s[static_cast<std::size_t>(std::min<r::index_t>(5, B - 1))] = T(0);
  return s;
}

/// values_and_grads(X, X) with GY = GX (both gradients into one buffer) of G + 1 series of n x d
/// against value_and_grad of each series against itself, bit for bit.
template <class T, class Measure>
void check_self_training(Measure const& m, r::index_t n, r::index_t d) {
  r::index_t const B = hd::lockstep_pairs<T> + 1;
  auto const xs = series_set<T>(B, n, d, 9);
  auto const X = r::make_batch(std::span<T const>(xs), B, n, d);
  std::vector<T> out(static_cast<std::size_t>(B)), g(xs.size(), T(9)), out1(out.size()), g1(xs.size(), T(0));
  r::values_and_grads(r::host, m, X, X, std::span<T>(out), r::make_batch(std::span<T>(g), B, n, d),
                      r::make_batch(std::span<T>(g), B, n, d));
  for (r::index_t b = 0; b < B; ++b) {
    r::series_view<T> const gb{g1.data() + b * n * d, n, d};
    out1[static_cast<std::size_t>(b)] = r::value_and_grad(m, X[b], X[b], gb, gb);
  }
  CHECK(bitwise_equal(out, out1));
  CHECK(bitwise_equal(g, g1));
}

}  // namespace

TEMPLATE_TEST_CASE("lock-step training equals the single-pair values and gradients bit for bit",
                   "[lockstep][grad]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  r::index_t const B = G + 5;  // one group and five pairs on their own
  struct shape { r::index_t n, m, d; };
  for (shape const s : {shape{8, 8, 1}, shape{17, 29, 2}, shape{29, 17, 3}, shape{2, 6, 1}, shape{40, 40, 1}}) {
    INFO("n " << s.n << " m " << s.m << " d " << s.d);
    auto const xs = series_set<T>(B, s.n, s.d, 300 + static_cast<std::uint64_t>(s.n));
    auto const ys = series_set<T>(B, s.m, s.d, 400 + static_cast<std::uint64_t>(s.m));
    auto const seeds = upstream_seeds<T>(B);
    check_training<T>(r::measures::soft_dtw<T>(T(1)), xs, ys, B, s.n, s.m, s.d, seeds, true);
    check_training<T>(r::measures::soft_dtw<T>(T(0.05), r::band_spec::radius(2)), xs, ys, B, s.n, s.m, s.d, seeds, true);
    check_training<T>(r::measures::soft_dtw<T, r::l1_distance>(T(0.3), r::band_spec::itakura(2.0)), xs, ys, B,
                      s.n, s.m, s.d, seeds, true);
    check_training<T>(r::measures::soft_dtw<T, r::half_squared_euclidean>(T(2)), xs, ys, B, s.n, s.m, s.d,
                      seeds, true);
    // no groups: divergences and hard DTW train one pair at a time
    check_training<T>(r::measures::soft_dtw_divergence<T>(T(1)), xs, ys, B, s.n, s.m, s.d, seeds, false);
    check_training<T>(r::measures::dtw(), xs, ys, B, s.n, s.m, s.d, seeds, false);
  }
}

TEMPLATE_TEST_CASE("lock-step training: pairs the group leaves to the strips, tables too large, "
                   "a series against itself", "[lockstep][grad]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  auto const m = r::measures::soft_dtw<T>(T(1));
  SECTION("a series against a slightly perturbed copy: its exponential-domain value is inaccurate") {
    // one cheap path among far dearer ones: S is tiny against gamma (n + m), and the pair trains
    // in the log domain on its own (test_numerics); here every third pair of a group
    constexpr r::index_t n = 40, B = G + 3;
    auto xs = series_set<T>(B, n, 1, 5);
    auto ys = series_set<T>(B, n, 1, 6);
    for (r::index_t b = 0; b < B; b += 3)
      for (r::index_t i = 0; i < n; ++i) {
        T const x = i % 2 ? T(7) : T(0);
        xs[static_cast<std::size_t>(b * n + i)] = x;
        ys[static_cast<std::size_t>(b * n + i)] = x + (i % 3 ? T(1e-4) : T(-5e-5));
      }
    T const tiny = r::value(m, r::series_view<T const>{xs.data(), n, 1}, r::series_view<T const>{ys.data(), n, 1});
    CHECK(!hd::exp_domain_accurate(tiny, T(1), n, n));
    check_training<T>(m, xs, ys, B, n, n, 1, upstream_seeds<T>(B), true);
  }
  SECTION("tables beyond lockstep_training_table_bytes train one pair at a time") {
    r::index_t n = 8;
    while (hd::lockstep_table_bytes<T>(n, n) <= hd::lockstep_training_table_bytes) n *= 2;
    r::index_t const B = G;
    auto const xs = series_set<T>(B, n, 1, 7), ys = series_set<T>(B, n, 1, 8);
    check_training<T>(m, xs, ys, B, n, n, 1, upstream_seeds<T>(B), false);
  }
  SECTION("Y = X and GY = GX: both gradients into one buffer, as value_and_grad adds them") {
    check_self_training<T>(m, 12, 2);
  }
}

TEMPLATE_TEST_CASE("soft-MSM lock-step values equal the single-pair values bit for bit", "[lockstep][soft-msm]",
                   float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  auto const joint = [](T gamma, T c, r::band_spec band = {}) {
    auto m = r::measures::soft_msm<T>(gamma, c, band);
    m.independent_channels = false;  // several channels: one recursion on summed costs, grouped
    return m;
  };
  struct shape { r::index_t n, m, d; };
  for (shape const s : {shape{20, 20, 1}, shape{17, 29, 2}, shape{29, 17, 3}, shape{2, 5, 1}, shape{40, 40, 1}}) {
    check_paired<T>(joint(T(1), T(1)), s.n, s.m, s.d);
    check_paired<T>(joint(T(0.05), T(0.5), r::band_spec::radius(2)), s.n, s.m, s.d);
    check_paired<T>(joint(T(30), T(2), r::band_spec::itakura(2.0)), s.n, s.m, s.d);
    // the published multivariate form sums per-channel recursions: grouped where d = 1 only
    if (s.d == 1) check_paired<T>(r::measures::soft_msm<T>(T(0.3), T(1)), s.n, s.m, s.d);
  }
  SECTION("lanes whose transitions need the min-shifted form (tiny gamma), repeated values, and "
          "pairs the strips evaluate guarded (samples near the largest finite value) run alone") {
    r::index_t const n = 24, B = G + 4;
    auto xs = series_set<T>(B, n, 1, 11), ys = series_set<T>(B, n, 1, 12);
    for (std::size_t k = 0; k < xs.size(); k += 3) xs[k] = ys[k] = T(0.25);  // ties: u = 0 gates
    auto const X = r::make_batch(std::span<T const>(xs), B, n, 1);
    auto const Y = r::make_batch(std::span<T const>(ys), B, n, 1);
    for (auto const& m : {joint(T(1e-3), T(1)), joint(T(1), T(1))}) {
      std::vector<T> out(static_cast<std::size_t>(B));
      r::values(r::host, m, X, Y, std::span<T>(out));
      for (r::index_t b = 0; b < B; ++b) CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(m, X[b], Y[b])));
    }
    xs[0] = std::numeric_limits<T>::max() / T(4);  // pair 0: guarded, alone
    auto const m = joint(T(1), T(1));
    auto const plan = hd::plan_lockstep<T>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; });
    CHECK(plan.grouped.size() == static_cast<std::size_t>(G));
    CHECK(std::find(plan.grouped.begin(), plan.grouped.end(), 0) == plan.grouped.end());
    std::vector<T> out(static_cast<std::size_t>(B));
    r::values(r::host, m, X, Y, std::span<T>(out));
    for (r::index_t b = 0; b < B; ++b) CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(m, X[b], Y[b])));
  }
}

TEMPLATE_TEST_CASE("soft-MSM lock-step training equals the single-pair values and gradients bit for bit",
                   "[lockstep][soft-msm][grad]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  r::index_t const B = G + 3;
  auto const joint = [](T gamma, T c, r::band_spec band = {}) {
    auto m = r::measures::soft_msm<T>(gamma, c, band);
    m.independent_channels = false;
    return m;
  };
  struct shape { r::index_t n, m, d; };
  // rows past a strip's first vectors (the y sums' swapped order) need n beyond the lanes
  for (shape const s : {shape{8, 8, 1}, shape{17, 29, 2}, shape{29, 17, 3}, shape{2, 6, 1}, shape{70, 40, 1}}) {
    INFO("n " << s.n << " m " << s.m << " d " << s.d);
    auto xs = series_set<T>(B, s.n, s.d, 500 + static_cast<std::uint64_t>(s.n));
    auto ys = series_set<T>(B, s.m, s.d, 600 + static_cast<std::uint64_t>(s.m));
    for (std::size_t k = 0; k < xs.size(); k += 5) xs[k] = T(0.5);  // repeated values: stiff gates
    for (std::size_t k = 0; k < ys.size(); k += 7) ys[k] = T(0.5);
    auto const seeds = upstream_seeds<T>(B);
    check_training<T>(joint(T(1), T(1)), xs, ys, B, s.n, s.m, s.d, seeds, true);
    check_training<T>(joint(T(0.02), T(0.5), r::band_spec::radius(3)), xs, ys, B, s.n, s.m, s.d, seeds, true);
    check_training<T>(joint(T(20), T(2), r::band_spec::itakura(2.5)), xs, ys, B, s.n, s.m, s.d, seeds, true);
    if (s.d == 1) check_training<T>(r::measures::soft_msm<T>(T(0.5), T(1)), xs, ys, B, s.n, s.m, s.d, seeds, true);
    check_training<T>(r::measures::soft_msm_divergence<T>(T(1), T(1)), xs, ys, B, s.n, s.m, s.d, seeds, false);
  }
}

namespace {

/// values() and values_and_grads() of an independent-channels measure on a ragged batch against
/// value() and value_and_grad() of each pair alone (which sum one-channel recursions), bit for
/// bit, for 1 and all threads; returns how many of its pairs run as channel units.
template <class T, class Measure>
r::index_t check_channel_units(Measure const& m, std::vector<r::index_t> const& lx, std::vector<r::index_t> const& ly,
                               r::index_t d, bool training) {
  auto const B = static_cast<r::index_t>(lx.size());
  r::index_t const L = *std::max_element(lx.begin(), lx.end()), K = *std::max_element(ly.begin(), ly.end());
  auto xs = series_set<T>(B, L, d, 900 + static_cast<std::uint64_t>(d));
  auto ys = series_set<T>(B, K, d, 901 + static_cast<std::uint64_t>(d));
  for (std::size_t k = 0; k < xs.size(); k += 5) xs[k] = T(0.5);  // repeated values: stiff soft-MSM gates
  for (std::size_t k = 0; k < ys.size(); k += 7) ys[k] = T(0.5);
  auto const X = r::make_batch(std::span<T const>(xs), B, L, d, std::span<r::index_t const>(lx));
  auto const Y = r::make_batch(std::span<T const>(ys), B, K, d, std::span<r::index_t const>(ly));
  auto const seeds = upstream_seeds<T>(B);
  std::vector<T> out1(static_cast<std::size_t>(B)), gx1(xs.size(), T(0)), gy1(ys.size(), T(0));
  auto const GX1 = r::make_batch(std::span<T>(gx1), B, L, d, std::span<r::index_t const>(lx));
  auto const GY1 = r::make_batch(std::span<T>(gy1), B, K, d, std::span<r::index_t const>(ly));
  hd::workspace<T> ws;
  for (r::index_t b = 0; b < B; ++b) {  // one pair, its seed as values_and_grads passes it
    auto const k = static_cast<std::size_t>(b);
    out1[k] = training ? hd::value_and_grad(m, X[b], Y[b], GX1[b], GY1[b], seeds[k], ws) : r::value(m, X[b], Y[b]);
  }
  for (int threads : {1, 0}) {
    INFO("threads " << threads);
    std::vector<T> out(static_cast<std::size_t>(B), T(-7)), gx(xs.size(), T(-5)), gy(ys.size(), T(-5));
    if (training) {
      r::values_and_grads(r::host.with_threads(threads), m, X, Y, std::span<T>(out),
                          r::make_batch(std::span<T>(gx), B, L, d, std::span<r::index_t const>(lx)),
                          r::make_batch(std::span<T>(gy), B, K, d, std::span<r::index_t const>(ly)),
                          std::span<T const>(seeds));
      CHECK(bitwise_equal(gx, gx1));
      CHECK(bitwise_equal(gy, gy1));
    } else {
      r::values(r::host.with_threads(threads), m, X, Y, std::span<T>(out));
    }
    CHECK(bitwise_equal(out, out1));
  }
  r::index_t split = 0;
  for (r::index_t b = 0; b < B; ++b) split += hd::runs_channel_units<T>(m, X[b], Y[b], training) ? 1 : 0;
  return split;
}

}  // namespace

TEMPLATE_TEST_CASE("independent channels run as one-channel units in lock-step groups, bit for bit",
                   "[lockstep][channels]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  // G pairs of 3 channels (3 G units of one shape: three groups), G of another shape, a few
  // ragged ones, and one too long for a training group (whole when training)
  std::vector<r::index_t> lx, ly;
  for (r::index_t b = 0; b < G; ++b) lx.push_back(20), ly.push_back(17);
  for (r::index_t b = 0; b < G; ++b) lx.push_back(9), ly.push_back(31);
  for (r::index_t b = 0; b < 5; ++b) lx.push_back(3 + 4 * b), ly.push_back(11 - b);
  lx.push_back(400), ly.push_back(390);
  auto const B = static_cast<r::index_t>(lx.size());
  r::index_t const d = 3;
  auto soft_dtw = r::measures::soft_dtw<T>(T(0.5));
  soft_dtw.independent_channels = true;
  auto dtw = r::measures::dtw(r::band_spec::window(0.3));
  dtw.independent_channels = true;
  auto soft_dtw_div = r::measures::soft_dtw_divergence<T>(T(1));
  soft_dtw_div.independent_channels = true;
  SECTION("values") {
    CHECK(check_channel_units<T>(r::measures::soft_msm<T>(T(1), T(1)), lx, ly, d, false) == B);
    CHECK(check_channel_units<T>(r::measures::soft_msm<T>(T(0.05), T(0.5), r::band_spec::radius(2)), lx, ly, d,
                                 false) == B);
    CHECK(check_channel_units<T>(soft_dtw, lx, ly, d, false) == B);
    CHECK(check_channel_units<T>(dtw, lx, ly, d, false) == B);
    // divergences and one-channel series run as they are
    CHECK(check_channel_units<T>(r::measures::soft_msm_divergence<T>(T(1), T(1)), lx, ly, d, false) == 0);
    CHECK(check_channel_units<T>(soft_dtw_div, lx, ly, d, false) == 0);
    CHECK(check_channel_units<T>(r::measures::soft_msm<T>(T(1), T(1)), lx, ly, 1, false) == 0);
  }
  SECTION("values and gradients") {
    CHECK(check_channel_units<T>(r::measures::soft_msm<T>(T(1), T(1)), lx, ly, d, true) == B - 1);
    CHECK(check_channel_units<T>(r::measures::soft_msm<T>(T(20), T(2), r::band_spec::itakura(2.5)), lx, ly, 2,
                                 true) == B - 1);
    CHECK(check_channel_units<T>(soft_dtw, lx, ly, d, true) == B - 1);
    CHECK(check_channel_units<T>(dtw, lx, ly, d, true) == 0);  // hard DTW trains one pair at a time
    CHECK(check_channel_units<T>(soft_dtw_div, lx, ly, d, true) == 0);
  }
  SECTION("the units of equal-shape pairs form groups") {
    auto const m = r::measures::soft_msm<T>(T(1), T(1));
    auto const xs = series_set<T>(B, 400, d, 1), ys = series_set<T>(B, 390, d, 2);
    auto const X = r::make_batch(std::span<T const>(xs), B, 400, d, std::span<r::index_t const>(lx));
    auto const Y = r::make_batch(std::span<T const>(ys), B, 390, d, std::span<r::index_t const>(ly));
    for (bool training : {false, true}) {
      hd::channel_units<T> units;
      auto const pair_at = [&](r::index_t b) { return std::pair{X[b], Y[b]}; };
      auto const splits = [&](auto x, auto y) { return hd::runs_channel_units<T>(m, x, y, training); };
      CHECK(units.gather(0, B, pair_at, splits, training) == B);
      CHECK(units.units() == d * (training ? B - 1 : B));
      CHECK(units.whole().size() == (training ? 1u : 0u));
      auto const plan = hd::plan_lockstep<T>(m.single_channel(), units.units(),
                                             [&](r::index_t u) { return units.series(u); }, 1, training);
      // 3 G units of each full shape (training: and ragged groups of the rest, where they fit)
      if (training) CHECK(plan.grouped.size() >= static_cast<std::size_t>(6 * G));
      else CHECK(plan.grouped.size() == static_cast<std::size_t>(6 * G));
    }
  }
  SECTION("Y = X and GY = GX: both gradients into one buffer, the pairs as they are") {
    auto const m = r::measures::soft_msm<T>(T(1), T(1));
    check_self_training<T>(m, 12, d);
    std::vector<T> const xs = series_set<T>(1, 12, d, 9);
    r::series_view<T const> const x{xs.data(), 12, d};
    CHECK(!hd::runs_channel_units<T>(m, x, x, true));
    CHECK(hd::runs_channel_units<T>(m, x, x, false));
  }
}

TEMPLATE_TEST_CASE("ragged lock-step groups: values and training of pairs of different shapes in a full band, "
                   "bit for bit",
                   "[lockstep][ragged]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  r::index_t const B = 3 * G + 7, L = 20, d = 2;
  // lengths 12..20 for x and y: few pairs share a shape, the groups are ragged
  std::vector<r::index_t> lx(static_cast<std::size_t>(B)), ly(static_cast<std::size_t>(B));
  for (r::index_t b = 0; b < B; ++b) {
    lx[static_cast<std::size_t>(b)] = 12 + (b * 7) % 9;
    ly[static_cast<std::size_t>(b)] = 12 + (b * 5 + 3) % 9;
  }
  lx[4] = ly[4] = 16;
  auto xs = series_set<T>(B, L, d, 31), ys = series_set<T>(B, L, d, 32);
  // pair 4: a series against a perturbed copy (an inaccurate exponential-domain value, run
  // again alone); pair 9: a huge sample (outside the exponential domain, alone)
  for (r::index_t i = 0; i < L * d; ++i) {
    T const v = (i / d) % 2 ? T(7) : T(0);
    xs[static_cast<std::size_t>(4 * L * d + i)] = v;
    ys[static_cast<std::size_t>(4 * L * d + i)] = v + (i % 3 ? T(1e-4) : T(-5e-5));
  }
  xs[static_cast<std::size_t>(9 * L * d)] = T(1e17);
  auto const X = r::make_batch(std::span<T const>(xs), B, L, d, std::span<r::index_t const>(lx));
  auto const Y = r::make_batch(std::span<T const>(ys), B, L, d, std::span<r::index_t const>(ly));
  auto const pair_at = [&](r::index_t b) { return std::pair{X[b], Y[b]}; };
  CHECK(!hd::exp_domain_accurate(r::value(r::measures::soft_dtw<T>(T(0.5)), X[4], Y[4]), T(0.5), 16, 16));
  auto const seeds = upstream_seeds<T>(B);
  // groups: how many of the plan's groups at least (0: none at all, -1: any); training: of
  // the training plan (soft-DTW's: the others train equal shapes only)
  auto const check = [&](auto const& m, r::index_t groups, r::index_t training = 0) {
    auto const plan = hd::plan_lockstep<T>(m, B, pair_at);
    INFO("grouped " << plan.grouped.size());
    if (groups > 0) CHECK(plan.grouped.size() >= static_cast<std::size_t>(groups * G));
    else if (groups == 0) CHECK(plan.grouped.empty());
    auto const trained = hd::plan_lockstep<T>(m, B, pair_at, 1, true).grouped.size();
    if (training > 0) CHECK(trained >= static_cast<std::size_t>(training * G));
    else if (training == 0) CHECK(trained == 0);
    check_ragged_training(m, X, Y, seeds);
    for (int threads : {1, 0}) {
      std::vector<T> out(static_cast<std::size_t>(B), T(-7));
      r::values(r::host.with_threads(threads), m, X, Y, std::span<T>(out));
      for (r::index_t b = 0; b < B; ++b)
        CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(m, X[b], Y[b])));
    }
    // pairwise: pairs (a, b) of all shapes
    std::vector<T> all(static_cast<std::size_t>(B * B));
    r::pairwise(r::host, m, X, Y, r::matrix_view<T>{all.data(), B, B});
    for (r::index_t a = 0; a < B; ++a)
      for (r::index_t b = 0; b < B; ++b)
        CHECK(resilin_test::bits_equal(all[static_cast<std::size_t>(a * B + b)], r::value(m, X[a], Y[b])));
  };
  auto joint_msm = r::measures::soft_msm<T>(T(1), T(1));
  joint_msm.independent_channels = false;
  auto independent_dtw = r::measures::dtw();
  independent_dtw.independent_channels = true;
  check(r::measures::soft_dtw<T>(T(0.5)), 2, 2);
  check(r::measures::soft_dtw<T, r::l1_distance>(T(0.01)), 2, 2);
  check(r::measures::soft_dtw<T, r::half_squared_euclidean>(T(3)), 2, 2);
  check(r::measures::dtw(), 3);
  // independent channels: ragged groups of their units (channel_units.hpp), not of the pairs
  check(r::measures::soft_msm<T>(T(0.3), T(0.5)), 0);
  check(independent_dtw, 0);
  // bands depend on each pair's shape: equal shapes only (for values none here; training may
  // group a few equal shapes with idle lanes where lanes are few)
  check(r::measures::soft_dtw<T>(T(0.5), r::band_spec::radius(30)), 0, -1);
  // soft-MSM groups shapes within 10 % of cells: G pairs of 16 x 16 but one of 16 x 15
  r::index_t const n = 16;
  std::vector<r::index_t> ln(static_cast<std::size_t>(G), n), lm(static_cast<std::size_t>(G), n);
  lm[5] = n - 1;
  auto const xn = series_set<T>(G, n, d, 33), yn = series_set<T>(G, n, d, 34);
  auto const Xn = r::make_batch(std::span<T const>(xn), G, n, d, std::span<r::index_t const>(ln));
  auto const Yn = r::make_batch(std::span<T const>(yn), G, n, d, std::span<r::index_t const>(lm));
  for (auto const& m : {joint_msm, [] {
                          auto u = r::measures::soft_msm<T>(T(0.01), T(2));
                          u.independent_channels = false;
                          return u;
                        }()}) {
    CHECK(hd::plan_lockstep<T>(m, G, [&](r::index_t b) { return std::pair{Xn[b], Yn[b]}; }).grouped.size() ==
          static_cast<std::size_t>(G));
    // training too: one ragged soft-MSM training group
    CHECK(hd::plan_lockstep<T>(m, G, [&](r::index_t b) { return std::pair{Xn[b], Yn[b]}; }, 1, true).grouped.size() ==
          static_cast<std::size_t>(G));
    check_ragged_training(m, Xn, Yn, upstream_seeds<T>(G));
    std::vector<T> out(static_cast<std::size_t>(G));
    r::values(r::host, m, Xn, Yn, std::span<T>(out));
    for (r::index_t b = 0; b < G; ++b)
      CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(m, Xn[b], Yn[b])));
  }
  check(joint_msm, -1, -1);  // within its 10 % (training 30 %): a few groups where the ISA's G allows them
}

TEMPLATE_TEST_CASE("groups with idle lanes: fewer pairs than a group, each with its single-pair bits",
                   "[lockstep][grad]", float, double) {
  using T = TestType;
  constexpr r::index_t G = hd::lockstep_pairs<T>;
  r::index_t const d = 2;
  // the plan's groups and idle lanes (-1) for a batch
  auto const plan_of = [](auto const& m, r::batch_view<T const> X, r::batch_view<T const> Y, bool training) {
    return hd::plan_lockstep<T>(m, X.batch, [&](r::index_t b) { return std::pair{X[b], Y[b]}; }, 1, training);
  };
  auto const idle = [](hd::lockstep_plan const& p) { return std::count(p.grouped.begin(), p.grouped.end(), r::index_t(-1)); };
  SECTION("one shape: half a group and more trains (waste 1.0), less does not") {
    for (r::index_t const B : {G / 2 + 3, G / 2 - 1}) {
      INFO("B " << B);
      auto const xs = series_set<T>(B, 17, d, 11), ys = series_set<T>(B, 14, d, 12);
      auto const X = r::make_batch(std::span<T const>(xs), B, 17, d), Y = r::make_batch(std::span<T const>(ys), B, 14, d);
      bool const grouped = 2 * B >= G;
      for (auto const& m : {r::measures::soft_dtw<T>(T(0.7)), r::measures::soft_dtw<T>(T(0.2), r::band_spec::radius(2))}) {
        auto const plan = plan_of(m, X, Y, true);
        CHECK(plan.grouped.size() == static_cast<std::size_t>(grouped ? G : 0));
        CHECK(idle(plan) == (grouped ? G - B : 0));
        check_ragged_training(m, X, Y, upstream_seeds<T>(B));
      }
      auto msm = r::measures::soft_msm<T>(T(0.5), T(0.3));
      msm.independent_channels = false;  // one recursion on summed costs (else channel units)
      CHECK(plan_of(msm, X, Y, true).grouped.size() == static_cast<std::size_t>(grouped ? G : 0));
      check_ragged_training(msm, X, Y, upstream_seeds<T>(B));
      // values: DTW's waste is 1.0 too, soft-DTW's 0.3 (a group needs 77 % of its lanes)
      auto const dtw = r::measures::dtw(r::band_spec::radius(3));
      CHECK(idle(plan_of(dtw, X, Y, false)) == (grouped ? G - B : 0));
      CHECK(plan_of(r::measures::soft_dtw<T>(T(1)), X, Y, false).grouped.empty() == (1.3 * double(B) < double(G)));
      std::vector<T> out(static_cast<std::size_t>(B));
      r::values(r::host.with_threads(1), dtw, X, Y, std::span<T>(out));
      for (r::index_t b = 0; b < B; ++b) CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(b)], r::value(dtw, X[b], Y[b])));
    }
  }
  SECTION("ragged, a full band: the leftovers of a full group share one with idle lanes") {
    r::index_t const B = G + 3 * G / 4, L = 24;  // a full group, then G / 4 idle lanes
    std::vector<r::index_t> lx(static_cast<std::size_t>(B)), ly(lx.size());
    for (r::index_t b = 0; b < B; ++b) {
      lx[static_cast<std::size_t>(b)] = L - b % 2;
      ly[static_cast<std::size_t>(b)] = L - 1 - (b / 2) % 2;
    }
    auto const xs = series_set<T>(B, L, d, 13), ys = series_set<T>(B, L, d, 14);
    auto const X = r::make_batch(std::span<T const>(xs), B, L, d, std::span<r::index_t const>(lx));
    auto const Y = r::make_batch(std::span<T const>(ys), B, L, d, std::span<r::index_t const>(ly));
    for (auto const& m : {r::measures::soft_dtw<T>(T(0.7))}) {
      auto const plan = plan_of(m, X, Y, true);
      CHECK(plan.grouped.size() == static_cast<std::size_t>(2 * G));
      CHECK(idle(plan) == G / 4);
      check_ragged_training(m, X, Y, upstream_seeds<T>(B));
    }
    auto msm = r::measures::soft_msm<T>(T(0.5), T(0.3));
    msm.independent_channels = false;
    CHECK(idle(plan_of(msm, X, Y, true)) == G / 4);
    check_ragged_training(msm, X, Y, upstream_seeds<T>(B));
  }
}

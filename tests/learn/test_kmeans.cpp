// k-means under elastic measures: two well-separated CBF-like classes are recovered exactly
// (ARI = 1) with DBA and with soft-DTW barycentres, the run is deterministic for a seed and
// independent of the thread count, duplicates with k = the number of distinct series, an
// empty cluster repaired, and bad input.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include <support/catch.hpp>
#include <host/helpers.hpp>
#include "learn_helpers.hpp"
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;
using resilin_test::two_classes;

namespace {

rl::kmeans_options options(int k, std::uint64_t seed, int threads = 1) {
  rl::kmeans_options o;
  o.k = k;
  o.seed = seed;
  o.restarts = 2;
  o.max_iter = 10;
  o.barycenter.max_iter = 10;
  o.barycenter.threads = threads;
  return o;
}

double ari_with_truth(r::dataset<double> const& ds, std::vector<r::index_t> const& a) {
  auto const truth = rl::encode_labels(std::span<std::string const>(ds.labels));
  return rl::adjusted_rand_index(std::span<r::index_t const>(truth), std::span<r::index_t const>(a));
}

}  // namespace

TEST_CASE("k-means separates two well-separated classes, deterministically", "[learn][kmeans]") {
  auto const ds = two_classes(8, 48, 11);
  auto const m = r::measures::dtw();
  for (std::uint64_t seed : {0u, 1u, 2u}) {
    INFO("seed " << seed);
    auto const a = rl::kmeans(m, ds.view(), options(2, seed));
    CHECK(ari_with_truth(ds, a.assignments) == 1.0);
    REQUIRE(a.centroids.size() == 2u);
    CHECK(a.centroids[0].length == 48);
    double inertia = 0;
    std::vector<r::index_t> nearest;
    for (r::index_t i = 0; i < ds.size(); ++i) {
      double const d0 = r::value(m, ds.series(i), a.centroids[0].view());
      double const d1 = r::value(m, ds.series(i), a.centroids[1].view());
      nearest.push_back(d1 < d0 ? 1 : 0);
      inertia += std::min(d0, d1);
    }
    CHECK(nearest == a.assignments);
    CHECK(a.inertia == Approx(inertia).epsilon(1e-12));
    auto const b = rl::kmeans(m, ds.view(), options(2, seed, 2));
    CHECK(b.assignments == a.assignments);
    CHECK(b.inertia == a.inertia);
    CHECK(b.iterations == a.iterations);
    for (std::size_t c = 0; c < 2; ++c) CHECK(resilin_test::bitwise_equal(b.centroids[c].values, a.centroids[c].values));
  }
}

TEST_CASE("restarts keep the lowest inertia", "[learn][kmeans]") {
  // the first restart draws the same seeds as a single run, so more restarts never do worse
  auto const cbf = r::make_cbf<double>({.per_class = 5, .length = 32, .seed = 21});
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    auto opt = options(3, seed);
    opt.restarts = 1;
    auto const single = rl::kmeans(r::measures::dtw(), cbf.view(), opt);
    opt.restarts = 4;
    auto const several = rl::kmeans(r::measures::dtw(), cbf.view(), opt);
    CHECK(several.inertia <= single.inertia);
  }
}

TEST_CASE("k-means with soft-DTW barycentres", "[learn][kmeans]") {
  auto const ds = two_classes(5, 32, 4);
  auto opt = options(2, 9);
  std::vector<double> inertias;
  opt.progress = [&](std::string_view stage, int, double inertia) {
    CHECK(stage == "kmeans");
    inertias.push_back(inertia);
  };
  auto const a = rl::kmeans(r::measures::soft_dtw(1.0), ds.view(), opt);
  CHECK(ari_with_truth(ds, a.assignments) == 1.0);
  REQUIRE(!inertias.empty());
  auto const b = rl::kmeans(r::measures::soft_dtw(1.0), ds.view(), opt);
  CHECK(b.assignments == a.assignments);
  CHECK(b.inertia == a.inertia);
}

TEST_CASE("k-means with duplicates and k = the number of distinct series", "[learn][kmeans]") {
  // three distinct series, each three times: k-means++ never seeds a duplicate of a centre
  auto const base = resilin_test::random_values<double>(3 * 16, 5, -1, 1);
  r::dataset<double> ds;
  for (int rep = 0; rep < 3; ++rep)
    for (int s = 0; s < 3; ++s)
      ds.push_back(std::to_string(s), std::span<double const>(base.data() + s * 16, 16));
  for (std::uint64_t seed : {0u, 5u, 77u}) {
    auto opt = options(3, seed);
    auto const res = rl::kmeans(r::measures::dtw(), ds.view(), opt);
    CHECK(ari_with_truth(ds, res.assignments) == 1.0);
    CHECK(res.inertia == 0.0);  // DBA's mean of equal values is exact
    auto const soft = rl::kmeans(r::measures::soft_dtw_divergence(0.1), ds.view(), opt);
    CHECK(ari_with_truth(ds, soft.assignments) == 1.0);
  }
}

TEST_CASE("k-means on identical series settles at once with zero inertia", "[learn][kmeans]") {
  // the DBA mean of equal values was 1 ulp off, and the series then hopped between the updated
  // centroid and an untouched seed at distance 0 until max_iter
  r::dataset<double> ds;
  std::vector<double> const s{0, 0.5, 1, 1.5, 2, 2.5};
  for (int i = 0; i < 5; ++i) ds.push_back("a", std::span<double const>(s));
  for (int k : {2, 5}) {
    auto opt = options(k, 3);
    opt.restarts = 1;
    opt.max_iter = 5;
    auto const res = rl::kmeans(r::measures::dtw(), ds.view(), opt);
    CHECK(res.inertia == 0.0);
    CHECK(res.iterations < opt.max_iter);
    CHECK(res.converged);
  }
}

TEST_CASE("k-means reports whether its assignments settled within max_iter", "[learn][kmeans]") {
  auto const ds = two_classes(3, 32, 8);
  auto opt = options(2, 0);
  opt.initial_centres = {0, 0};  // the second cluster starts empty: the assignments must move
  auto const settled = rl::kmeans(r::measures::dtw(), ds.view(), opt);
  CHECK(settled.converged);
  CHECK(settled.iterations >= 2);  // the assignments changed, then stayed
  REQUIRE(settled.iterations < opt.max_iter);
  // cut short one iteration before the one that found them unchanged
  opt.max_iter = settled.iterations - 1;
  auto const cut = rl::kmeans(r::measures::dtw(), ds.view(), opt);
  CHECK_FALSE(cut.converged);
  CHECK(cut.iterations == opt.max_iter);
  opt.max_iter = settled.iterations;  // exactly enough
  CHECK(rl::kmeans(r::measures::dtw(), ds.view(), opt).converged);
  opt.max_iter = 0;  // the seeds' assignments, no iteration
  CHECK_FALSE(rl::kmeans(r::measures::dtw(), ds.view(), opt).converged);
}

TEST_CASE("k-means also stops where an iteration barely changes the inertia (tol)", "[learn][kmeans]") {
  auto const ds = two_classes(4, 32, 8);
  auto const m = r::measures::soft_dtw(1.0);
  auto opt = options(2, 0);
  opt.initial_centres = {0, 0};  // the second cluster starts empty: the assignments must move
  opt.max_iter = 0;
  double const start = rl::kmeans(m, ds.view(), opt).inertia;  // the seeds' assignments
  opt.max_iter = 10;
  std::vector<double> inertia{start};  // before iteration 1, then after each
  opt.progress = [&](std::string_view, int, double v) { inertia.push_back(v); };
  auto const full = rl::kmeans(m, ds.view(), opt);
  opt.progress = nullptr;
  REQUIRE(full.converged);
  REQUIRE(full.iterations >= 2);
  REQUIRE(static_cast<int>(inertia.size()) == full.iterations + 1);
  CHECK(full.inertia == inertia.back());
  // with tol = the relative change of iteration k, the run stops at the first iteration whose
  // change is at most that
  for (int k = 1; k <= full.iterations; ++k) {
    auto const change = [&](int i) { return std::abs(inertia[static_cast<std::size_t>(i)] - inertia[static_cast<std::size_t>(i - 1)]) /
                                            std::abs(inertia[static_cast<std::size_t>(i)]); };
    opt.tol = change(k);
    int first = 1;
    while (change(first) > opt.tol) ++first;
    INFO("tol " << opt.tol << ", iteration " << k);
    auto const cut = rl::kmeans(m, ds.view(), opt);
    CHECK(cut.converged);
    CHECK(cut.iterations == first);
    CHECK(cut.inertia == inertia[static_cast<std::size_t>(first)]);
  }
  opt.tol = 0;  // only unchanged assignments
  CHECK(rl::kmeans(m, ds.view(), opt).iterations == full.iterations);
  for (double bad : {-1e-9, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    opt.tol = bad;
    CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::kmeans(m, ds.view(), opt); })
              .find("tol must be finite and >= 0") != std::string::npos);
  }
}

TEST_CASE("k-means with tol = 0 goes on while assignments change at an unchanged inertia",
          "[learn][kmeans]") {
  // (a reviewer's case) iteration 1 moves series 0 from cluster 1 to cluster 0 at the same
  // inertia (3 = 3): |change| <= 0 * |inertia| held, and the run stopped as converged
  std::vector<double> const v{5, 2, 4, 4, 3, 1, 1, 5};
  std::vector<r::index_t> const lengths(4, 2);
  r::batch_view<double const> const b{v.data(), 4, 2, 1, lengths.data()};
  auto const m = r::measures::dtw<r::l1_distance>();
  rl::kmeans_options opt;
  opt.k = 3;
  opt.tol = 0;
  opt.initial_centres = {1, 0, 3};
  opt.barycenter.threads = 1;
  opt.barycenter.max_iter = 5;
  opt.max_iter = 20;
  auto const full = rl::kmeans(m, b, opt);
  REQUIRE(full.converged);
  REQUIRE(full.iterations >= 1);
  opt.max_iter = full.iterations - 1;  // the assignments before the last iteration
  CHECK(rl::kmeans(m, b, opt).assignments == full.assignments);
}

TEST_CASE("an empty cluster takes the series farthest from its centroid", "[learn][kmeans]") {
  auto const ds = two_classes(3, 32, 8);
  // both seeds are series 0: ties go to the first centroid, the second is empty at once
  auto opt = options(2, 0);
  opt.initial_centres = {0, 0};
  auto const res = rl::kmeans(r::measures::dtw(), ds.view(), opt);
  CHECK(ari_with_truth(ds, res.assignments) == 1.0);
  CHECK(res.iterations >= 2);
  // the same with duplicated series: every centre starts on the same point
  r::dataset<double> dup;
  for (int rep = 0; rep < 2; ++rep)
    for (r::index_t s = 0; s < 2; ++s) {
      auto const x = ds.series(s);
      dup.push_back(ds.labels[static_cast<std::size_t>(s)], std::span<double const>(x.data, static_cast<std::size_t>(x.size())));
    }
  opt.initial_centres = {0, 2};  // series 2 duplicates series 0
  auto const d = rl::kmeans(r::measures::dtw(), dup.view(), opt);
  CHECK(ari_with_truth(dup, d.assignments) == 1.0);
  CHECK(d.inertia < 1e-25);
}

TEST_CASE("k-means settles where the assignment undoes an empty cluster's repair", "[learn][kmeans]") {
  // two exact duplicates shorter than the mean length and one other series, k = 3: the repair
  // moved a duplicate into the empty cluster, its twin's centroid tied with it and took it back,
  // and MSM, the soft-DTW divergence and soft-DTW repeated that until max_iter (50 iterations,
  // not converged). Now it stops there, with centroids, assignments and inertia that agree.
  r::dataset<double> ds;
  std::vector<double> const a{1, 2, 3}, b{0, 9, 0, 9, 0, 9, 0};
  ds.push_back("a", std::span<double const>(a));
  ds.push_back("a", std::span<double const>(a));
  ds.push_back("b", std::span<double const>(b));
  auto const check = [&](auto const& m, char const* name) {
    INFO(name);
    rl::kmeans_options o;
    o.k = 3;
    o.restarts = 1;
    o.max_iter = 50;
    o.barycenter.max_iter = 5;
    auto const res = rl::kmeans(m, ds.view(), o);
    CHECK(res.converged);
    CHECK(res.iterations <= 3);
    CHECK(ari_with_truth(ds, res.assignments) == 1.0);
    // every series at its nearest reported centroid (ties: the first), and the inertia their sum
    double inertia = 0;
    for (r::index_t i = 0; i < ds.size(); ++i) {
      r::index_t best = -1;
      double best_v = 0;
      for (std::size_t c = 0; c < res.centroids.size(); ++c) {
        auto const& cent = res.centroids[c];
        double const v = r::value(m, ds.series(i), r::series_view<double const>{cent.values.data(), cent.length, 1});
        if (best < 0 || v < best_v) { best = static_cast<r::index_t>(c); best_v = v; }
      }
      CHECK(res.assignments[static_cast<std::size_t>(i)] == best);
      inertia += best_v;
    }
    CHECK(res.inertia == Approx(inertia).epsilon(1e-12).margin(1e-12));
  };
  check(r::measures::msm(), "msm");
  check(r::measures::soft_dtw_divergence(0.1), "soft-DTW divergence");
  check(r::measures::soft_dtw(0.1), "soft-DTW");
  check(r::measures::dtw(), "DTW");
}

TEST_CASE("every centroid has the target length, also where no barycentre replaced its seed",
          "[learn][kmeans]") {
  // three constant series of lengths 3, 5 and 4: DTW 0 between any two, so no cluster ever has
  // a series with a positive gap, and with k = 3 the seeds' clusters may stay empty
  r::dataset<double> ds;
  for (r::index_t len : {3, 5, 4}) {
    std::vector<double> const v(static_cast<std::size_t>(len), 1.0);
    ds.push_back("c", std::span<double const>(v));
  }
  for (int iters : {0, 5})
    for (r::index_t length : {0, 7}) {
      INFO("max_iter " << iters << " barycenter.length " << length);
      auto opt = options(3, 1);
      opt.max_iter = iters;
      opt.barycenter.length = length;
      auto const res = rl::kmeans(r::measures::dtw(), ds.view(), opt);
      REQUIRE(res.centroids.size() == 3);
      for (auto const& c : res.centroids) {
        CHECK(c.length == (length == 0 ? 4 : length));  // 0: the mean length
        CHECK(c.values.size() == static_cast<std::size_t>(c.length));
        for (double v : c.values) CHECK(v == 1.0);
      }
    }
}

TEST_CASE("k-means refuses bad input", "[learn][kmeans]") {
  auto const ds = two_classes(2, 16, 1);
  auto const m = r::measures::dtw();
  auto bad = [&](rl::kmeans_options const& o) { return resilin_test::message_of<r::invalid_argument>([&] { rl::kmeans(m, ds.view(), o); }); };
  auto o = options(0, 0);
  CHECK(bad(o).find("k must be >= 1, got 0") != std::string::npos);
  o = options(5, 0);
  CHECK(bad(o).find("k must be <= the number of series (4), got 5") != std::string::npos);
  o = options(2, 0);
  o.restarts = 0;
  CHECK(bad(o).find("restarts") != std::string::npos);
  o = options(2, 0);
  o.initial_centres = {0, 9};
  CHECK(bad(o).find("initial_centres[1]") != std::string::npos);
  o = options(2, 0);
  o.initial_centres = {0};
  CHECK(bad(o).find("initial_centres has 1") != std::string::npos);
  r::dataset<double> const empty;
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::kmeans(m, empty.view(), options(1, 0)); })
            .find("empty") != std::string::npos);
  auto soft = r::measures::soft_dtw(1.0);
  soft.smooth.gamma = -1;
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::kmeans(soft, ds.view(), options(2, 0)); })
            .find("gamma must be > 0") != std::string::npos);
  // a parameter finite in double but not in the series' type: refused before any work
  r::dataset<float> floats;
  floats.labels = ds.labels;
  floats.values.assign(ds.values.begin(), ds.values.end());
  floats.lengths = ds.lengths;
  floats.max_length = ds.max_length;
  floats.channels = ds.channels;
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::kmeans(r::measures::msm(1e39), floats.view(), options(2, 0)); })
            .find("msm c must be finite in the value type") != std::string::npos);
  // the operations' own checks know the value type (before, only the first inner call did)
  rl::measure_ops<decltype(r::measures::msm(1e39))> const ops{r::measures::msm(1e39)};
  CHECK_NOTHROW(ops.validate());
  CHECK_THROWS_WITH(ops.validate<float>(), Catch::Contains("msm c must be finite in the value type"));
  r::fcdtw::fit_options fo;
  fo.lr = 1e39;  // finite in double, inf in float
  CHECK_NOTHROW(rl::fcdtw_ops{fo}.validate());
  CHECK_THROWS_WITH(rl::fcdtw_ops{fo}.validate<float>(), Catch::Contains("lr must be finite and > 0 in the value type"));
}

TEST_CASE("k-means under FastCDTW separates two classes, independent of the thread count",
          "[learn][kmeans][fcdtw]") {
  auto const ds = two_classes(6, 40, 17);
  r::fcdtw::fit_options fo;
  fo.steps = 20;
  auto o = options(2, 3);
  o.barycenter.max_iter = 3;
  auto const a = rl::fcdtw_kmeans(fo, ds.view(), o);
  CHECK(ari_with_truth(ds, a.assignments) == 1.0);
  REQUIRE(a.centroids.size() == 2);
  CHECK(a.centroids[0].length == 40);
  CHECK(a.inertia >= 0);
  // the inertia is the sum of each series' FastCDTW distance to its centroid
  {
    std::vector<double> cv;
    for (auto const& c : a.centroids) cv.insert(cv.end(), c.values.begin(), c.values.end());
    auto const centres = r::make_batch(std::span<double const>(cv), 2, 40, 1);
    std::vector<double> d(static_cast<std::size_t>(ds.size() * 2));
    rl::fcdtw_ops{fo}.pairwise(ds.view(), centres, r::matrix_view<double>{d.data(), ds.size(), 2}, 1);
    double sum = 0;
    for (r::index_t i = 0; i < ds.size(); ++i)
      sum += d[static_cast<std::size_t>(i * 2 + a.assignments[static_cast<std::size_t>(i)])];
    CHECK(sum == Approx(a.inertia).epsilon(1e-12));
  }
  auto o2 = o;
  o2.barycenter.threads = 2;
  auto const b = rl::fcdtw_kmeans(fo, ds.view(), o2);
  CHECK(b.assignments == a.assignments);
  CHECK(b.inertia == a.inertia);
  for (std::size_t c = 0; c < 2; ++c) CHECK(b.centroids[c].values == a.centroids[c].values);
  // the same operations through kmeans_with
  auto const w = rl::kmeans_with(rl::fcdtw_ops{fo}, ds.view(), o);
  CHECK(w.inertia == a.inertia);
  // bad fit options are refused like everywhere else in FastCDTW
  r::fcdtw::fit_options bad = fo;
  bad.lr = -1;
  CHECK_THROWS_AS(rl::fcdtw_kmeans(bad, ds.view(), o), r::invalid_argument);
}

TEST_CASE("each k-means update starts from its centroid or init's start, the lower (warm_start)",
          "[learn][kmeans][start]") {
  // with no barycentre iterations an update returns its start: with warm starts the seed series
  // or the members' Euclidean mean, whichever has the lower loss on the members; without, the mean
  auto const ds = two_classes(4, 32, 8);
  auto const m = r::measures::soft_dtw(1.0);
  auto opt = options(2, 0);
  opt.barycenter.max_iter = 0;
  int seeds_kept = 0;
  for (std::vector<r::index_t> seeds : {std::vector<r::index_t>{1, 6}, {0, 7}, {2, 5}, {3, 4}})
    for (bool warm : {true, false}) {
      INFO("seeds " << seeds[0] << ", " << seeds[1] << ", warm_start " << warm);
      opt.initial_centres = seeds;
      opt.warm_start = warm;
      opt.max_iter = 1;
      auto const res = rl::kmeans(m, ds.view(), opt);
      opt.max_iter = 0;
      auto const before = rl::kmeans(m, ds.view(), opt).assignments;  // the seeds' assignments
      for (std::size_t c = 0; c < 2; ++c) {
        std::vector<r::index_t> members;
        for (r::index_t i = 0; i < ds.size(); ++i)
          if (before[static_cast<std::size_t>(i)] == static_cast<r::index_t>(c)) members.push_back(i);
        auto const batch = rl::detail::gather(ds.view(), std::span<r::index_t const>(members));
        rl::barycenter_options at;
        at.max_iter = 0;
        auto const mean = rl::barycenter(m, batch.view(), {}, at);
        auto const seed = ds.series(seeds[c]);
        at.start.assign(seed.data, seed.data + seed.size());
        auto const from_seed = rl::barycenter(m, batch.view(), {}, at);
        bool const seed_lower = !(mean.loss < from_seed.loss);
        auto const& expect = warm && seed_lower ? from_seed.values : mean.values;
        CHECK(resilin_test::bitwise_equal(res.centroids[c].values, expect));
        if (warm && seed_lower) ++seeds_kept;
      }
    }
  CHECK(seeds_kept > 0);  // so that warm and cold starts differ here
  opt.barycenter.start.assign(32, 0.0);
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::kmeans(r::measures::dtw(), ds.view(), opt); })
            .find("barycenter.start must be empty") != std::string::npos);
}

TEMPLATE_TEST_CASE("with warm starts the k-means inertia never rises", "[learn][kmeans][start]", double, float) {
  using T = TestType;
  auto const cbf = r::make_cbf<T>({.per_class = 6, .length = 40, .seed = 5});
  int rises_cold = 0;
  auto const run = [&](auto const& m, std::uint64_t seed, bool warm) {
    rl::kmeans_options opt;
    opt.k = 3;
    opt.seed = seed;
    opt.restarts = 1;
    opt.max_iter = 0;
    opt.warm_start = warm;
    opt.barycenter.max_iter = 8;
    opt.barycenter.threads = 1;
    std::vector<double> inertia{rl::kmeans(m, cbf.view(), opt).inertia};  // the seeds' assignments
    opt.max_iter = 12;
    opt.progress = [&](std::string_view, int, double v) { inertia.push_back(v); };
    (void)rl::kmeans(m, cbf.view(), opt);
    int rises = 0;
    for (std::size_t i = 1; i < inertia.size(); ++i)
      if (inertia[i] > inertia[i - 1] + 1e-5 * std::abs(inertia[i - 1])) ++rises;
    return rises;
  };
  auto const check = [&](auto const& m, char const* name) {
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      INFO(name << ", seed " << seed);
      CHECK(run(m, seed, true) == 0);
      rises_cold += run(m, seed, false);
    }
  };
  check(r::measures::dtw(), "dtw");
  check(r::measures::msm(T(1)), "msm");
  check(r::measures::soft_dtw(T(1)), "soft-dtw");
  check(r::measures::soft_dtw_divergence(T(1)), "soft-dtw divergence");
  check(r::measures::soft_msm(T(1), T(1)), "soft-msm");
  CHECK(rises_cold > 0);  // the same runs starting each update afresh do rise (5 in double)
}

TEST_CASE("on_update names each centroid update: restart, iteration, cluster, members", "[learn][kmeans]") {
  auto const cbf = r::make_cbf<double>({.per_class = 6, .length = 32, .seed = 5});
  auto opt = options(3, 4);
  opt.restarts = 3;
  std::vector<rl::kmeans_update> updates;
  std::vector<std::array<int, 2>> rounds;  // (restart, iteration) of each progress("kmeans")
  int restart = 1, last = 0;
  opt.progress = [&](std::string_view, int it, double) {
    if (it <= last) ++restart;  // the library counts iterations per restart
    last = it;
    rounds.push_back({restart, it});
  };
  opt.on_update = [&](rl::kmeans_update const& u) { updates.push_back(u); };
  (void)rl::kmeans(r::measures::dtw(), cbf.view(), opt);
  REQUIRE(!updates.empty());
  // every (restart, iteration) that reported an inertia updated its non-empty clusters, in
  // order, whose members number all the series (no cluster is empty here)
  for (auto const& [rs, it] : rounds) {
    INFO("restart " << rs << " iteration " << it);
    r::index_t members = 0, previous = -1;
    for (auto const& u : updates) {
      if (u.restart != rs || u.iteration != it) continue;
      CHECK(u.restarts == 3);
      CHECK(u.clusters == 3);
      CHECK(u.cluster > previous);
      previous = u.cluster;
      CHECK(u.members >= 1);
      members += u.members;
    }
    CHECK(members == cbf.size());
  }
  // and only those: as many updates as rounds times clusters
  CHECK(updates.size() == rounds.size() * 3);
  CHECK(updates.back().restart == 3);
  // what on_update throws reaches the caller as it is
  opt.on_update = [](rl::kmeans_update const&) { throw std::bad_alloc(); };
  CHECK_THROWS_AS(rl::kmeans(r::measures::dtw(), cbf.view(), opt), std::bad_alloc);
}

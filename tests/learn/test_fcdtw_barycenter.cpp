// FastCDTW barycentres by alternating warp fits and exact centroid steps: the loss never
// increases, the centroid step is the minimiser (its gradient, by the objective's own VJP and
// by central differences of an independent per-pair sum, vanishes; nearby points are worse),
// identical inputs give that input, shifted bumps average below the Euclidean mean,
// determinism across threads, float, and typed errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>
#include <support/catch.hpp>
#include <host/helpers.hpp>
#include "learn_helpers.hpp"
#include <resilin/fcdtw/fcdtw.hpp>
#include <resilin/learn/fcdtw_barycenter.hpp>

namespace r = resilin;
namespace rf = resilin::fcdtw;
namespace rl = resilin::learn;
using resilin_test::central_differences;
using resilin_test::random_values;

namespace {

template <class T>
using batch = resilin_test::owned_batch<T>;
using resilin_test::random_batch;

/// Gaussian bumps centred at `centres`, equal length, one channel.
batch<double> bumps(std::vector<double> const& centres, r::index_t length, double width) {
  batch<double> b;
  b.max_length = length;
  for (double c : centres) {
    for (r::index_t i = 0; i < length; ++i) {
      double const t = static_cast<double>(i) / static_cast<double>(length - 1);
      b.values.push_back(std::exp(-0.5 * (t - c) * (t - c) / (width * width)));
    }
    b.lengths.push_back(length);
  }
  return b;
}

/// Random warps (knots on the uniform grid) with the segments fcdtw_centroid_step expects.
std::vector<std::vector<double>> random_warps(rf::fit_options const& fo, batch<double> const& s,
                                              std::uint64_t seed) {
  std::vector<std::vector<double>> warps;
  for (std::size_t k = 0; k < s.lengths.size(); ++k) {
    r::index_t const K = fo.segments > 0 ? fo.segments : s.lengths[k] - 1;
    auto const logits = random_values<double>(static_cast<std::size_t>(K), seed + 17 * k, -2, 2);
    std::vector<double> v(static_cast<std::size_t>(K + 1));
    rf::warp_from_logits(fo.map, logits.data(), K, v.data());
    warps.push_back(v);
  }
  return warps;
}

/// sum_k w_k F(phi_k; c, Y_k), pair by pair through the public objective (independent of the
/// library's normal equations).
double summed_objective(rf::path_norm norm, std::vector<double> const& c, r::index_t channels,
                        batch<double> const& s, std::vector<std::vector<double>> const& warps,
                        std::vector<double> const& w) {
  auto const view = s.view();
  r::index_t const n = static_cast<r::index_t>(c.size()) / channels;
  auto const ci = rf::uniform_interpolant(r::series_view<double const>{c.data(), n, channels});
  double total = 0;
  for (r::index_t k = 0; k < view.batch; ++k) {
    auto const& v = warps[static_cast<std::size_t>(k)];
    total += w[static_cast<std::size_t>(k)] *
             rf::value(ci, rf::uniform_interpolant(view[k]),
                       rf::uniform_warp<double>(v.data(), static_cast<r::index_t>(v.size()) - 1), norm);
  }
  return total;
}

/// The same sum's gradient in c through fcdtw::value_and_grad (dF/dx, x = the centroid).
std::vector<double> summed_gradient(rf::path_norm norm, std::vector<double> const& c,
                                    r::index_t channels, batch<double> const& s,
                                    std::vector<std::vector<double>> const& warps,
                                    std::vector<double> const& w) {
  auto const view = s.view();
  r::index_t const n = static_cast<r::index_t>(c.size()) / channels;
  auto const ci = rf::uniform_interpolant(r::series_view<double const>{c.data(), n, channels});
  std::vector<double> g(c.size(), 0.0);
  for (r::index_t k = 0; k < view.batch; ++k) {
    auto const& v = warps[static_cast<std::size_t>(k)];
    rf::objective_grads<double> grads;
    grads.dx = r::series_view<double>{g.data(), n, channels};
    grads.seed = w[static_cast<std::size_t>(k)];
    rf::value_and_grad(ci, rf::uniform_interpolant(view[k]),
                       rf::uniform_warp<double>(v.data(), static_cast<r::index_t>(v.size()) - 1),
                       grads, norm);
  }
  return g;
}

double max_abs(std::vector<double> const& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

/// mean_k D(C -> Y_k): C warped onto each series by a fresh fit with options fo.
double mean_distance(rf::fit_options const& fo, std::vector<double> const& c, batch<double> const& s) {
  auto const view = s.view();
  r::index_t const n = static_cast<r::index_t>(c.size());
  double total = 0;
  for (r::index_t k = 0; k < view.batch; ++k)
    total += rf::fit(r::series_view<double const>{c.data(), n, 1}, view[k], fo).distance;
  return total / static_cast<double>(view.batch);
}

}  // namespace

TEST_CASE("fcdtw centroid step is the exact minimiser with the warps fixed", "[learn][fcdtw]") {
  for (auto norm : {rf::path_norm::l2, rf::path_norm::l1}) {
    for (r::index_t segments : {r::index_t(0), r::index_t(7)}) {
      CAPTURE(static_cast<int>(norm), segments);
      rf::fit_options fo;
      fo.norm = norm;
      fo.segments = segments;
      auto const s = random_batch<double>({9, 14, 6, 11}, 2, 40);
      auto const warps = random_warps(fo, s, 5);
      std::vector<double> const weights{1.0, 0.5, 2.0, 0.25};
      std::vector<double> w(weights);
      double sum = 0;
      for (double e : w) sum += e;
      for (double& e : w) e /= sum;
      r::index_t const length = 10;
      auto const c = rl::fcdtw_centroid_step<double>(fo, length, s.view(),
                                                     std::span<std::vector<double> const>(warps),
                                                     weights, 3);
      REQUIRE(c.size() == static_cast<std::size_t>(length * 2));

      auto const f = [&](std::vector<double> const& z) {
        return summed_objective(norm, z, 2, s, warps, w);
      };
      double const scale = f(c) + 1.0;
      // The objective's own VJP and central differences both vanish at c ...
      CHECK(max_abs(summed_gradient(norm, c, 2, s, warps, w)) < 1e-10 * scale);
      CHECK(max_abs(central_differences(f, c, 1e-4)) < 1e-7 * scale);
      // ... and both are clearly non-zero at a perturbed point, where they agree.
      auto moved = c;
      auto const delta = random_values<double>(moved.size(), 99, -0.3, 0.3);
      for (std::size_t i = 0; i < moved.size(); ++i) moved[i] += delta[i];
      auto const g = summed_gradient(norm, moved, 2, s, warps, w);
      auto const fd = central_differences(f, moved, 1e-5);
      CHECK(max_abs(g) > 1e-3);
      for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(fd[i]).margin(1e-7));
      // Every nearby point is worse (a quadratic with positive definite Hessian).
      for (std::uint64_t trial = 0; trial < 5; ++trial) {
        auto p = c;
        auto const d = random_values<double>(p.size(), 200 + trial, -1e-2, 1e-2);
        for (std::size_t i = 0; i < p.size(); ++i) p[i] += d[i];
        CHECK(f(p) > f(c));
      }
    }
  }
}

TEST_CASE("fcdtw barycentre loss never increases from round to round", "[learn][fcdtw]") {
  auto const s = random_batch<double>({16, 20, 12, 18, 15}, 1, 7);
  struct budget { r::index_t steps; double lr; };
  // A moderate budget, and one whose Adam steps overshoot (the E-step must then keep the old warp).
  for (auto const [steps, lr] : {budget{40, 0.05}, budget{3, 2.0}}) {
    CAPTURE(steps, lr);
    rf::fit_options fo;
    fo.steps = steps;
    fo.lr = lr;
    rl::barycenter_options opt;
    opt.max_iter = 0;
    double const start = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt).loss;
    std::vector<double> losses;
    opt.max_iter = 8;
    opt.tolerance = 0;
    opt.progress = [&](std::string_view stage, int it, double loss) {
      CHECK(stage == "fcdtw");
      CHECK(it == static_cast<int>(losses.size()) + 1);
      losses.push_back(loss);
    };
    auto const res = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);
    // tolerance 0 stops at the first round that gains nothing (the overshooting budget may)
    REQUIRE(!losses.empty());
    CHECK(res.iterations == static_cast<int>(losses.size()));
    if (lr < 1) CHECK(losses.size() == 8);
    CHECK(res.loss == losses.back());
    CHECK(losses.front() <= start);
    for (std::size_t i = 1; i < losses.size(); ++i) CHECK(losses[i] <= losses[i - 1]);
    if (lr < 1) CHECK(losses.back() < 0.9 * start);  // it does make progress
    CHECK(res.length == 16);                          // the mean length, rounded
    CHECK(std::isfinite(res.loss));
    CHECK(res.loss >= 0);
  }
}

TEST_CASE("fcdtw barycentre stops on the relative tolerance", "[learn][fcdtw]") {
  auto const s = random_batch<double>({12, 12, 12}, 1, 3);
  rf::fit_options fo;
  fo.steps = 20;
  rl::barycenter_options opt;
  opt.max_iter = 50;
  opt.tolerance = 0.5;  // any round gaining less than half the loss stops
  auto const res = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);
  CHECK(res.iterations >= 1);
  CHECK(res.iterations < 50);
}

TEST_CASE("fcdtw barycentre of identical series is that series", "[learn][fcdtw]") {
  auto const one = random_values<double>(24, 11, -1, 1);
  batch<double> s;
  s.max_length = 12;
  s.channels = 2;
  for (int k = 0; k < 4; ++k) {
    s.values.insert(s.values.end(), one.begin(), one.end());
    s.lengths.push_back(12);
  }
  rf::fit_options fo;
  fo.steps = 30;
  for (auto init : {rl::init_method::euclidean_mean, rl::init_method::medoid}) {
    rl::barycenter_options opt;
    opt.init = init;
    opt.max_iter = 5;
    auto const res = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);
    REQUIRE(res.values.size() == one.size());
    CHECK(res.channels == 2);
    for (std::size_t i = 0; i < one.size(); ++i) CHECK(res.values[i] == Approx(one[i]).margin(1e-9));
    CHECK(res.loss < 1e-12);
  }
}

TEST_CASE("fcdtw barycentre of shifted bumps beats the Euclidean mean", "[learn][fcdtw]") {
  auto const s = bumps({0.3, 0.4, 0.5, 0.6, 0.7}, 50, 0.06);
  rf::fit_options fo;
  fo.steps = 150;
  fo.lr = 0.05;
  rl::barycenter_options opt;
  opt.max_iter = 10;
  auto const res = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);
  opt.max_iter = 0;
  auto const mean = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);  // the Euclidean mean
  double const d_bary = mean_distance(fo, res.values, s);
  double const d_mean = mean_distance(fo, mean.values, s);
  CAPTURE(d_bary, d_mean);
  CHECK(d_bary < 0.7 * d_mean);
  // The barycentre keeps a bump's height; the Euclidean mean of shifted bumps smears it out.
  double const peak_bary = *std::max_element(res.values.begin(), res.values.end());
  double const peak_mean = *std::max_element(mean.values.begin(), mean.values.end());
  CHECK(peak_bary > peak_mean + 0.1);
}

TEST_CASE("fcdtw barycentre is deterministic across threads and runs in float", "[learn][fcdtw]") {
  auto const s = random_batch<double>({10, 13, 9, 12}, 2, 21);
  rf::fit_options fo;
  fo.steps = 25;
  rl::barycenter_options opt;
  opt.max_iter = 4;
  opt.tolerance = 0;
  std::vector<double> const weights{1, 2, 3, 4};
  opt.threads = 1;
  auto const a = rl::fcdtw_barycenter<double>(fo, s.view(), weights, opt);
  opt.threads = 3;
  auto const b = rl::fcdtw_barycenter<double>(fo, s.view(), weights, opt);
  CHECK(a.values == b.values);
  CHECK(a.loss == b.loss);

  batch<float> sf{std::vector<float>(s.values.begin(), s.values.end()), s.lengths, s.max_length, 2};
  auto const c = rl::fcdtw_barycenter<float>(fo, sf.view(), {}, opt);
  CHECK(c.values.size() == a.values.size());
  CHECK(std::isfinite(c.loss));
  opt.max_iter = 0;
  CHECK(c.loss <= rl::fcdtw_barycenter<float>(fo, sf.view(), {}, opt).loss);
}

TEST_CASE("fcdtw barycentre rejects bad input", "[learn][fcdtw]") {
  auto const s = random_batch<double>({8, 9}, 1, 1);
  rf::fit_options fo;
  fo.steps = 5;
  rl::barycenter_options opt;
  auto const run = [&](r::batch_view<double const> b, std::vector<double> const& w,
                       rf::fit_options const& f, rl::barycenter_options const& o) {
    return rl::fcdtw_barycenter<double>(f, b, w, o);
  };
  r::batch_view<double const> empty{s.values.data(), 0, s.max_length, 1, s.lengths.data()};
  CHECK_THROWS_AS(run(empty, {}, fo, opt), r::invalid_argument);
  auto const short_s = random_batch<double>({1, 9}, 1, 2);
  CHECK_THROWS_WITH(run(short_s.view(), {}, fo, opt), Catch::Contains(">= 2 samples"));
  CHECK_THROWS_AS(run(short_s.view(), {}, fo, opt), r::invalid_argument);
  auto nan = s;
  nan.values[3] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(run(nan.view(), {}, fo, opt), r::invalid_argument);
  CHECK_THROWS_WITH(run(s.view(), {1.0}, fo, opt), Catch::Contains("weights has 1 entries"));
  CHECK_THROWS_AS(run(s.view(), {1.0, -1.0}, fo, opt), r::invalid_argument);
  CHECK_THROWS_AS(run(s.view(), {0.0, 0.0}, fo, opt), r::invalid_argument);
  auto bad_fo = fo;
  bad_fo.lr = 0;
  CHECK_THROWS_WITH(run(s.view(), {}, bad_fo, opt), Catch::Contains("lr must be"));
  bad_fo = fo;
  bad_fo.steps = -1;
  CHECK_THROWS_AS(run(s.view(), {}, bad_fo, opt), r::invalid_argument);
  auto bad_opt = opt;
  bad_opt.max_iter = -1;
  CHECK_THROWS_WITH(run(s.view(), {}, fo, bad_opt), Catch::Contains("max_iter"));
  bad_opt = opt;
  bad_opt.length = 1;
  CHECK_THROWS_WITH(run(s.view(), {}, fo, bad_opt), Catch::Contains("length 1"));
  bad_opt = opt;
  bad_opt.tolerance = -1;
  CHECK_THROWS_AS(run(s.view(), {}, fo, bad_opt), r::invalid_argument);

  // The centroid step: one warp per series, K + 1 monotone knots from 0 to 1.
  auto warps = random_warps(fo, s, 3);
  auto const step = [&](std::vector<std::vector<double>> const& ws, r::index_t length) {
    return rl::fcdtw_centroid_step<double>(fo, length, s.view(),
                                           std::span<std::vector<double> const>(ws));
  };
  CHECK_NOTHROW(step(warps, 6));
  CHECK_THROWS_WITH(step({warps[0]}, 6), Catch::Contains("warps has 1 entries"));
  CHECK_THROWS_AS(step(warps, 1), r::invalid_argument);
  auto short_warp = warps;
  short_warp[1].pop_back();
  CHECK_THROWS_WITH(step(short_warp, 6), Catch::Contains("knots, expected K + 1"));
  auto bad_end = warps;  // named by its index (the message said "warps[k]")
  bad_end[1].back() = 0.5;  // v_K must be 1
  CHECK_THROWS_WITH(step(bad_end, 6), Catch::Contains("warps[1]: "));
  auto backwards = warps;
  std::swap(backwards[0][2], backwards[0][3]);
  if (backwards[0][2] != backwards[0][3])
    CHECK_THROWS_WITH(step(backwards, 6), Catch::Contains("non-decreasing"));
}

TEST_CASE("fcdtw barycentre starts from opt.start", "[learn][fcdtw][start]") {
  auto const s = random_batch<double>({12, 14, 10}, 1, 3);
  auto const start = random_values<double>(8, 41, -1, 1);
  rf::fit_options fo;
  fo.steps = 20;
  rl::barycenter_options opt;
  opt.start = start;
  opt.max_iter = 0;
  auto const at = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);
  CHECK(at.length == 8);
  CHECK(resilin_test::bitwise_equal(at.values, start));
  opt.max_iter = 5;
  auto const fit = rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt);
  CHECK(fit.length == 8);
  CHECK(fit.loss <= at.loss);
  opt.length = 12;
  CHECK_THROWS_AS(rl::fcdtw_barycenter<double>(fo, s.view(), {}, opt), r::invalid_argument);
}

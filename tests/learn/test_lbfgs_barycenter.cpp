// L-BFGS barycentres of the soft measures: the gradient of the summed loss against central
// differences of an independent per-pair sum, optimality at the result (small gradient, loss
// below the initialisation and below every input used as barycentre), identical inputs,
// gamma -> 0 against DBA, float, medoid initialisation and the progress callback.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>
#include <support/catch.hpp>
#include <host/helpers.hpp>
#include "learn_helpers.hpp"
#include "stiff_float_case.hpp"
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;
using resilin_test::central_differences;
using resilin_test::random_values;

namespace {

template <class T>
using batch = resilin_test::owned_batch<T>;
using resilin_test::random_batch;

/// The first `count` series of one CBF class ("1", "2" or "3"), length `length`.
batch<double> cbf_class(std::string const& label, r::index_t count, r::index_t length,
                        std::uint64_t seed = 7) {
  auto const ds = r::make_cbf<double>({.per_class = count, .length = length, .seed = seed});
  batch<double> b;
  b.max_length = length;
  for (r::index_t s = 0; s < ds.size(); ++s) {
    if (ds.labels[static_cast<std::size_t>(s)] != label) continue;
    auto const x = ds.series(s);
    b.values.insert(b.values.end(), x.data, x.data + x.size());
    b.lengths.push_back(length);
  }
  return b;
}

/// sum_k w_k M(z, x_k) / sum w, one pair at a time through value(): independent of the batch
/// front end that the barycentre uses.
template <class Measure>
double pairwise_sum(Measure const& m, std::vector<double> const& z, r::index_t channels,
                    batch<double> const& xs, std::vector<double> const& w) {
  double total = 0, wsum = 0;
  for (std::size_t k = 0; k < xs.lengths.size(); ++k) {
    auto const x = xs.view()[static_cast<r::index_t>(k)];
    total += w[k] * r::value(m, r::series_view<double const>{z.data(), static_cast<r::index_t>(z.size()) / channels, channels}, x);
    wsum += w[k];
  }
  return total / wsum;
}

rl::barycenter_options start_only(r::index_t length = 0,
                                  rl::init_method init = rl::init_method::euclidean_mean) {
  rl::barycenter_options o;
  o.length = length;
  o.init = init;
  o.max_iter = 0;
  return o;
}

double norm(std::vector<double> const& g) {
  double s = 0;
  for (double v : g) s += v * v;
  return std::sqrt(s);
}

template <class Measure>
void check_gradient(Measure const& m, char const* name) {
  INFO(name);
  auto const xs = random_batch<double>({4, 7, 5}, 2, 11);
  std::vector<double> const w{1.0, 2.5, 0.5};
  auto const z = random_values<double>(6 * 2, 99, -2, 2);
  std::vector<double> g(z.size());
  double const loss = rl::barycenter_loss_and_grad(m, r::series_view<double const>{z.data(), 6, 2},
                                                   xs.view(), std::span<double const>(w),
                                                   std::span<double>(g), 1);
  CHECK(loss == Approx(pairwise_sum(m, z, 2, xs, w)).epsilon(1e-12));
  CHECK(rl::barycenter_loss(m, r::series_view<double const>{z.data(), 6, 2}, xs.view(),
                            std::span<double const>(w), 2) == Approx(loss).epsilon(1e-12));
  auto const fd = central_differences([&](std::vector<double> const& p) { return pairwise_sum(m, p, 2, xs, w); }, z);
  CHECK(resilin_test::max_rel_diff(g, fd) < 2e-6);
}

}  // namespace

TEST_CASE("the gradient of the summed loss matches central differences", "[learn][lbfgs]") {
  check_gradient(r::measures::soft_dtw(0.7), "soft-DTW");
  check_gradient(r::measures::soft_dtw_divergence(0.7), "soft-DTW divergence");
  check_gradient(r::measures::soft_msm(0.7, 0.5), "soft-MSM");
  check_gradient(r::measures::soft_msm_divergence(0.7, 0.5), "soft-MSM divergence");
  check_gradient(r::measures::soft_cdtw_divergence(0.7), "soft-CDTW divergence");
  check_gradient(r::measures::soft_dtw_divergence(0.7, r::band_spec::radius(3)), "banded soft-DTW divergence");
}

TEST_CASE("a divergence's loss, summed in three parts, equals its pairs' divergences", "[learn][lbfgs]") {
  // loss.hpp sums S(z, x_k), z's own term once and the series' own terms once (kept across
  // the evaluations of one workspace): against value() of the divergence pair by pair, with a
  // zero weight, in double and float, and a second evaluation at another z (the kept terms)
  auto const check = [](auto const& m, auto zero, char const* name) {
    using T = decltype(zero);
    INFO(name);
    auto const xs = random_batch<T>({9, 4, 12, 7}, 2, 5);
    std::vector<double> const w{0.5, 0.0, 2.0, 1.5};
    rl::detail::loss_workspace<T> ws;
    for (std::uint64_t seed : {3u, 4u}) {
      auto const z = random_values<T>(8 * 2, seed, -2, 2);
      r::series_view<T const> const zv{z.data(), 8, 2};
      double expected = 0;
      for (std::size_t k = 0; k < w.size(); ++k)
        expected += w[k] / 4.0 * static_cast<double>(r::value(m, zv, xs.view()[static_cast<r::index_t>(k)]));
      std::vector<double> const wn{0.125, 0.0, 0.5, 0.375};
      std::vector<double> g(z.size());
      double const tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
      CHECK(rl::detail::weighted_loss_and_grad(m, zv, xs.view(), std::span<double const>(wn), std::span<double>(g), 2,
                                               rl::barycenter_objective::value, ws) ==
            Approx(expected).epsilon(tolerance));
      CHECK(rl::detail::weighted_loss(m, zv, xs.view(), std::span<double const>(wn), 1,
                                      rl::barycenter_objective::value, ws) == Approx(expected).epsilon(tolerance));
      // the gradient against the pairs' own (value_and_grad of the divergence), summed
      std::vector<double> pairs(z.size(), 0.0);
      for (std::size_t k = 0; k < w.size(); ++k) {
        std::vector<T> gz(z.size()), gx(static_cast<std::size_t>(xs.view()[static_cast<r::index_t>(k)].size()));
        (void)r::value_and_grad(m, zv, xs.view()[static_cast<r::index_t>(k)], r::series_view<T>{gz.data(), 8, 2},
                                r::series_view<T>{gx.data(), xs.view().length(static_cast<r::index_t>(k)), 2});
        for (std::size_t i = 0; i < z.size(); ++i) pairs[i] += wn[k] * static_cast<double>(gz[i]);
      }
      CHECK(resilin_test::max_rel_diff(g, pairs) < (std::is_same_v<T, float> ? 1e-4 : 1e-11));
    }
    // the kept series terms follow the objective, the weights and the series: the workspace
    // used above gives what a fresh one gives (it kept the value objective's for the sharp one)
    auto const z = random_values<T>(8 * 2, 5, -2, 2);
    r::series_view<T const> const zv{z.data(), 8, 2};
    std::vector<double> const other{0.25, 0.25, 0.25, 0.25};
    auto const other_series = random_batch<T>({6, 9, 3, 8}, 2, 6);
    for (auto o : {rl::barycenter_objective::sharp, rl::barycenter_objective::value}) {
      rl::detail::loss_workspace<T> fresh;
      CHECK(rl::detail::weighted_loss(m, zv, xs.view(), std::span<double const>(other), 1, o, ws) ==
            rl::detail::weighted_loss(m, zv, xs.view(), std::span<double const>(other), 1, o, fresh));
      rl::detail::loss_workspace<T> fresh2;
      CHECK(rl::detail::weighted_loss(m, zv, other_series.view(), std::span<double const>(other), 1, o, ws) ==
            rl::detail::weighted_loss(m, zv, other_series.view(), std::span<double const>(other), 1, o, fresh2));
    }
  };
  check(r::measures::soft_dtw_divergence(0.5), 0.0, "soft-DTW divergence, double");
  check(r::measures::soft_dtw_divergence(0.5f), 0.0f, "soft-DTW divergence, float");
  check(r::measures::soft_msm_divergence(0.5, 0.7), 0.0, "soft-MSM divergence (independent channels), double");
  check(r::measures::soft_msm_divergence(0.5f, 0.7f), 0.0f, "soft-MSM divergence (independent channels), float");
}

TEST_CASE("the L-BFGS barycentre is a stationary point below its start and below every input",
          "[learn][lbfgs]") {
  auto const xs = cbf_class("2", 5, 40);
  // Soft-MSM's gated surrogate is only piecewise smooth at the scale of its gate, so L-BFGS
  // keeps descending slowly there instead of reaching a small gradient: checked for descent.
  auto check = [&](auto const& m, char const* name, bool smooth) {
    INFO(name);
    rl::barycenter_options opt;
    opt.max_iter = smooth ? 300 : 60;
    opt.threads = 1;
    auto const res = rl::barycenter(m, xs.view(), {}, opt);
    REQUIRE(res.length == 40);
    REQUIRE(res.values.size() == 40u);
    CHECK(res.iterations > 0);
    CHECK(res.loss == Approx(rl::barycenter_loss(m, res.view(), xs.view())).epsilon(1e-12));
    std::vector<double> z(res.values.begin(), res.values.end()), g(z.size());
    rl::barycenter_loss_and_grad(m, res.view(), xs.view(), {}, std::span<double>(g));
    auto start_opt = opt;
    start_opt.max_iter = 0;
    auto const start = rl::barycenter(m, xs.view(), {}, start_opt);
    std::vector<double> g0(g.size());
    rl::barycenter_loss_and_grad(m, start.view(), xs.view(), {}, std::span<double>(g0));
    INFO("gradient norm " << norm(g) << " at the start " << norm(g0));
    if (smooth) CHECK(norm(g) < 1e-3 * norm(g0));
    CHECK(res.loss < start.loss);
    for (r::index_t k = 0; k < xs.view().batch; ++k)
      CHECK(res.loss < rl::barycenter_loss(m, xs.view()[k], xs.view()));
  };
  check(r::measures::soft_dtw(1.0), "soft-DTW", true);
  check(r::measures::soft_dtw_divergence(1.0), "soft-DTW divergence", true);
  check(r::measures::soft_msm(1.0, 1.0), "soft-MSM", false);
  check(r::measures::soft_msm_divergence(1.0, 1.0), "soft-MSM divergence", false);
}

TEST_CASE("the divergence barycentre of two identical series is that series", "[learn][lbfgs]") {
  auto const one = random_batch<double>({9}, 2, 5);
  batch<double> two = one;
  two.values.insert(two.values.end(), one.values.begin(), one.values.end());
  two.lengths.push_back(9);
  for (auto init : {rl::init_method::euclidean_mean, rl::init_method::medoid}) {
    rl::barycenter_options opt;
    opt.init = init;
    for (auto const& res : {rl::barycenter(r::measures::soft_dtw_divergence(0.5), two.view(), {}, opt),
                            rl::barycenter(r::measures::soft_msm_divergence(0.5, 1.0), two.view(), {}, opt)}) {
      CHECK(resilin_test::max_abs_diff(res.values, one.values) < 1e-6);
      CHECK(std::abs(res.loss) < 1e-9);
    }
  }
}

TEST_CASE("soft-DTW barycentres approach DBA's DTW loss as gamma shrinks", "[learn][lbfgs]") {
  auto const xs = cbf_class("3", 6, 40);
  rl::barycenter_options opt;
  opt.max_iter = 200;
  opt.threads = 1;
  auto const dba = rl::barycenter(r::measures::dtw(), xs.view(), {}, opt);
  auto dtw_loss = [&](double gamma) {
    auto const res = rl::barycenter(r::measures::soft_dtw(gamma), xs.view(), {}, opt);
    return rl::barycenter_loss(r::measures::dtw(), res.view(), xs.view());
  };
  double const mean_loss = rl::barycenter_loss(
      r::measures::dtw(), rl::barycenter(r::measures::dtw(), xs.view(), {}, start_only()).view(), xs.view());
  double const coarse = dtw_loss(10.0), fine = dtw_loss(0.01);
  INFO("DTW loss: Euclidean mean " << mean_loss << ", DBA " << dba.loss << ", soft-DTW gamma 10 "
       << coarse << ", gamma 0.01 " << fine);
  CHECK(fine < coarse);
  CHECK(fine < 1.15 * dba.loss);
  CHECK(fine < mean_loss);
}

TEST_CASE("float barycentres agree with double", "[learn][lbfgs]") {
  auto const xs = cbf_class("1", 4, 32);
  std::vector<float> const xf(xs.values.begin(), xs.values.end());
  r::batch_view<float const> const vf{xf.data(), 4, 32, 1, xs.lengths.data()};
  auto const m = r::measures::soft_dtw(1.0);
  auto const mf = r::measures::soft_dtw(1.0f);
  auto const d = rl::barycenter(m, xs.view(), {}, {});
  auto const f = rl::barycenter(mf, vf, {}, {});
  CHECK(f.loss == Approx(d.loss).epsilon(1e-3));
  CHECK(f.loss == Approx(rl::barycenter_loss(mf, f.view(), vf)).epsilon(1e-12));
}

TEST_CASE("weights, lengths, medoid start and progress", "[learn][lbfgs]") {
  auto const xs = random_batch<double>({10, 14, 12}, 1, 3);
  auto const m = r::measures::soft_dtw(0.5);
  std::vector<double> const w{0.0, 1.0, 0.0};
  rl::barycenter_options opt;
  opt.length = 14;
  opt.init = rl::init_method::medoid;
  // weights (0, 1, 0): the medoid is x_1 (length 14, no resampling); the optimum is near it
  auto const start = rl::barycenter(m, xs.view(), std::span<double const>(w), start_only(14, rl::init_method::medoid));
  auto const x1 = xs.view()[1];
  CHECK(resilin_test::max_abs_diff(start.values, std::vector<double>(x1.data, x1.data + 14)) == 0);
  std::vector<int> iters;
  std::vector<double> losses;
  opt.progress = [&](std::string_view stage, int it, double loss) {
    CHECK(stage == "lbfgs");
    iters.push_back(it);
    losses.push_back(loss);
  };
  auto const res = rl::barycenter(m, xs.view(), std::span<double const>(w), opt);
  CHECK(res.length == 14);
  CHECK(res.loss == Approx(r::value(m, res.view(), x1)).epsilon(1e-12));
  CHECK(res.loss < start.loss);
  REQUIRE(!iters.empty());
  for (std::size_t i = 0; i < iters.size(); ++i) {
    CHECK(iters[i] == static_cast<int>(i + 1));
    if (i > 0) CHECK(losses[i] < losses[i - 1]);
  }
  CHECK(losses.back() == res.loss);
  // default length: the mean length (12), the Euclidean mean of the resampled inputs
  auto const mean = rl::barycenter(m, xs.view(), {}, start_only());
  CHECK(mean.length == 12);
  double expect0 = 0;
  for (r::index_t k = 0; k < 3; ++k) expect0 += xs.view()[k](0, 0) / 3;
  CHECK(mean.values[0] == Approx(expect0).epsilon(1e-14));
  double expect_last = 0;
  for (r::index_t k = 0; k < 3; ++k) expect_last += xs.view()[k](xs.lengths[static_cast<std::size_t>(k)] - 1, 0) / 3;
  CHECK(mean.values[11] == Approx(expect_last).epsilon(1e-14));
}

TEST_CASE("a failed line search away from a stationary point starts the solver again",
          "[learn][lbfgs]") {
  // soft-MSM at gamma 0.3, two random walks: two samples of z 2.9e-4 apart, where the gate is
  // stiff, and LBFGS++'s line search gave up at loss 8.21106886367 with |grad| 0.125 (scipy's
  // L-BFGS-B, continued from there on an independent soft-MSM, reached 8.21089497192 with
  // |grad| 1.1e-6); max_iter 1000 stopped at the same point. Iterations are completed line
  // searches: counting the evaluations that lowered the loss (several per search) spent the
  // default budget of 100 at |grad| 5e-5 where 69 reach the optimum
  std::vector<double> const values{2.0564087809385283, 1.9199638414256772, 0.7408389690957293,
                                   2.593108689208658,  2.2633960647835583, 3.325471852569119,
                                   2.495983129221644,  2.247203107967013,  0.5586737544906553,
                                   -1.3502656043446168,
                                   -0.9764345880627331, -1.0544736065938296, -0.2564878964077867,
                                   2.1697326048130363, 1.137869609718426,  0, 0, 0, 0, 0};
  std::vector<r::index_t> const lengths{10, 5};
  r::batch_view<double const> const xs{values.data(), 2, 10, 1, lengths.data()};
  auto const m = r::measures::soft_msm(0.3, 1.0);
  rl::barycenter_options opt;
  opt.length = 8;
  opt.threads = 1;
  REQUIRE(opt.max_iter == 100);
  auto const res = rl::barycenter(m, xs, {}, opt);
  std::vector<double> g(8);
  double const loss = rl::barycenter_loss_and_grad(m, res.view(), xs, {}, std::span<double>(g));
  INFO("loss " << res.loss << " after " << res.iterations << " iterations, gradient norm " << norm(g));
  CHECK(loss == res.loss);
  CHECK(res.loss < 8.2109);
  CHECK(norm(g) < 1e-3);
  CHECK(res.iterations < opt.max_iter);
}

/// How much plain gradient descent with Armijo backtracking (an independent minimiser) lowers
/// a float barycentre's loss from z, relative to it.
template <class Measure>
double descent_gain(Measure const& m, std::vector<float> z, r::index_t length, r::index_t channels,
                    r::batch_view<float const> xs) {
  std::vector<double> g(z.size()), trial_g(z.size());
  auto const loss = [&](std::vector<float> const& at, std::vector<double>& grad) {
    return rl::barycenter_loss_and_grad(m, r::series_view<float const>{at.data(), length, channels}, xs, {},
                                        std::span<double>(grad));
  };
  double const start = loss(z, g);
  double f = start, step = 1e-2;
  for (int it = 0; it < 2000; ++it) {
    double g2 = 0;
    for (double v : g) g2 += v * v;
    bool moved = false;
    for (int halvings = 0; halvings < 40 && !moved; ++halvings) {
      std::vector<float> trial(z.size());
      for (std::size_t i = 0; i < z.size(); ++i) trial[i] = static_cast<float>(z[i] - step * g[i]);
      double const ft = loss(trial, trial_g);
      if (std::isfinite(ft) && ft <= f - 1e-4 * step * g2) {
        z = trial;
        g = trial_g;
        f = ft;
        step *= 2;
        moved = true;
      } else {
        step /= 2;
      }
    }
    if (!moved) break;
  }
  return (start - f) / std::abs(start);
}

TEST_CASE("a float fit does not stop where a line search returned its last trial", "[learn][lbfgs]") {
  // LBFGS++ took the zero gradient of a trial past float's range (after which its interpolated
  // steps were NaN) for convergence: loss 110.007751 after 35 of 100 iterations, |grad| 1.65,
  // where gradient descent from there gains 1.3 %
  namespace sc = resilin_test::stiff_case;
  r::batch_view<float const> const xs{&sc::series[0][0], 4, 38, sc::channels, sc::lengths};
  auto const m = r::measures::soft_msm(static_cast<float>(sc::gamma), static_cast<float>(sc::c));
  rl::barycenter_options opt;
  opt.length = sc::length;
  opt.threads = 1;
  auto const res = rl::barycenter(m, xs, {}, opt);
  INFO("loss " << res.loss << " after " << res.iterations << " iterations");
  CHECK(res.loss < 108.53);
  CHECK(descent_gain(m, res.values, sc::length, sc::channels, xs) < 1e-6);
}

TEST_CASE("an L-BFGS start that meets the gradient test counts no iteration", "[learn][lbfgs]") {
  // one series of one sample: the start (the series) is the minimiser; LBFGS++ returns 1 there
  std::vector<double> const x{3.0};
  r::index_t const length = 1;
  r::batch_view<double const> const one{x.data(), 1, 1, 1, &length};
  rl::barycenter_options opt;
  opt.max_iter = 100;
  int calls = 0;
  opt.progress = [&](std::string_view, int, double) { ++calls; };
  auto const r1 = rl::barycenter(r::measures::soft_dtw(1.0), one, {}, opt);
  CHECK(r1.iterations == 0);
  CHECK(calls == 0);
  CHECK(r1.values == x);
}

TEST_CASE("the L-BFGS barycentre does not depend on the thread count", "[learn][lbfgs]") {
  auto const xs = random_batch<double>({12, 9, 15, 11, 10}, 2, 8);
  auto const m = r::measures::soft_msm(0.5, 0.5);
  rl::barycenter_options opt;
  opt.max_iter = 20;
  opt.threads = 1;
  auto const one = rl::barycenter(m, xs.view(), {}, opt);
  opt.threads = 3;
  auto const three = rl::barycenter(m, xs.view(), {}, opt);
  CHECK(resilin_test::bitwise_equal(one.values, three.values));
  CHECK(one.loss == three.loss);
  CHECK(one.iterations == three.iterations);
}

TEST_CASE("a barycentre starts from opt.start: L-BFGS, DBA, MBA; its checks", "[learn][lbfgs][start]") {
  auto const xs = random_batch<double>({10, 14, 12}, 2, 5);
  auto const other = random_batch<double>({9}, 2, 77);  // a start unlike the mean
  std::vector<double> const start(other.values.begin(), other.values.begin() + 18);
  auto const run = [&](auto const& m, int max_iter, r::index_t length = 0, std::vector<double> s = {}) {
    rl::barycenter_options opt;
    opt.max_iter = max_iter;
    opt.length = length;
    opt.start = s.empty() ? start : std::move(s);
    opt.threads = 1;
    return rl::barycenter(m, xs.view(), {}, opt);
  };
  auto const check = [&](auto const& m) {
    // max_iter 0: the start itself, at its own length (9), not the mean length (12)
    auto const at = run(m, 0);
    CHECK(at.length == 9);
    CHECK(resilin_test::bitwise_equal(at.values, start));
    // the fit from it ends no higher than its start's loss, and elsewhere than a mean start
    auto const fit = run(m, 30);
    CHECK(fit.length == 9);
    CHECK(fit.loss <= at.loss);
    rl::barycenter_options from_mean;
    from_mean.length = 9;
    from_mean.max_iter = 0;
    CHECK(rl::barycenter(m, xs.view(), {}, from_mean).values != at.values);
    // a length that agrees is accepted, one that does not is refused
    CHECK(run(m, 0, 9).values == at.values);
    CHECK(resilin_test::message_of<r::invalid_argument>([&] { run(m, 0, 12); })
              .find("barycenter start has 9 samples, but the barycentre length is 12") != std::string::npos);
    CHECK(resilin_test::message_of<r::invalid_argument>([&] { run(m, 0, 0, std::vector<double>(17, 0.5)); })
              .find("not a multiple of the 2 channels") != std::string::npos);
    auto bad = start;
    bad[5] = std::numeric_limits<double>::quiet_NaN();
    CHECK(resilin_test::message_of<r::invalid_argument>([&] { run(m, 0, 0, bad); })
              .find("barycenter start value 5 must be finite") != std::string::npos);
  };
  check(r::measures::soft_dtw(0.5));
  check(r::measures::dtw());
  check(r::measures::msm());
  // in float, a start beyond float's range is refused
  auto const xf = random_batch<float>({10, 14, 12}, 1, 5);
  rl::barycenter_options opt;
  opt.start.assign(12, 1e39);
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::barycenter(r::measures::soft_dtw(0.5f), xf.view(), {}, opt); })
            .find("must be finite in the value type") != std::string::npos);
  // one barycentre's start: nearest centroid refuses it
  r::dataset<double> ds;
  ds.push_back("a", std::span<double const>(start.data(), 4));
  ds.push_back("b", std::span<double const>(start.data() + 4, 4));
  opt.start.assign(4, 0.0);
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::fit_nearest_centroid(r::measures::dtw(), ds, opt); })
            .find("opt.start must be empty") != std::string::npos);
}

// The sharp objective (barycenter_objective::sharp): barycentres, k-means and nearest centroid
// under the sharp value of a measure (resilin/sharp.hpp). References: sharp_value one pair at a
// time (the loss, sharp_pairwise), central differences of that sum (the loss's gradient),
// stationarity of the result and descent from its start, the medoid start, ARI on separable
// classes, the prediction against an argmin of sharp values, and the refusals.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <support/catch.hpp>
#include <host/helpers.hpp>
#include "learn_helpers.hpp"
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>
#include <resilin/sharp.hpp>

namespace r = resilin;
namespace rl = resilin::learn;
using resilin_test::central_differences;
using resilin_test::random_batch;
using resilin_test::random_values;
using resilin_test::two_classes;

namespace {

constexpr auto sharp = rl::barycenter_objective::sharp;

/// sum_k w_k sharp(z, x_k) / sum w, one pair at a time through sharp_value().
template <class Measure>
double sharp_sum(Measure const& m, std::vector<double> const& z, r::index_t channels,
                 resilin_test::owned_batch<double> const& xs, std::vector<double> const& w) {
  double total = 0, wsum = 0;
  r::series_view<double const> const zv{z.data(), static_cast<r::index_t>(z.size()) / channels, channels};
  for (std::size_t k = 0; k < xs.lengths.size(); ++k) {
    total += w[k] * r::sharp_value(m, zv, xs.view()[static_cast<r::index_t>(k)]);
    wsum += w[k];
  }
  return total / wsum;
}

}  // namespace

TEST_CASE("sharp_pairwise equals sharp_value pair by pair, divergences and channels included",
          "[learn][sharp]") {
  auto const xs = random_batch<double>({5, 8, 3}, 2, 21);
  auto const ys = random_batch<double>({6, 4}, 2, 31);
  auto const check = [&](auto const& m, char const* name) {
    INFO(name);
    std::vector<double> out(6);
    r::sharp_pairwise(r::host.with_threads(2), m, xs.view(), ys.view(), r::matrix_view<double>{out.data(), 3, 2});
    for (r::index_t a = 0; a < 3; ++a)
      for (r::index_t b = 0; b < 2; ++b)
        CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(a * 2 + b)],
                                       r::sharp_value(m, xs.view()[a], ys.view()[b])));
  };
  check(r::measures::soft_dtw(0.5), "soft-DTW");
  check(r::measures::soft_dtw_divergence(0.5), "soft-DTW divergence");
  check(r::measures::soft_msm(0.5, 0.3), "soft-MSM (independent channels)");
  check(r::measures::soft_msm_divergence(0.5, 0.3), "soft-MSM divergence (independent channels)");
  std::vector<double> out(6);
  CHECK_THROWS_AS(r::sharp_pairwise(r::host, r::measures::soft_dtw(0.5), xs.view(), ys.view(),
                                    r::matrix_view<double>{out.data(), 2, 3}),
                  r::invalid_argument);
}

TEST_CASE("the sharp loss and its gradient: per-pair sharp values and central differences",
          "[learn][sharp]") {
  auto const xs = random_batch<double>({4, 7, 5}, 2, 11);
  std::vector<double> const w{1.0, 2.5, 0.5};
  auto const z = random_values<double>(6 * 2, 99, -2, 2);
  auto const check = [&](auto const& m, char const* name) {
    INFO(name);
    std::vector<double> g(z.size());
    r::series_view<double const> const zv{z.data(), 6, 2};
    double const loss = rl::barycenter_loss_and_grad(m, zv, xs.view(), std::span<double const>(w),
                                                     std::span<double>(g), 1, sharp);
    CHECK(loss == Approx(sharp_sum(m, z, 2, xs, w)).epsilon(1e-12));
    CHECK(rl::barycenter_loss(m, zv, xs.view(), std::span<double const>(w), 2, sharp) ==
          Approx(loss).epsilon(1e-12));
    CHECK(loss != Approx(rl::barycenter_loss(m, zv, xs.view(), std::span<double const>(w), 2)).epsilon(1e-6));
    auto const fd = central_differences([&](std::vector<double> const& p) { return sharp_sum(m, p, 2, xs, w); }, z);
    CHECK(resilin_test::max_rel_diff(g, fd) < 2e-6);
  };
  check(r::measures::soft_dtw(0.7), "soft-DTW");
  check(r::measures::soft_dtw_divergence(0.7), "soft-DTW divergence");
  check(r::measures::soft_msm(0.7, 0.5), "soft-MSM");
}

TEST_CASE("sharp barycentres: stationary points of the sharp loss below their start",
          "[learn][sharp]") {
  auto const cbf = r::make_cbf<double>({.per_class = 5, .length = 40, .seed = 7});
  resilin_test::owned_batch<double> xs;
  xs.max_length = 40;
  for (r::index_t s = 0; s < cbf.size(); ++s) {
    if (cbf.labels[static_cast<std::size_t>(s)] != "2") continue;
    auto const x = cbf.series(s);
    xs.values.insert(xs.values.end(), x.data, x.data + x.size());
    xs.lengths.push_back(40);
  }
  auto const check = [&](auto const& m, char const* name) {
    INFO(name);
    rl::barycenter_options opt;
    opt.max_iter = 100;
    opt.threads = 1;
    auto const plain = rl::barycenter(m, xs.view(), {}, opt);
    opt.objective = sharp;
    auto const res = rl::barycenter(m, xs.view(), {}, opt);
    REQUIRE(res.length == 40);
    CHECK(res.iterations > 0);
    CHECK(res.loss == Approx(rl::barycenter_loss(m, res.view(), xs.view(), {}, 1, sharp)).epsilon(1e-12));
    std::vector<double> const z(res.values.begin(), res.values.end());
    CHECK(res.loss == Approx(sharp_sum(m, z, 1, xs, std::vector<double>(xs.lengths.size(), 1.0))).epsilon(1e-12));
    auto start_opt = opt;
    start_opt.max_iter = 0;
    auto const start = rl::barycenter(m, xs.view(), {}, start_opt);
    CHECK(res.loss < start.loss);
    // another objective, another barycentre (the sharp loss is not convex: from the same start
    // it may settle above the sharp loss of the value barycentre, as it did here for soft-DTW)
    CHECK(res.values != plain.values);
    std::vector<double> g(z.size()), g0(z.size());
    rl::barycenter_loss_and_grad(m, res.view(), xs.view(), {}, std::span<double>(g), 1, sharp);
    rl::barycenter_loss_and_grad(m, start.view(), xs.view(), {}, std::span<double>(g0), 1, sharp);
    double n = 0, n0 = 0;
    for (std::size_t i = 0; i < g.size(); ++i) { n += g[i] * g[i]; n0 += g0[i] * g0[i]; }
    CHECK(std::sqrt(n) < 1e-2 * std::sqrt(n0));
    // the medoid start under the sharp objective: the input with the lowest summed sharp value
    start_opt.init = rl::init_method::medoid;
    auto const medoid = rl::barycenter(m, xs.view(), {}, start_opt);
    double best = 0;
    r::index_t which = -1;
    for (r::index_t k = 0; k < xs.view().batch; ++k) {
      double const l = rl::barycenter_loss(m, xs.view()[k], xs.view(), {}, 1, sharp);
      if (which < 0 || l < best) { best = l; which = k; }
    }
    auto const x = xs.view()[which];
    CHECK(std::vector<double>(medoid.values.begin(), medoid.values.end()) == std::vector<double>(x.data, x.data + 40));
  };
  check(r::measures::soft_dtw(1.0), "soft-DTW");
  check(r::measures::soft_dtw_divergence(1.0), "soft-DTW divergence (the sharp divergence)");
}

TEST_CASE("k-means and nearest centroid under the sharp value", "[learn][sharp]") {
  auto const ds = two_classes(6, 40, 11);
  auto const m = r::measures::soft_dtw_divergence(1.0);
  rl::kmeans_options o;
  o.k = 2;
  o.seed = 3;
  o.restarts = 2;
  o.max_iter = 8;
  o.barycenter.max_iter = 15;
  o.barycenter.threads = 1;
  o.barycenter.objective = sharp;
  auto const km = rl::kmeans(m, ds.view(), o);
  auto const truth = rl::encode_labels(std::span<std::string const>(ds.labels));
  CHECK(rl::adjusted_rand_index(std::span<r::index_t const>(truth),
                                std::span<r::index_t const>(km.assignments)) == 1.0);
  // the inertia is the summed sharp divergence of each series to its centroid
  double inertia = 0;
  for (r::index_t i = 0; i < ds.size(); ++i)
    inertia += r::sharp_value(m, ds.series(i), km.centroids[static_cast<std::size_t>(km.assignments[static_cast<std::size_t>(i)])].view());
  CHECK(km.inertia == Approx(inertia).epsilon(1e-12));

  rl::barycenter_options bo;
  bo.max_iter = 15;
  bo.threads = 1;
  bo.objective = sharp;
  auto const model = rl::fit_nearest_centroid(m, ds, bo);
  CHECK(model.objective == sharp);
  auto const test = two_classes(4, 40, 12);
  auto const predicted = rl::predict(m, model, test, 1);
  for (r::index_t i = 0; i < test.size(); ++i) {
    double best = 0;
    std::size_t which = 0;
    for (std::size_t c = 0; c < model.centroids.size(); ++c) {
      double const v = r::sharp_value(m, test.series(i), model.centroids[c].view());
      if (c == 0 || v < best) { best = v; which = c; }
    }
    CHECK(predicted[static_cast<std::size_t>(i)] == model.classes[which]);
    CHECK(predicted[static_cast<std::size_t>(i)] == test.labels[static_cast<std::size_t>(i)]);
  }
}

TEST_CASE("the sharp objective: hard measures keep their value; refusals", "[learn][sharp]") {
  auto const ds = two_classes(3, 24, 5);
  rl::barycenter_options bo;
  bo.max_iter = 5;
  bo.threads = 1;
  auto const dba = rl::barycenter(r::measures::dtw(), ds.view(), {}, bo);
  bo.objective = sharp;
  auto const dba_sharp = rl::barycenter(r::measures::dtw(), ds.view(), {}, bo);
  CHECK(dba.values == dba_sharp.values);  // the sharp value of a hard measure is its value
  CHECK(dba.loss == dba_sharp.loss);
  CHECK_THROWS_WITH(rl::fcdtw_barycenter(r::fcdtw::fit_options{}, ds.view(), {}, bo),
                    Catch::Contains("no sharp value"));
  rl::kmeans_options ko;
  ko.max_iter = 0;  // refused before any seeding, not by the first barycentre
  ko.barycenter = bo;
  CHECK_THROWS_WITH(rl::fcdtw_kmeans(r::fcdtw::fit_options{}, ds.view(), ko), Catch::Contains("no sharp value"));
  auto const bad = static_cast<rl::barycenter_objective>(7);
  bo.objective = bad;
  CHECK_THROWS_WITH(rl::barycenter(r::measures::soft_dtw(1.0), ds.view(), {}, bo),
                    Catch::Contains("objective must be value or sharp"));
  auto const z = ds.view()[0];
  std::vector<double> g(static_cast<std::size_t>(z.size()));
  CHECK_THROWS_WITH(rl::barycenter_loss(r::measures::soft_dtw(1.0), z, ds.view(), {}, 1, bad),
                    Catch::Contains("objective must be value or sharp"));
  CHECK_THROWS_WITH(rl::barycenter_loss_and_grad(r::measures::soft_dtw(1.0), z, ds.view(), {},
                                                 std::span<double>(g), 1, bad),
                    Catch::Contains("objective must be value or sharp"));
  bo.objective = rl::barycenter_objective::value;
  auto model = rl::fit_nearest_centroid(r::measures::soft_dtw(1.0), ds, bo);
  model.objective = bad;
  CHECK_THROWS_WITH(rl::predict(r::measures::soft_dtw(1.0), model, ds, 1),
                    Catch::Contains("objective must be value or sharp"));
}

TEST_CASE("a soft measure with a double gamma on float series: the learn layer and sharp values",
          "[learn][sharp]") {
  // measures::soft_dtw(0.7) has a double gamma; the sharp path's scalar soft-min mixed float
  // values with it and no learn entry point compiled (value() took it, as packs convert gamma)
  auto const xs = random_batch<float>({6, 7, 5, 6}, 1, 91);
  auto const mixed = r::measures::soft_dtw(0.7);
  auto const same = r::measures::soft_dtw(0.7f);
  auto const x = xs.view()[0], y = xs.view()[1];
  CHECK(r::sharp_value(mixed, x, y) == Approx(r::sharp_value(same, x, y)).epsilon(1e-6));
  for (auto const objective : {rl::barycenter_objective::value, sharp}) {
    rl::barycenter_options opt;
    opt.objective = objective;
    opt.max_iter = 20;
    auto const a = rl::barycenter(mixed, xs.view(), {}, opt);
    auto const b = rl::barycenter(same, xs.view(), {}, opt);
    CHECK(a.loss == Approx(b.loss).epsilon(1e-5));
    CHECK(rl::barycenter_loss(mixed, a.view(), xs.view(), {}, 1, objective) == Approx(a.loss).epsilon(1e-5));
  }
  rl::kmeans_options kopt;
  kopt.k = 2;
  auto const km = rl::kmeans(mixed, xs.view(), kopt);
  CHECK(km.assignments.size() == 4);
  auto const data = two_classes(4, 16, 5).as<float>();
  auto const model = rl::fit_nearest_centroid(mixed, data);
  CHECK(rl::predict(mixed, model, data).size() == static_cast<std::size_t>(data.size()));
}

// DBA (exact DTW) and MBA (exact MSM) barycentres and the dispatcher: monotone loss from sweep
// to sweep, DBA's fixed point (each sample is the mean of the values aligned to it), a brute
// force optimum over every pair of alignment paths, the losses against independent oracles,
// identical inputs, the L1 (median) variant, and the measures with no barycentre method.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <host/helpers.hpp>
#include "learn_helpers.hpp"
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;
namespace ref = resilin_test::reference;
using resilin_test::random_values;

namespace {

/// n CBF series (every class), length `length`, as an owned padded batch.
struct cbf_batch {
  r::dataset<double> ds;
  explicit cbf_batch(r::index_t per_class, r::index_t length, std::uint64_t seed = 3)
      : ds(r::make_cbf<double>({.per_class = per_class, .length = length, .seed = seed})) {}
  r::batch_view<double const> view() const { return ds.view(); }
};

struct recorder {
  std::vector<double> losses;
  std::vector<int> iterations;
  std::string stage;
  rl::progress_callback callback() {
    return [this](std::string_view s, int it, double loss) {
      stage = std::string(s);
      iterations.push_back(it);
      losses.push_back(loss);
    };
  }
};

void check_non_increasing(std::vector<double> const& losses, double start) {
  double prev = start;
  for (double l : losses) {
    CHECK(l <= prev);
    prev = l;
  }
}

rl::barycenter_options sweeps(int max_iter, double tolerance = 1e-6) {
  rl::barycenter_options o;
  o.max_iter = max_iter;
  o.tolerance = tolerance;
  o.threads = 2;
  return o;
}

}  // namespace

TEST_CASE("DBA never raises the DTW loss and ends at its fixed point", "[learn][dba]") {
  cbf_batch const data(3, 40);
  auto const xs = data.view();
  auto const m = r::measures::dtw();
  auto const start = rl::dba(m, xs, {}, sweeps(0));
  recorder rec;
  auto opt = sweeps(100, 0.0);
  opt.progress = rec.callback();
  auto const res = rl::dba(m, xs, {}, opt);
  REQUIRE(!rec.losses.empty());
  CHECK(rec.stage == "dba");
  check_non_increasing(rec.losses, start.loss);
  CHECK(res.loss < 0.9 * start.loss);
  CHECK(res.iterations == static_cast<int>(rec.losses.size()));
  // the loss is the naive DTW of the result against every series
  double naive = 0;
  for (r::index_t k = 0; k < xs.batch; ++k)
    naive += ref::hard_dtw_value(res.values.data(), xs[k].data, res.length, xs.length(k), 1) / static_cast<double>(xs.batch);
  CHECK(res.loss == Approx(naive).epsilon(1e-12));
  // fixed point: every sample is the mean of the values its paths align to it
  std::vector<double> sum(static_cast<std::size_t>(res.length), 0.0), count(sum.size(), 0.0);
  for (r::index_t k = 0; k < xs.batch; ++k)
    for (auto const& [i, j] : r::alignment_path(m, res.view(), xs[k])) {
      sum[static_cast<std::size_t>(i)] += xs[k](j, 0);
      count[static_cast<std::size_t>(i)] += 1;
    }
  for (std::size_t i = 0; i < sum.size(); ++i) CHECK(res.values[i] == Approx(sum[i] / count[i]).epsilon(1e-12));
}

TEST_CASE("DBA reaches the brute-force optimum on a tiny case", "[learn][dba]") {
  // two series of length 3, a barycentre of length 3: the exact optimum is the best pair of
  // alignment paths, each sample the weighted mean of the values aligned to it
  std::vector<double> const x{0.0, 2.0, 1.0, /* x2 */ 1.5, -1.0, 0.5};
  std::vector<double> const w{1.0, 3.0};
  r::batch_view<double const> const xs{x.data(), 2, 3, 1, nullptr};
  auto const paths = ref::all_paths(3, 3);
  double best = std::numeric_limits<double>::infinity();
  for (auto const& p1 : paths)
    for (auto const& p2 : paths) {
      std::array<double, 3> s{}, c{};
      for (auto [i, j] : p1) { s[i] += w[0] * x[j]; c[i] += w[0]; }
      for (auto [i, j] : p2) { s[i] += w[1] * x[3 + j]; c[i] += w[1]; }
      double cost = 0;
      for (auto [i, j] : p1) cost += w[0] / 4 * std::pow(s[i] / c[i] - x[j], 2);
      for (auto [i, j] : p2) cost += w[1] / 4 * std::pow(s[i] / c[i] - x[3 + j], 2);
      best = std::min(best, cost);
    }
  for (auto init : {rl::init_method::euclidean_mean, rl::init_method::medoid}) {
    auto opt = sweeps(50, 0.0);
    opt.init = init;
    auto const res = rl::dba(r::measures::dtw(), xs, std::span<double const>(w), opt);
    INFO("brute force " << best << ", DBA " << res.loss);
    CHECK(res.loss >= best - 1e-12);
    CHECK(res.loss == Approx(best).epsilon(1e-12));
  }
}

TEST_CASE("DBA with the L1 point cost takes weighted medians and never raises the loss", "[learn][dba]") {
  cbf_batch const data(2, 32, 5);
  auto const m = r::measures::dtw<r::l1_distance>();
  auto const start = rl::dba(m, data.view(), {}, sweeps(0));
  recorder rec;
  auto opt = sweeps(50, 0.0);
  opt.progress = rec.callback();
  auto const res = rl::barycenter(m, data.view(), {}, opt);
  check_non_increasing(rec.losses, start.loss);
  CHECK(res.loss < start.loss);
  CHECK(res.loss == Approx(rl::barycenter_loss(m, res.view(), data.view())).epsilon(1e-12));
}

TEST_CASE("MBA never raises the MSM loss", "[learn][mba]") {
  cbf_batch const data(3, 32);
  for (double c : {0.1, 1.0}) {
    auto const m = r::measures::msm(c);
    auto const start = rl::mba(m, data.view(), {}, sweeps(0));
    recorder rec;
    auto opt = sweeps(30, 0.0);
    opt.progress = rec.callback();
    auto const res = rl::barycenter(m, data.view(), {}, opt);
    CHECK(rec.stage == "mba");
    check_non_increasing(rec.losses, start.loss);
    CHECK(res.loss < start.loss);
    double direct = 0;
    for (r::index_t k = 0; k < data.view().batch; ++k) direct += r::value(m, res.view(), data.view()[k]);
    CHECK(res.loss == Approx(direct / static_cast<double>(data.view().batch)).epsilon(1e-12));
  }
}

TEST_CASE("MBA with several channels aligns each channel on its own path", "[learn][mba]") {
  std::vector<double> x = random_values<double>(4 * 12 * 2, 17, -3, 3);
  r::batch_view<double const> const xs{x.data(), 4, 12, 2, nullptr};
  auto const m = r::measures::msm(0.5);
  auto const res = rl::mba(m, xs, {}, sweeps(20));
  REQUIRE(res.channels == 2);
  double expect = 0;
  for (r::index_t k = 0; k < 4; ++k)
    for (r::index_t c = 0; c < 2; ++c) {
      std::vector<double> zc, xc;
      for (r::index_t i = 0; i < 12; ++i) { zc.push_back(res.values[static_cast<std::size_t>(i * 2 + c)]); xc.push_back(xs[k](i, c)); }
      expect += r::value(m, r::view(zc), r::view(xc)) / 4;
    }
  CHECK(res.loss == Approx(expect).epsilon(1e-12));
  CHECK(res.loss < rl::mba(m, xs, {}, sweeps(0)).loss);
}

TEST_CASE("DBA and MBA of identical series return the series", "[learn][dba][mba]") {
  auto const x = random_values<double>(10, 23);
  std::vector<double> three;
  for (int k = 0; k < 3; ++k) three.insert(three.end(), x.begin(), x.end());
  r::batch_view<double const> const xs{three.data(), 3, 10, 1, nullptr};
  for (auto init : {rl::init_method::euclidean_mean, rl::init_method::medoid}) {
    auto opt = sweeps(10);
    opt.init = init;
    auto const d = rl::barycenter(r::measures::dtw(), xs, {}, opt);
    auto const b = rl::barycenter(r::measures::msm(), xs, {}, opt);
    CHECK(resilin_test::max_abs_diff(d.values, x) < 1e-15);
    CHECK(resilin_test::max_abs_diff(b.values, x) < 1e-15);
    CHECK(d.loss < 1e-25);  // the mean of equal values, up to rounding
    CHECK(b.loss < 1e-14);  // absolute costs: rounding of the order of an ulp
  }
}

TEST_CASE("the dispatcher picks the method of the measure", "[learn][barycenter]") {
  cbf_batch const data(2, 24);
  auto const xs = data.view();
  auto const opt = sweeps(5);
  CHECK(rl::barycenter(r::measures::dtw(), xs, {}, opt).values == rl::dba(r::measures::dtw(), xs, {}, opt).values);
  CHECK(rl::barycenter(r::measures::msm(), xs, {}, opt).values == rl::mba(r::measures::msm(), xs, {}, opt).values);
  auto const sd = r::measures::soft_dtw(1.0);
  CHECK(rl::barycenter(sd, xs, {}, opt).values == rl::lbfgs_barycenter(sd, xs, {}, opt).values);
  // mutable views are accepted as well
  r::dataset<double> copy = data.ds;
  CHECK(rl::barycenter(r::measures::dtw(), copy.view(), {}, opt).values == rl::dba(r::measures::dtw(), xs, {}, opt).values);
  // hard measures without a method
  CHECK_THROWS_AS(rl::barycenter(r::measures::hard_soft_msm(1.0), xs, {}, opt), r::invalid_argument);
  auto hard_div = r::measures::dtw();
  hard_div.divergence = true;
  CHECK_THROWS_AS(rl::barycenter(hard_div, xs, {}, opt), r::invalid_argument);
  CHECK(resilin_test::message_of<r::invalid_argument>([&] {
          rl::barycenter(r::measures::hard_soft_msm(1.0), xs, {}, opt);
        }).find("no barycentre method") != std::string::npos);
}

TEST_CASE("medoid: blocks of rows give the whole matrix's medoid", "[learn][medoid]") {
  // the medoid start held the whole (n, n) matrix (3.2 GB for 20000 series in double); it now
  // takes rows in blocks of at most 64 MiB, here forced down to one, three and all rows
  r::index_t const n = 37, len = 5;
  auto values = random_values(static_cast<std::size_t>(n * len), 77);
  for (r::index_t k = 0; k < len; ++k) values[static_cast<std::size_t>(20 * len + k)] = values[static_cast<std::size_t>(9 * len + k)];
  auto const X = r::make_batch(std::span<double const>(values), n, len, 1);
  auto const m = r::measures::soft_dtw(0.5);
  std::vector<double> d(static_cast<std::size_t>(n * n));
  r::pairwise(r::host, m, X, X, r::matrix_view<double>{d.data(), n, n});
  for (bool uniform : {true, false}) {
    std::vector<double> w(static_cast<std::size_t>(n), 1.0);
    if (!uniform)
      for (r::index_t k = 0; k < n; ++k) w[static_cast<std::size_t>(k)] = 0.5 + 0.1 * double(k % 7);
    r::index_t want = 0;  // brute force: argmin_j sum_k w_k d(j, k), the first on ties
    double best = 0;
    for (r::index_t j = 0; j < n; ++j) {
      double s = 0;
      for (r::index_t k = 0; k < n; ++k) s += w[static_cast<std::size_t>(k)] * d[static_cast<std::size_t>(j * n + k)];
      if (j == 0 || s < best) { want = j; best = s; }
    }
    for (std::size_t rows : {std::size_t(1), std::size_t(3), std::size_t(n)}) {
      INFO("rows per block " << rows << ", uniform weights " << uniform);
      r::index_t calls = 0;
      r::index_t const got = rl::detail::medoid_by_rows<double>(
          n, std::span<double const>(w),
          [&](r::index_t first, r::index_t count, r::matrix_view<double> out) {
            ++calls;
            CHECK(count <= static_cast<r::index_t>(rows));
            r::pairwise(r::host, m, X.subbatch(first, count), X, out);
          },
          rows * static_cast<std::size_t>(n) * sizeof(double));
      CHECK(got == want);
      CHECK(calls == (n + static_cast<r::index_t>(rows) - 1) / static_cast<r::index_t>(rows));
    }
    CHECK(rl::detail::medoid_index(m, X, std::span<double const>(w), 1, rl::barycenter_objective{}) == want);
  }
}

TEST_CASE("a sweep's means over blocks of series: the weighted means along every path",
          "[learn][dba][mba]") {
  // 150 ragged series (64 blocks of 2-3), zero weights among them, two channels: one sweep from
  // a given start against the weighted mean of the values on each series' optimal path, formed
  // here pair by pair from alignment_path (per channel for MSM's independent channels); the
  // same bits on 1, 2 and 3 threads
  std::vector<r::index_t> lengths;
  for (int k = 0; k < 150; ++k) lengths.push_back(9 + k % 7);
  auto const xs = resilin_test::random_batch<double>(lengths, 2, 17);
  std::vector<double> w(150);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = k % 11 == 3 ? 0.0 : 0.5 + static_cast<double>(k % 5);
  auto const start = random_values<double>(24, 5, -1, 1);  // 12 samples, 2 channels
  auto const check = [&](auto const& m, bool per_channel) {
    std::vector<double> sum(24, 0.0), weight(24, 0.0);
    for (r::index_t k = 0; k < 150; ++k) {
      double const wk = w[static_cast<std::size_t>(k)];
      auto const x = xs.view()[k];
      for (r::index_t c = 0; c < (per_channel ? 2 : 1); ++c) {
        std::vector<double> zc, xc;
        for (r::index_t i = 0; i < 12; ++i) zc.push_back(start[static_cast<std::size_t>(i * 2 + c)]);
        for (r::index_t j = 0; j < x.length; ++j) xc.push_back(x(j, c));
        auto const path = per_channel ? r::alignment_path(m, r::series_view<double const>{zc.data(), 12, 1},
                                                          r::series_view<double const>{xc.data(), x.length, 1})
                                      : r::alignment_path(m, r::series_view<double const>{start.data(), 12, 2}, x);
        for (auto const& [i, j] : path)
          for (r::index_t ch = per_channel ? c : 0; ch < (per_channel ? c + 1 : 2); ++ch) {
            sum[static_cast<std::size_t>(i * 2 + ch)] += wk * x(j, ch);
            weight[static_cast<std::size_t>(i * 2 + ch)] += wk;
          }
      }
    }
    std::vector<double> expect(24);
    for (std::size_t s = 0; s < 24; ++s) expect[s] = sum[s] / weight[s];
    rl::barycenter_options opt = sweeps(1, 0.0);
    opt.start = start;
    opt.threads = 1;
    auto const one = rl::barycenter(m, xs.view(), std::span<double const>(w), opt);
    REQUIRE(one.iterations == 1);  // (MBA keeps a sweep only where it lowers the loss)
    CHECK(resilin_test::max_abs_diff(one.values, expect) < 1e-13);
    for (int threads : {2, 3}) {
      opt.threads = threads;
      CHECK(resilin_test::bitwise_equal(rl::barycenter(m, xs.view(), std::span<double const>(w), opt).values, one.values));
    }
  };
  check(r::measures::dtw(), false);
  check(r::measures::msm(), true);
}

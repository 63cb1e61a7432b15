// sharp_value, sharp_value_and_grad, alignment_entropy and their batches: the expected cost of
// the soft alignment and the entropy of the alignment distribution. References: the enumeration
// of every alignment path (the Gibbs expectation of the path cost, -sum p log p, and central
// differences of them), move_occupancy (the strip engine's expected move uses times the step
// costs) for every cost model, the identity S = sharp - gamma H against value(), the limits in
// gamma (log Delannoy, the mean path cost, DTW), the hard measures, and the refusals.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"
#include "second_order_helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using resilin_test::central_differences;
using resilin_test::max_rel_diff;
using resilin_test::message_of;
using resilin_test::random_values;

namespace {

/// Over every alignment path: the Gibbs expectation of its cost, the entropy and the uniform mean.
struct enumerated {
  double sharp = 0, entropy = 0, mean = 0;
};

enumerated enumerate(std::vector<double> const& x, std::vector<double> const& y, r::index_t n, r::index_t m,
                     r::index_t d, double gamma, ref::mask const* band = nullptr) {
  using L = long double;
  auto const paths = ref::all_paths(n, m, band);
  std::vector<L> costs;
  L lo = std::numeric_limits<L>::infinity();
  std::vector<L> const xl(x.begin(), x.end()), yl(y.begin(), y.end());
  for (auto const& p : paths) {
    costs.push_back(ref::path_cost(p, xl.data(), yl.data(), d));
    lo = std::min(lo, costs.back());
  }
  L z = 0, sharp = 0, mean = 0;
  std::vector<L> w(costs.size());
  for (std::size_t k = 0; k < costs.size(); ++k) {
    z += (w[k] = std::exp(-(costs[k] - lo) / L(gamma)));
    mean += costs[k];
  }
  L h = 0;
  for (std::size_t k = 0; k < costs.size(); ++k) {
    L const p = w[k] / z;
    sharp += p * costs[k];
    if (p > 0) h -= p * std::log(p);
  }
  return {static_cast<double>(sharp), static_cast<double>(h), static_cast<double>(mean / L(costs.size()))};
}

/// The sharp value from the strip engine's move occupancies: sum over cells and moves of the
/// expected use of the move times its step cost (one channel).
template <class M>
double sharp_from_occupancy(M const& meas, std::vector<double> const& x, std::vector<double> const& y) {
  auto const n = static_cast<r::index_t>(x.size()), m = static_cast<r::index_t>(y.size());
  std::vector<double> dg(x.size() * y.size()), up(dg.size()), left(dg.size());
  r::move_occupancy(meas, r::view(x), r::view(y), r::matrix_view<double>{dg.data(), n, m},
                    r::matrix_view<double>{up.data(), n, m}, r::matrix_view<double>{left.data(), n, m});
  auto const use = [](double occ, double c) { return occ != 0.0 ? occ * c : 0.0; };  // c may be +inf
  double s = 0;
  for (r::index_t i = 0; i < n; ++i)
    for (r::index_t j = 0; j < m; ++j) {
      auto const c = meas.cost.step(r::series_view<double const>{x.data(), n, 1},
                                    r::series_view<double const>{y.data(), m, 1}, i, j);
      auto const k = static_cast<std::size_t>(i * m + j);
      s += use(dg[k], c.diag) + use(up[k], c.up) + use(left[k], c.left);
    }
  return s;
}

struct sharp_out {
  double value = 0;
  std::vector<double> gx, gy;
};

template <class M>
sharp_out sharp_of(M const& meas, std::vector<double> const& x, std::vector<double> const& y, r::index_t d) {
  r::index_t const n = static_cast<r::index_t>(x.size()) / d, m = static_cast<r::index_t>(y.size()) / d;
  sharp_out o;
  o.gx.assign(x.size(), 7.0);  // overwritten
  o.gy.assign(y.size(), 7.0);
  o.value = r::sharp_value_and_grad(meas, r::series_view<double const>{x.data(), n, d},
                                    r::series_view<double const>{y.data(), m, d},
                                    r::series_view<double>{o.gx.data(), n, d}, r::series_view<double>{o.gy.data(), m, d});
  return o;
}

template <class M>
double sharp_only(M const& meas, std::vector<double> const& x, std::vector<double> const& y, r::index_t d) {
  r::index_t const n = static_cast<r::index_t>(x.size()) / d, m = static_cast<r::index_t>(y.size()) / d;
  return r::sharp_value(meas, r::series_view<double const>{x.data(), n, d}, r::series_view<double const>{y.data(), m, d});
}

std::vector<double> joined(std::vector<double> const& a, std::vector<double> const& b) {
  std::vector<double> p(a);
  p.insert(p.end(), b.begin(), b.end());
  return p;
}

using pair_function = std::function<double(std::vector<double> const&, std::vector<double> const&)>;

/// Central differences of f over (x, y) jointly.
std::vector<double> differences_of(pair_function const& f, std::vector<double> const& x,
                                   std::vector<double> const& y, double step = 1e-5) {
  return central_differences(
      [&](std::vector<double> const& p) {
        auto const cut = p.begin() + static_cast<std::ptrdiff_t>(x.size());
        return f(std::vector<double>(p.begin(), cut), std::vector<double>(cut, p.end()));
      },
      joined(x, y), step);
}

/// The value of sharp_value_and_grad and of sharp_value against `expected`, and the gradient
/// against central differences of `reference`.
template <class M>
void check_against(M const& meas, std::vector<double> const& x, std::vector<double> const& y, r::index_t d,
                   double expected, pair_function const& reference, double value_tol, double grad_tol,
                   double step = 1e-5) {
  sharp_out const o = sharp_of(meas, x, y, d);
  double const scale = std::max(1.0, std::abs(expected));
  CHECK(std::abs(o.value - expected) <= value_tol * scale);
  CHECK(std::abs(sharp_only(meas, x, y, d) - expected) <= value_tol * scale);
  CHECK(max_rel_diff(joined(o.gx, o.gy), differences_of(reference, x, y, step)) <= grad_tol);
}

}  // namespace

TEST_CASE("sharp: soft-DTW against the enumeration of every path", "[sharp]") {
  std::uint64_t seed = 10;
  resilin_test::for_each_small_problem(seed, [&](double gamma, r::index_t n, r::index_t m, r::index_t d,
                                                 r::band_spec band, std::vector<double> const& x,
                                                 std::vector<double> const& y) {
    auto const meas = r::measures::soft_dtw<double>(gamma, band);
    ref::mask const mask = resilin_test::band_mask(band, n, m);
    auto const e = enumerate(x, y, n, m, d, gamma, &mask);
    check_against(
        meas, x, y, d, e.sharp,
        [&](std::vector<double> const& a, std::vector<double> const& b) {
          return enumerate(a, b, n, m, d, gamma, &mask).sharp;
        },
        1e-12, 1e-6);
    r::series_view<double const> const xs{x.data(), n, d}, ys{y.data(), m, d};
    double const h = r::alignment_entropy(meas, xs, ys);
    CHECK(std::abs(h - e.entropy) <= 1e-12 * std::max(1.0, e.entropy));
    // S = sharp - gamma H
    CHECK(r::value(meas, xs, ys) == Approx(e.sharp - gamma * e.entropy).epsilon(1e-12).margin(1e-12));
  });
}

TEST_CASE("sharp: the limits in gamma", "[sharp]") {
  r::index_t const n = 6, m = 6;
  auto const x = random_values(n, 21, -1, 1), y = random_values(m, 22, -1, 1);
  auto const e = enumerate(x, y, n, m, 1, 1.0);
  // gamma -> infinity: every path as likely, H = log Delannoy(5, 5) = log 1683
  auto const flat = r::measures::soft_dtw<double>(1e7);
  CHECK(r::alignment_entropy(flat, r::view(x), r::view(y)) == Approx(ref::log_delannoy(5, 5)).epsilon(1e-9));
  CHECK(r::sharp_value(flat, r::view(x), r::view(y)) == Approx(e.mean).epsilon(1e-6));
  // gamma -> 0: the optimal path's cost (DTW) and no entropy
  auto const sharp = r::measures::soft_dtw<double>(1e-4);
  double const hard = r::value(r::measures::dtw(), r::view(x), r::view(y));
  CHECK(r::sharp_value(sharp, r::view(x), r::view(y)) == Approx(hard).epsilon(1e-10));
  CHECK(r::alignment_entropy(sharp, r::view(x), r::view(y)) <= 1e-10);
  // in between, DTW <= sharp <= the mean path cost and S <= sharp
  for (double gamma : {0.01, 0.1, 1.0, 10.0}) {
    CAPTURE(gamma);
    auto const soft = r::measures::soft_dtw<double>(gamma);
    double const s = r::sharp_value(soft, r::view(x), r::view(y));
    CHECK(hard <= s);
    CHECK(s <= e.mean);
    CHECK(r::value(soft, r::view(x), r::view(y)) <= s);
  }
  // the entropy of a 400 x 400 problem at a large gamma: log Delannoy(399, 399), no cancellation
  auto const lx = random_values(400, 23, -1, 1), ly = random_values(400, 24, -1, 1);
  CHECK(r::alignment_entropy(r::measures::soft_dtw<double>(1e9), r::view(lx), r::view(ly)) ==
        Approx(ref::log_delannoy(399, 399)).epsilon(1e-9));
}

TEST_CASE("sharp: gradients stay within the optimal paths' where alignments tie at tiny gamma", "[sharp]") {
  // Integer data: several optimal paths tie exactly, and every other one weighs exp(-1 / gamma) =
  // 0. The gradient of the sharp value is then a mixture of the tied paths' cost gradients. The
  // weights' tangents were formed from the accumulated R' of the candidates, whose rounding
  // divided by gamma grew without bound (gradients of 3.9e6 at gamma = 1e-20 for at most 9.8).
  auto const check = [](std::vector<double> const& x, std::vector<double> const& y, double gamma) {
    CAPTURE(gamma, x[0]);
    auto const n = static_cast<r::index_t>(x.size()), m = static_cast<r::index_t>(y.size());
    std::vector<double> lo(x.size() + y.size(), std::numeric_limits<double>::infinity());
    std::vector<double> hi(lo.size(), -std::numeric_limits<double>::infinity());
    double best = std::numeric_limits<double>::infinity();
    auto const paths = ref::all_paths(n, m);
    for (auto const& p : paths) best = std::min(best, ref::path_cost(p, x.data(), y.data(), 1));
    int tied = 0;
    for (auto const& p : paths) {
      if (ref::path_cost(p, x.data(), y.data(), 1) != best) continue;
      ++tied;
      std::vector<double> g(lo.size(), 0.0);
      for (auto const& [i, j] : p) {
        double const d = 2 * (x[static_cast<std::size_t>(i)] - y[static_cast<std::size_t>(j)]);
        g[static_cast<std::size_t>(i)] += d;
        g[x.size() + static_cast<std::size_t>(j)] -= d;
      }
      for (std::size_t k = 0; k < g.size(); ++k) {
        lo[k] = std::min(lo[k], g[k]);
        hi[k] = std::max(hi[k], g[k]);
      }
    }
    REQUIRE(tied > 1);
    sharp_out const o = sharp_of(r::measures::soft_dtw<double>(gamma), x, y, 1);
    CHECK(o.value == Approx(best).epsilon(1e-15));
    auto const g = joined(o.gx, o.gy);
    double const slack = 1e-9 * std::max(1.0, *std::max_element(hi.begin(), hi.end()));
    for (std::size_t k = 0; k < g.size(); ++k) {
      CAPTURE(k, g[k], lo[k], hi[k]);
      CHECK(g[k] >= lo[k] - slack);
      CHECK(g[k] <= hi[k] + slack);
    }
  };
  std::vector<double> const x{3, 1, 0, 3, 0, 0}, y{0, 0, 3};
  for (double gamma : {1e-16, 1e-20, 1e-100}) check(x, y, gamma);
  // large magnitudes tie the same way at a moderate gamma (rounding of R' near 1e-3 there)
  std::vector<double> xs(x), ys(y);
  for (double& v : xs) v *= 1e6;
  for (double& v : ys) v *= 1e6;
  check(xs, ys, 1e-3);
}

TEST_CASE("sharp: every soft cost model against the move occupancies", "[sharp]") {
  std::uint64_t seed = 300;
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{9, 7}, {6, 11}, {12, 12}, {1, 5}}) {
    CAPTURE(n, m);
    auto const x = random_values(static_cast<std::size_t>(n), ++seed, -1, 1);
    auto const y = random_values(static_cast<std::size_t>(m), ++seed, -1, 1);
    auto const check = [&](auto const& meas, double gamma, double step) {
      double const expected = sharp_from_occupancy(meas, x, y);
      check_against(meas, x, y, 1, expected,
                    [&](std::vector<double> const& a, std::vector<double> const& b) { return sharp_from_occupancy(meas, a, b); },
                    1e-10, 1e-6, step);
      // S = sharp - gamma H
      double const h = r::alignment_entropy(meas, r::view(x), r::view(y));
      CHECK(h >= 0.0);
      CHECK(r::value(meas, r::view(x), r::view(y)) == Approx(expected - gamma * h).epsilon(1e-11).margin(1e-12));
    };
    SECTION("soft-DTW, L1 point cost, band") {
      check(r::measures::soft_dtw<double, r::l1_distance>(0.5, r::band_spec::radius(3)), 0.5, 1e-5);
    }
    SECTION("soft-MSM") {  // the gate is stiff: a smaller step for central differences
      check(r::measures::soft_msm<double>(0.7, 0.5), 0.7, 1e-6);
    }
    SECTION("soft-DTW with a warp penalty") { check(r::with_warp_penalty(r::measures::soft_dtw<double>(0.4), 0.3), 0.4, 1e-5); }
    SECTION("soft grid CDTW, window") { check(r::measures::soft_cdtw<double>(0.05, r::band_spec::window(0.3)), 0.05, 1e-5); }
  }
}

TEST_CASE("sharp: hard measures give the hard value and gradient, and no entropy", "[sharp]") {
  for (auto const& [x, y] : resilin_test::hard_pairs()) {
    CAPTURE(x, y);
    auto const check = [&](auto const& meas) {
      std::vector<double> gx(x.size()), gy(y.size()), hx(x.size()), hy(y.size());
      double const v = r::value_and_grad(meas, r::view(x), r::view(y), r::view(gx), r::view(gy));
      CHECK(r::sharp_value(meas, r::view(x), r::view(y)) == Approx(v).epsilon(1e-14));
      CHECK(r::sharp_value_and_grad(meas, r::view(x), r::view(y), r::view(hx), r::view(hy)) == Approx(v).epsilon(1e-14));
      CHECK(max_rel_diff(joined(hx, hy), joined(gx, gy)) <= 1e-12);
      CHECK(r::alignment_entropy(meas, r::view(x), r::view(y)) == 0.0);
    };
    check(r::measures::dtw(r::band_spec::radius(4)));
    check(r::measures::dtw());
    check(r::measures::msm(0.5));
    check(r::measures::cdtw());
  }
}

TEST_CASE("sharp: divergences and independent channels", "[sharp]") {
  r::index_t const n = 10, m = 8, d = 3;
  auto const x = random_values(static_cast<std::size_t>(n * d), 31, -1, 1);
  auto const y = random_values(static_cast<std::size_t>(m * d), 32, -1, 1);
  SECTION("the sharp divergence: zero on the diagonal, its gradient by central differences") {
    auto const meas = r::measures::soft_dtw_divergence<double>(0.5, r::band_spec::radius(3));
    auto const plain = r::measures::soft_dtw<double>(0.5, r::band_spec::radius(3));
    auto const s = [&](std::vector<double> const& a, std::vector<double> const& b) { return sharp_only(plain, a, b, d); };
    double const expected = s(x, y) - (0.5 * s(x, x) + 0.5 * s(y, y));
    check_against(meas, x, y, d, expected,
                  [&](std::vector<double> const& a, std::vector<double> const& b) { return sharp_only(meas, a, b, d); },
                  1e-12, 1e-6);
    CHECK(sharp_only(meas, x, x, d) == 0.0);
    CHECK(sharp_only(meas, y, x, d) == Approx(expected).epsilon(1e-12));
  }
  SECTION("soft-MSM: the sum over channels, divergence included") {
    for (auto const& meas : {r::measures::soft_msm<double>(0.5, 0.3), r::measures::soft_msm_divergence<double>(0.5, 0.3)}) {
      CAPTURE(meas.divergence);
      sharp_out const all = sharp_of(meas, x, y, d);
      double sum = 0, entropy = 0;
      for (r::index_t c = 0; c < d; ++c) {
        CAPTURE(c);
        std::vector<double> xc, yc;
        for (r::index_t i = 0; i < n; ++i) xc.push_back(x[static_cast<std::size_t>(i * d + c)]);
        for (r::index_t j = 0; j < m; ++j) yc.push_back(y[static_cast<std::size_t>(j * d + c)]);
        sharp_out const one = sharp_of(meas, xc, yc, 1);
        sum += one.value;
        if (!meas.divergence) entropy += r::alignment_entropy(meas, r::view(xc), r::view(yc));
        for (r::index_t i = 0; i < n; ++i) CHECK(all.gx[static_cast<std::size_t>(i * d + c)] == one.gx[static_cast<std::size_t>(i)]);
        for (r::index_t j = 0; j < m; ++j) CHECK(all.gy[static_cast<std::size_t>(j * d + c)] == one.gy[static_cast<std::size_t>(j)]);
      }
      CHECK(all.value == Approx(sum).epsilon(1e-14));
      CHECK(sharp_only(meas, x, y, d) == Approx(sum).epsilon(1e-12));
      if (!meas.divergence)
        CHECK(r::alignment_entropy(meas, r::series_view<double const>{x.data(), n, d},
                                   r::series_view<double const>{y.data(), m, d}) == Approx(entropy).epsilon(1e-14));
    }
  }
  SECTION("y = x with one gradient buffer gets d sharp(x, x) / dx") {
    auto const meas = r::measures::soft_dtw<double>(0.5);
    std::vector<double> g(static_cast<std::size_t>(n * d), 3.0);
    r::series_view<double const> const xs{x.data(), n, d};
    r::series_view<double> const gs{g.data(), n, d};
    r::sharp_value_and_grad(meas, xs, xs, gs, gs);
    auto const fd = central_differences([&](std::vector<double> const& p) { return sharp_only(meas, p, p, d); }, x);
    CHECK(max_rel_diff(g, fd) <= 1e-6);
  }
}

TEST_CASE("sharp: the value alone, transposed or not, has the bits of the pass", "[sharp]") {
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{40, 25}, {25, 40}, {1, 30}, {30, 1}}) {
    CAPTURE(n, m);
    auto const x = random_values(static_cast<std::size_t>(n), 41, -1, 1), y = random_values(static_cast<std::size_t>(m), 42, -1, 1);
    for (auto const& meas : {r::measures::soft_msm<double>(0.3, 0.4), r::measures::soft_msm<double>(0.3, 0.4, r::band_spec::window(0.1))}) {
      sharp_out const o = sharp_of(meas, x, y, 1);
      double const v = sharp_only(meas, x, y, 1);
      CHECK(resilin_test::bits_equal(v, o.value));  // both run along the longer series
    }
  }
}

TEST_CASE("sharp: long pairs in float stay finite and near double", "[sharp]") {
  r::index_t const n = 3000, m = 2500;
  auto const x = random_values(n, 51, -1, 1), y = random_values(m, 52, -1, 1);
  auto const xf = resilin_test::cast<float>(x), yf = resilin_test::cast<float>(y);
  auto const meas = r::measures::soft_dtw<double>(0.01, r::band_spec::radius(40));
  auto const measf = r::measures::soft_dtw<float>(0.01f, r::band_spec::radius(40));
  std::vector<float> gx(n), gy(m);
  float const vf = r::sharp_value_and_grad(measf, r::view(xf), r::view(yf), r::view(gx), r::view(gy));
  double const vd = r::sharp_value(meas, r::view(x), r::view(y));
  CHECK(std::isfinite(vf));
  CHECK(vf == Approx(vd).epsilon(1e-3));
  bool finite = true;
  for (float g : gx) finite = finite && std::isfinite(g);
  for (float g : gy) finite = finite && std::isfinite(g);
  CHECK(finite);
  CHECK(r::alignment_entropy(measf, r::view(xf), r::view(yf)) >= 0.0f);
}

TEST_CASE("sharp_values, sharp_values_and_grads: a ragged batch equals its pairs, any threads", "[sharp]") {
  resilin_test::ragged<double> const xs(9, 20, 2, 61), ys(9, 17, 2, 62);
  auto const X = xs.view(), Y = ys.view();
  auto const meas = r::measures::soft_dtw_divergence<double>(0.2, r::band_spec::window(0.5));
  resilin_test::check_batch_equals_pairs(
      xs, ys,
      [&](r::host_backend exec, std::span<double> out, r::batch_view<double> gx, r::batch_view<double> gy,
          std::span<double const> up) { r::sharp_values_and_grads(exec, meas, X, Y, out, gx, gy, up); },
      [&](r::index_t b, r::series_view<double> gx, r::series_view<double> gy) {
        return r::sharp_value_and_grad(meas, X[b], Y[b], gx, gy);
      });
  std::vector<double> values(9);
  r::sharp_values(r::host, meas, X, Y, std::span<double>(values));
  for (r::index_t b = 0; b < 9; ++b)
    CHECK(resilin_test::bits_equal(values[static_cast<std::size_t>(b)], r::sharp_value(meas, X[b], Y[b])));
  std::vector<double> gx(xs.data.size()), gy(ys.data.size());
  CHECK(message_of<r::invalid_argument>([&] {
          r::sharp_values_and_grads(r::host, meas, X, Y, std::span<double>(values).first(8),
                                    r::make_batch(gx, 9, 20, 2, xs.lengths), r::make_batch(gy, 9, 17, 2, ys.lengths));
        }) == "out has 8 entries, expected batch = 9");
}

TEST_CASE("pairwise_grads, sharp_pairwise_grads: each row the weighted sum of its pairs' gradients", "[sharp]") {
  // a divergence's self terms come once per series (S(x, x)'s gradient seeded with the row's
  // summed weights): the values keep the pairs' bits, the gradients their sums to rounding
  resilin_test::ragged<double> const xs(4, 12, 2, 71), ys(3, 15, 2, 72);
  auto const X = xs.view(), Y = ys.view();
  std::vector<double> w(12);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = 0.25 + 0.5 * double(k % 5) - (k == 7 ? 3.0 : 0.0);
  r::matrix_view<double const> const weights{w.data(), 4, 3};
  // GX[a] against sum_b w(a, b) g(X[a], Y[b]) one pair at a time, out against the pair's value;
  // padding exactly 0; one thread or three, the same bits
  auto const check = [&](auto const& meas, auto const& rows, auto const& pair, char const* name) {
    INFO(name);
    std::vector<double> gx(xs.data.size(), 7.0), out(12, 7.0), gx3(xs.data.size()), out3(12);
    rows(r::host.with_threads(1), meas, r::make_batch(gx, 4, 12, 2, xs.lengths), r::matrix_view<double>{out.data(), 4, 3}, weights);
    rows(r::host.with_threads(3), meas, r::make_batch(gx3, 4, 12, 2, xs.lengths), r::matrix_view<double>{out3.data(), 4, 3}, weights);
    CHECK(gx == gx3);
    CHECK(out == out3);
    for (r::index_t a = 0; a < 4; ++a) {
      std::vector<double> sum(static_cast<std::size_t>(X.length(a) * 2), 0.0);
      for (r::index_t b = 0; b < 3; ++b) {
        std::vector<double> ga(sum.size()), gb(static_cast<std::size_t>(Y.length(b) * 2));
        r::series_view<double> const gav{ga.data(), X.length(a), 2}, gbv{gb.data(), Y.length(b), 2};
        double const v = pair(meas, X[a], Y[b], gav, gbv);
        CHECK(resilin_test::bits_equal(out[static_cast<std::size_t>(a * 3 + b)], v));
        for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += w[static_cast<std::size_t>(a * 3 + b)] * ga[k];
      }
      std::vector<double> const got(gx.begin() + a * 24, gx.begin() + a * 24 + X.length(a) * 2);
      CHECK(max_rel_diff(got, sum) < 1e-12);
      for (r::index_t k = a * 24 + X.length(a) * 2; k < (a + 1) * 24; ++k) CHECK(gx[static_cast<std::size_t>(k)] == 0.0);
    }
  };
  auto const sharp_rows = [&](r::host_backend e, auto const& meas, r::batch_view<double> g, r::matrix_view<double> o,
                              r::matrix_view<double const> wv) { r::sharp_pairwise_grads(e, meas, X, Y, g, o, wv); };
  auto const sharp_pair = [](auto const& meas, auto x, auto y, auto gxv, auto gyv) {
    return r::sharp_value_and_grad(meas, x, y, gxv, gyv);
  };
  auto const value_rows = [&](r::host_backend e, auto const& meas, r::batch_view<double> g, r::matrix_view<double> o,
                              r::matrix_view<double const> wv) { r::pairwise_grads(e, meas, X, Y, g, o, wv); };
  auto const value_pair = [](auto const& meas, auto x, auto y, auto gxv, auto gyv) {
    return r::value_and_grad(meas, x, y, gxv, gyv);
  };
  check(r::measures::soft_dtw<double>(0.3, r::band_spec::window(0.6)), sharp_rows, sharp_pair, "sharp soft-DTW, window");
  check(r::measures::soft_dtw_divergence<double>(0.3), sharp_rows, sharp_pair, "sharp soft-DTW divergence");
  check(r::measures::soft_msm_divergence<double>(0.4, 0.5), sharp_rows, sharp_pair, "sharp soft-MSM divergence");
  check(r::measures::soft_dtw_divergence<double>(0.3), value_rows, value_pair, "soft-DTW divergence");
  check(r::measures::soft_msm<double>(0.4, 0.5), value_rows, value_pair, "soft-MSM");
  check(r::measures::soft_msm_divergence<double>(0.4, 0.5), value_rows, value_pair,
        "soft-MSM divergence (independent channels)");
  check(r::measures::soft_dtw_divergence<double>(0.3, r::band_spec::radius(2)),
        value_rows, value_pair, "soft-DTW divergence, radius 2");

  // without weights: the plain sum, the same as weights of ones; without out
  auto const meas = r::measures::soft_dtw<double>(0.3);
  std::vector<double> ones(12, 1.0), g1(xs.data.size()), g2(xs.data.size());
  r::sharp_pairwise_grads(r::host, meas, X, Y, r::make_batch(g1, 4, 12, 2, xs.lengths));
  r::sharp_pairwise_grads(r::host, meas, X, Y, r::make_batch(g2, 4, 12, 2, xs.lengths), {},
                          r::matrix_view<double const>{ones.data(), 4, 3});
  CHECK(g1 == g2);
  // mutable weights are taken as they are (they did not convert to the read-only view)
  std::vector<double> g3(xs.data.size()), g4(xs.data.size());
  r::sharp_pairwise_grads(r::host, meas, X, Y, r::make_batch(g3, 4, 12, 2, xs.lengths), {},
                          r::matrix_view<double>{ones.data(), 4, 3});
  CHECK(g3 == g2);
  r::pairwise_grads(r::host, meas, X, Y, r::make_batch(g3, 4, 12, 2, xs.lengths), {}, r::matrix_view<double>{w.data(), 4, 3});
  r::pairwise_grads(r::host, meas, X, Y, r::make_batch(g4, 4, 12, 2, xs.lengths), {}, weights);
  CHECK(g3 == g4);

  // weights near the largest finite value: the row's summed seed, or its cross terms' sum,
  // overflow where the pairs' interleaving cancels (D(x, y) with y = x: a zero gradient)
  for (bool sharp_value : {false, true}) {
    CAPTURE(sharp_value);
    std::vector<double> const x{0.1, 0.5, -0.3, 0.2}, yy{0.1, 0.5, -0.3, 0.2, 0.1, 0.5, -0.3, 0.2};
    std::vector<double> big{1e308, 1e308}, g(4, 7.0), v(2);
    auto const div = r::measures::soft_dtw_divergence<double>(1.0);
    auto const Xb = r::make_batch(std::span<double const>(x), 1, 4), Yb = r::make_batch(std::span<double const>(yy), 2, 4);
    r::matrix_view<double> const vo{v.data(), 1, 2};
    r::matrix_view<double const> const wo{big.data(), 1, 2};
    if (sharp_value) r::sharp_pairwise_grads(r::host, div, Xb, Yb, r::make_batch(g, 1, 4), vo, wo);
    else r::pairwise_grads(r::host, div, Xb, Yb, r::make_batch(g, 1, 4), vo, wo);
    for (double e : g) CHECK(std::isfinite(e));
    CHECK(resilin_test::max_abs_diff(g, std::vector<double>(4, 0.0)) < 1e300);
    CHECK(v[0] == 0.0);
  }

  std::vector<double> gx(xs.data.size());
  w[5] = std::numeric_limits<double>::quiet_NaN();
  CHECK(message_of<r::invalid_argument>([&] {
          r::sharp_pairwise_grads(r::host, meas, X, Y, r::make_batch(gx, 4, 12, 2, xs.lengths), {}, weights);
        }).find("weights(1, 2) is not finite") == 0);
  CHECK(message_of<r::invalid_argument>([&] {
          r::sharp_pairwise_grads(r::host, meas, X, Y, r::make_batch(gx, 4, 12, 2, xs.lengths),
                                  r::matrix_view<double>{gx.data(), 3, 4});
        }) == "out must be (4, 3), got (3, 4)");
  CHECK(message_of<r::invalid_argument>([&] {
          r::sharp_pairwise_grads(r::host, r::measures::soft_dtw<double>(-1.0), X, Y, r::make_batch(gx, 4, 12, 2, xs.lengths));
        }).find("gamma must be > 0") == 0);
}

TEST_CASE("sharp: refusals", "[sharp]") {
  using r::invalid_argument;
  std::vector<double> x{0, 1, 2, 1}, y{0, 2, 1}, gx(4), gy(3);
  auto const meas = r::measures::soft_dtw<double>(1.0);
  CHECK(message_of<invalid_argument>([&] {
          r::alignment_entropy(r::measures::soft_dtw_divergence<double>(1.0), r::view(x), r::view(y));
        }) == "alignment_entropy: a divergence has no single alignment");
  CHECK(message_of<invalid_argument>([&] {
          r::sharp_value_and_grad(meas, r::view(x), r::view(y), r::series_view<double>{gx.data(), 3, 1}, r::view(gy));
        }) == "gx must have the shape of x (4, 1), got (3, 1)");
  CHECK(message_of<invalid_argument>([&] {
          r::sharp_value_and_grad(meas, r::view(x), r::view(y), r::view(x), r::view(gy));
        }).find("gx overlaps") == 0);
  CHECK(message_of<invalid_argument>([&] {
          r::sharp_value(r::measures::soft_dtw<double>(0.0), r::view(x), r::view(y));
        }).find("gamma must be > 0") == 0);
  std::vector<double> values(2);
  CHECK(message_of<invalid_argument>([&] {
          r::sharp_values(r::host, meas, r::make_batch(x, 2, 2), r::make_batch(y, 1, 3), std::span<double>(values));
        }) == "X and Y must hold as many series, got 2 and 1");
}

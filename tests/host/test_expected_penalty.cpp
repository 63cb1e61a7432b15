// expected_penalty: L = sum_ij E(i, j) Omega(i, j) and its gradient (the second-order pass).
// References: the enumeration of every alignment path (L as the Gibbs expectation of the path's
// penalty, its gradient by central differences of that expectation), alignment_matrix (the
// strip engine's E, an independent computation of L) with central differences for the other
// cost models, the hard path for hard_min, and the documented refusals.
#include <array>
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

/// L by enumeration: sum over paths of softmax(-cost / gamma) times the path's summed penalty.
double enumerated_penalty(std::vector<double> const& x, std::vector<double> const& y, r::index_t n,
                          r::index_t m, r::index_t d, double gamma, std::vector<double> const& omega,
                          ref::mask const* band) {
  auto const paths = ref::all_paths(n, m, band);
  std::vector<double> costs;
  double lo = std::numeric_limits<double>::infinity();
  for (auto const& p : paths) {
    costs.push_back(ref::path_cost(p, x.data(), y.data(), d));
    lo = std::min(lo, costs.back());
  }
  double z = 0, l = 0;
  for (std::size_t k = 0; k < paths.size(); ++k) {
    double const w = std::exp(-(costs[k] - lo) / gamma);
    double pen = 0;
    for (auto const& c : paths[k]) pen += omega[static_cast<std::size_t>(c[0] * m + c[1])];
    z += w;
    l += w * pen;
  }
  return l / z;
}

/// L and its exact gradient with respect to (x, y) by enumeration, in long double: with the Gibbs
/// weights pi_p of the paths, dL/dtheta = -(1/gamma) Cov_pi(Omega(p), dC(p)/dtheta) (squared
/// Euclidean point cost), which needs no finite differences at extreme gammas.
std::pair<double, std::vector<double>> enumerated_penalty_and_gradient(
    std::vector<double> const& x, std::vector<double> const& y, r::index_t n, r::index_t m,
    r::index_t d, double gamma, std::vector<double> const& omega) {
  using L = long double;
  auto const paths = ref::all_paths(n, m);
  std::size_t const dims = static_cast<std::size_t>((n + m) * d);
  std::vector<L> cost, pen;
  std::vector<std::vector<L>> dcost;
  L lo = std::numeric_limits<L>::infinity();
  for (auto const& p : paths) {
    L c = 0, o = 0;
    std::vector<L> g(dims, 0);
    for (auto const& cell : p) {
      o += omega[static_cast<std::size_t>(cell[0] * m + cell[1])];
      for (r::index_t k = 0; k < d; ++k) {
        L const diff = L(x[static_cast<std::size_t>(cell[0] * d + k)]) - L(y[static_cast<std::size_t>(cell[1] * d + k)]);
        c += diff * diff;
        g[static_cast<std::size_t>(cell[0] * d + k)] += 2 * diff;
        g[static_cast<std::size_t>((n + cell[1]) * d + k)] -= 2 * diff;
      }
    }
    cost.push_back(c);
    pen.push_back(o);
    dcost.push_back(g);
    lo = std::min(lo, c);
  }
  L z = 0, mean_pen = 0;
  std::vector<L> pi(paths.size()), mean_d(dims, 0);
  for (std::size_t k = 0; k < paths.size(); ++k) z += (pi[k] = std::exp(-(cost[k] - lo) / L(gamma)));
  for (std::size_t k = 0; k < paths.size(); ++k) {
    pi[k] /= z;
    mean_pen += pi[k] * pen[k];
    for (std::size_t t = 0; t < dims; ++t) mean_d[t] += pi[k] * dcost[k][t];
  }
  std::vector<double> grad(dims);
  for (std::size_t t = 0; t < dims; ++t) {
    L cov = 0;
    for (std::size_t k = 0; k < paths.size(); ++k) cov += pi[k] * (pen[k] - mean_pen) * (dcost[k][t] - mean_d[t]);
    grad[t] = static_cast<double>(-cov / L(gamma));
  }
  return {static_cast<double>(mean_pen), grad};
}

/// L from alignment_matrix: the strip engine's E dotted with omega.
template <class M>
double penalty_from_matrix(M const& meas, std::vector<double> const& x, std::vector<double> const& y,
                           r::index_t d, std::vector<double> const& omega) {
  r::index_t const n = static_cast<r::index_t>(x.size()) / d, m = static_cast<r::index_t>(y.size()) / d;
  std::vector<double> e(static_cast<std::size_t>(n * m));
  r::alignment_matrix(meas, r::series_view<double const>{x.data(), n, d},
                      r::series_view<double const>{y.data(), m, d}, r::matrix_view<double>{e.data(), n, m});
  double l = 0;
  for (std::size_t k = 0; k < e.size(); ++k) l += e[k] * omega[k];
  return l;
}

struct penalty_out {
  double penalty = 0, value = 0;
  std::vector<double> gx, gy;
};

template <class M>
penalty_out penalty_of(M const& meas, std::vector<double> const& x, std::vector<double> const& y,
                       r::index_t d, std::vector<double> const& omega) {
  r::index_t const n = static_cast<r::index_t>(x.size()) / d, m = static_cast<r::index_t>(y.size()) / d;
  penalty_out o;
  o.gx.assign(x.size(), 7.0);  // overwritten
  o.gy.assign(y.size(), 7.0);
  o.penalty = r::expected_penalty(meas, r::series_view<double const>{x.data(), n, d},
                                  r::series_view<double const>{y.data(), m, d},
                                  r::matrix_view<double const>{omega.data(), n, m},
                                  r::series_view<double>{o.gx.data(), n, d},
                                  r::series_view<double>{o.gy.data(), m, d}, &o.value);
  return o;
}

/// Concatenated (x, y) as one point for central_differences.
std::vector<double> joined(std::vector<double> const& a, std::vector<double> const& b) {
  std::vector<double> p(a);
  p.insert(p.end(), b.begin(), b.end());
  return p;
}

/// Checks L and its gradient against an independent L(x, y) (and central differences of it).
template <class M>
void check_against(M const& meas, std::vector<double> const& x, std::vector<double> const& y,
                   r::index_t d, std::vector<double> const& omega,
                   std::function<double(std::vector<double> const&, std::vector<double> const&)> const& l_of,
                   double value_tol, double grad_tol, double fd_step = 1e-5) {
  penalty_out const o = penalty_of(meas, x, y, d, omega);
  double const expected = l_of(x, y);
  CHECK(std::abs(o.penalty - expected) <= value_tol * std::max(1.0, std::abs(expected)));
  auto const fd = central_differences(
      [&](std::vector<double> const& p) {
        return l_of(std::vector<double>(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(x.size())),
                    std::vector<double>(p.begin() + static_cast<std::ptrdiff_t>(x.size()), p.end()));
      },
      joined(x, y), fd_step);
  CHECK(max_rel_diff(joined(o.gx, o.gy), fd) <= grad_tol);
}

}  // namespace

TEST_CASE("expected_penalty: soft-DTW against the enumeration of every path", "[penalty]") {
  std::uint64_t seed = 40;
  resilin_test::for_each_small_problem(seed, [&](double gamma, r::index_t n, r::index_t m, r::index_t d,
                                                 r::band_spec band, std::vector<double> const& x,
                                                 std::vector<double> const& y) {
    auto const omega = random_values(static_cast<std::size_t>(n * m), ++seed, 0.0, 2.0);
    ref::mask const mask = resilin_test::band_mask(band, n, m);
    check_against(
        r::measures::soft_dtw<double>(gamma, band), x, y, d, omega,
        [&](std::vector<double> const& a, std::vector<double> const& b) {
          return enumerated_penalty(a, b, n, m, d, gamma, omega, &mask);
        },
        1e-12, 1e-6);
  });
}

TEST_CASE("expected_penalty: extreme gammas against the exact enumerated gradient", "[penalty]") {
  std::uint64_t seed = 500;
  for (double gamma : {1e-4, 1e-2, 1e4})
    for (auto [n, m] : {std::pair<r::index_t, r::index_t>{1, 4}, {4, 1}, {5, 4}, {4, 4}}) {
      CAPTURE(gamma, n, m);
      auto const x = random_values(static_cast<std::size_t>(n), ++seed, -1, 1);
      auto const y = random_values(static_cast<std::size_t>(m), ++seed, -1, 1);
      auto const omega = random_values(static_cast<std::size_t>(n * m), ++seed, 0.0, 2.0);
      penalty_out const o = penalty_of(r::measures::soft_dtw<double>(gamma), x, y, 1, omega);
      auto const [l, grad] = enumerated_penalty_and_gradient(x, y, n, m, 1, gamma, omega);
      CHECK(std::abs(o.penalty - l) <= 1e-12 * std::max(1.0, std::abs(l)));
      double scale = 1;
      for (double g : grad) scale = std::max(scale, std::abs(g));
      CHECK(resilin_test::max_abs_diff(joined(o.gx, o.gy), grad) <= 1e-10 * scale);
    }
}

TEST_CASE("expected_penalty: y = x with one gradient buffer gets dL(x, x)/dx", "[penalty]") {
  r::index_t const n = 9;
  auto const x = random_values(n, 91, -1, 1);
  auto const omega = random_values(static_cast<std::size_t>(n * n), 92, 0.0, 1.0);
  auto const meas = r::measures::soft_dtw<double>(0.5);
  std::vector<double> g(n, 3.0), g2(n, 3.0);
  r::matrix_view<double const> const om{omega.data(), n, n};
  double const l = r::expected_penalty(meas, r::view(x), r::view(x), om, r::view(g), r::view(g));
  double const l2 = r::expected_penalty(
      meas, r::view(x), r::view(x), [&](r::index_t i, r::index_t j) { return om(i, j); }, r::view(g2), r::view(g2));
  CHECK(resilin_test::bits_equal(l, l2));
  CHECK(resilin_test::bitwise_equal(g, g2));
  CHECK(l == Approx(penalty_from_matrix(meas, x, x, 1, omega)).epsilon(1e-12));
  auto const fd = central_differences([&](std::vector<double> const& p) { return penalty_from_matrix(meas, p, p, 1, omega); },
                                      x, 1e-5);
  CHECK(max_rel_diff(g, fd) <= 1e-6);
}

TEST_CASE("expected_penalty: every soft cost model against alignment_matrix", "[penalty]") {
  std::uint64_t seed = 900;
  for (auto [n, m] : {std::pair<r::index_t, r::index_t>{9, 7}, {6, 11}, {12, 12}}) {
    CAPTURE(n, m);
    auto const x = random_values(static_cast<std::size_t>(n), ++seed, -1, 1);
    auto const y = random_values(static_cast<std::size_t>(m), ++seed, -1, 1);
    auto const omega = random_values(static_cast<std::size_t>(n * m), ++seed, -1.0, 1.0);
    auto const via_matrix = [&](auto const& meas) {
      return [&, meas](std::vector<double> const& a, std::vector<double> const& b) {
        return penalty_from_matrix(meas, a, b, 1, omega);
      };
    };
    SECTION("soft-DTW, L1 point cost, band") {
      auto const meas = r::measures::soft_dtw<double, r::l1_distance>(0.5, r::band_spec::radius(3));
      check_against(meas, x, y, 1, omega, via_matrix(meas), 1e-10, 1e-6);
    }
    SECTION("soft-MSM") {
      auto const meas = r::measures::soft_msm<double>(0.7, 0.5);
      // the gate is stiff: central differences' h^2 term is 4e-6 relative at h = 1e-5
      check_against(meas, x, y, 1, omega, via_matrix(meas), 1e-10, 1e-6, 1e-6);
    }
    SECTION("soft-DTW with a warp penalty") {
      auto const meas = r::with_warp_penalty(r::measures::soft_dtw<double>(0.4), 0.3);
      check_against(meas, x, y, 1, omega, via_matrix(meas), 1e-10, 1e-6);
    }
    SECTION("soft grid CDTW") {
      auto const meas = r::measures::soft_cdtw<double>(0.05);
      check_against(meas, x, y, 1, omega, via_matrix(meas), 1e-10, 1e-6);
    }
  }
  SECTION("soft-DTW, 3 channels, 40 x 30, window") {
    auto const x = random_values(120, 7, -1, 1), y = random_values(90, 8, -1, 1);
    auto const omega = random_values(40 * 30, 9, 0.0, 1.0);
    auto const meas = r::measures::soft_dtw<double>(0.3, r::band_spec::window(0.2));
    check_against(meas, x, y, 3, omega,
                  [&](std::vector<double> const& a, std::vector<double> const& b) {
                    return penalty_from_matrix(meas, a, b, 3, omega);
                  },
                  1e-10, 1e-6);
  }
}

TEST_CASE("expected_penalty: hard measures give the path's penalty and a zero gradient",
          "[penalty]") {
  for (auto const& [x, y] : resilin_test::hard_pairs()) {  // ties follow alignment_path's
    CAPTURE(x, y);
    std::size_t const m = y.size();
    auto const omega = random_values(x.size() * m, 5, 0.0, 1.0);
    auto const check = [&](auto const& meas) {
      double value = 0;
      auto const path = r::alignment_path(meas, r::view(x), r::view(y), &value);
      double along = 0;
      for (auto const& c : path) along += omega[static_cast<std::size_t>(c[0]) * m + static_cast<std::size_t>(c[1])];
      penalty_out const o = penalty_of(meas, x, y, 1, omega);
      CHECK(o.penalty == Approx(along).epsilon(1e-13));
      CHECK(o.value == Approx(value).epsilon(1e-13));
      for (double g : o.gx) CHECK(g == 0.0);
      for (double g : o.gy) CHECK(g == 0.0);
    };
    check(r::measures::dtw());
    check(r::measures::hard_soft_msm<double>(0.5));
  }
}

TEST_CASE("expected_penalty: DILATE's temporal term, callable and matrix omega, float",
          "[penalty]") {
  r::index_t const n = 24, m = 24;
  auto const x = random_values(n, 11, -1, 1), y = random_values(m, 12, -1, 1);
  // DILATE's Omega(i, j) = (i - j)^2 / n^2
  auto const tdi = [&](r::index_t i, r::index_t j) { return double((i - j) * (i - j)) / double(n * n); };
  std::vector<double> omega(static_cast<std::size_t>(n * m));
  for (r::index_t i = 0; i < n; ++i)
    for (r::index_t j = 0; j < m; ++j) omega[static_cast<std::size_t>(i * m + j)] = tdi(i, j);
  auto const meas = r::measures::soft_dtw<double>(0.1);
  penalty_out const o = penalty_of(meas, x, y, 1, omega);
  std::vector<double> gx(n), gy(m);
  double value = 0;
  double const l = r::expected_penalty(meas, r::view(x), r::view(y), tdi, r::view(gx), r::view(gy), &value);
  CHECK(resilin_test::bits_equal(l, o.penalty));
  CHECK(resilin_test::bitwise_equal(gx, o.gx));
  CHECK(resilin_test::bitwise_equal(gy, o.gy));
  CHECK(resilin_test::bits_equal(value, o.value));
  CHECK(value == Approx(r::value(meas, r::view(x), r::view(y))).epsilon(1e-12));
  CHECK(l > 0);
  // float: the same to float's precision
  auto const xf = resilin_test::cast<float>(x), yf = resilin_test::cast<float>(y);
  std::vector<float> gxf(n), gyf(m);
  float const lf = r::expected_penalty(r::measures::soft_dtw<float>(0.1f), r::view(xf), r::view(yf),
                                       tdi, r::view(gxf), r::view(gyf));
  CHECK(lf == Approx(l).epsilon(1e-4));
  CHECK(max_rel_diff(gxf, o.gx) <= 1e-3);
  CHECK(max_rel_diff(gyf, o.gy) <= 1e-3);
}

TEST_CASE("expected_penalty: refusals", "[penalty]") {
  using r::invalid_argument;
  std::vector<double> x{0, 1, 2, 1}, y{0, 2, 1}, gx(4), gy(3), omega(12, 1.0);
  auto const meas = r::measures::soft_dtw<double>(1.0);
  r::matrix_view<double const> const om{omega.data(), 4, 3};
  auto const call = [&](auto const& mm, auto const& o, r::series_view<double> a, r::series_view<double> b) {
    return message_of<invalid_argument>([&] { r::expected_penalty(mm, r::view(x), r::view(y), o, a, b); });
  };
  CHECK(call(meas, r::matrix_view<double const>{omega.data(), 3, 4}, r::view(gx), r::view(gy)) ==
        "omega must be (4, 3), got (3, 4)");
  CHECK(call(r::measures::soft_dtw_divergence<double>(1.0), om, r::view(gx), r::view(gy)) ==
        "expected_penalty: a divergence has no single alignment");
  CHECK(call(meas, om, r::series_view<double>{gx.data(), 3, 1}, r::view(gy)) ==
        "gx must have the shape of x (4, 1), got (3, 1)");
  CHECK(call(meas, om, r::series_view<double>{omega.data(), 4, 1}, r::view(gy)) ==
        "gx overlaps the input omega (outputs are written while the inputs are read: pass separate buffers)");
  CHECK(call(meas, r::matrix_view<double const>{nullptr, 4, 3}, r::view(gx), r::view(gy)) == "omega is null");
  double* const inside_gx = gx.data() + 1;
  CHECK(message_of<invalid_argument>([&] {
          r::expected_penalty(meas, r::view(x), r::view(y), om, r::view(gx), r::view(gy), inside_gx);
        }) == "value_out overlaps the input gx (outputs are written while the inputs are read: pass separate buffers)");
  omega[5] = std::numeric_limits<double>::quiet_NaN();  // cell (1, 2)
  CHECK(call(meas, om, r::view(gx), r::view(gy)) == "omega is not finite (nan) at cell (1, 2)");
  // outside the band a cell is not read: radius 0 on 4 x 3 keeps |2 i - 3 j| <= 3
  auto const banded = r::measures::soft_dtw<double>(1.0, r::band_spec::radius(0));
  omega[5] = 1.0;
  omega[2] = std::numeric_limits<double>::infinity();  // cell (0, 2)
  CHECK(call(banded, om, r::view(gx), r::view(gy)) == "<no exception>");
}

TEST_CASE("expected_penalties: a ragged batch equals its pairs, any threads", "[penalty]") {
  resilin_test::ragged<double> const xs(9, 20, 2, 61), ys(9, 17, 2, 62);
  auto const X = xs.view(), Y = ys.view();
  auto const meas = r::measures::soft_dtw<double>(0.2, r::band_spec::window(0.5));
  // a pair-dependent penalty: DILATE's on pair b's own lengths, scaled by b + 1
  auto const omega = [&](r::index_t b, r::index_t i, r::index_t j) {
    double const n = double(X.length(b));
    return double(b + 1) * double((i - j) * (i - j)) / (n * n);
  };
  resilin_test::check_batch_equals_pairs(
      xs, ys,
      [&](r::host_backend exec, std::span<double> out, r::batch_view<double> gx, r::batch_view<double> gy,
          std::span<double const> up) { r::expected_penalties(exec, meas, X, Y, omega, out, gx, gy, up); },
      [&](r::index_t b, r::series_view<double> gx, r::series_view<double> gy) {
        return r::expected_penalty(meas, X[b], Y[b], [&](r::index_t i, r::index_t j) { return omega(b, i, j); }, gx, gy);
      });
  // a non-finite penalty inside pair 4's band is refused before any work, naming the pair
  std::vector<double> out(9), gx(xs.data.size()), gy(ys.data.size());
  CHECK(message_of<r::invalid_argument>([&] {
          r::expected_penalties(r::host, meas, X, Y,
                                [&](r::index_t b, r::index_t i, r::index_t j) {
                                  return b == 4 && i == 0 && j == 0 ? std::nan("") : omega(b, i, j);
                                },
                                std::span<double>(out), r::make_batch(gx, 9, 20, 2, xs.lengths),
                                r::make_batch(gy, 9, 17, 2, ys.lengths));
        }) == "omega is not finite (nan) at pair 4, cell (0, 0)");
  CHECK(message_of<r::invalid_argument>([&] {
          r::expected_penalties(r::host, r::measures::soft_dtw_divergence<double>(1.0), X, Y, omega,
                                std::span<double>(out), r::make_batch(gx, 9, 20, 2, xs.lengths),
                                r::make_batch(gy, 9, 17, 2, ys.lengths));
        }) == "expected_penalties: a divergence has no single alignment");
  CHECK(message_of<r::invalid_argument>([&] {
          r::expected_penalties(r::host, meas, X, Y, omega, std::span<double>(out).first(8),
                                r::make_batch(gx, 9, 20, 2, xs.lengths), r::make_batch(gy, 9, 17, 2, ys.lengths));
        }) == "out has 8 entries, expected batch = 9");
}

TEST_CASE("expected_penalty: independent channels sum the channels' penalties", "[penalty]") {
  r::index_t const n = 10, m = 8, d = 3;
  auto const x = random_values(static_cast<std::size_t>(n * d), 71, -1, 1);
  auto const y = random_values(static_cast<std::size_t>(m * d), 72, -1, 1);
  auto const omega = random_values(static_cast<std::size_t>(n * m), 73, 0.0, 1.0);
  auto const meas = r::measures::soft_msm<double>(0.5, 0.3);
  penalty_out const all = penalty_of(meas, x, y, d, omega);
  CHECK(all.value == Approx(r::value(meas, r::series_view<double const>{x.data(), n, d},
                                     r::series_view<double const>{y.data(), m, d})).epsilon(1e-12));
  double sum = 0;
  for (r::index_t c = 0; c < d; ++c) {
    CAPTURE(c);
    std::vector<double> xc, yc;
    for (r::index_t i = 0; i < n; ++i) xc.push_back(x[static_cast<std::size_t>(i * d + c)]);
    for (r::index_t j = 0; j < m; ++j) yc.push_back(y[static_cast<std::size_t>(j * d + c)]);
    penalty_out const one = penalty_of(meas, xc, yc, 1, omega);
    sum += one.penalty;
    for (r::index_t i = 0; i < n; ++i) CHECK(all.gx[static_cast<std::size_t>(i * d + c)] == one.gx[static_cast<std::size_t>(i)]);
    for (r::index_t j = 0; j < m; ++j) CHECK(all.gy[static_cast<std::size_t>(j * d + c)] == one.gy[static_cast<std::size_t>(j)]);
  }
  CHECK(all.penalty == Approx(sum).epsilon(1e-14));
}

TEST_CASE("second-order pass: whole or in segments, weights kept or recomputed, the same bits",
          "[penalty][sharp][checkpoint]") {
  namespace rh = r::host_detail;
  // table_bytes = 0 cuts the rows into segments of ceil(sqrt(n)) rows (the last one shorter where
  // that does not divide n); keep_bytes = 0 recomputes the move weights in the backward
  std::vector<rh::tangent_limits> const limits{{rh::checkpoint_table_bytes, rh::kept_table_bytes},
                                               {rh::checkpoint_table_bytes, 0},
                                               {0, rh::kept_table_bytes},
                                               {0, 0}};
  struct result {
    double l = 0, s = 0;
    std::vector<double> gx, gy;
  };
  auto const check_all = [&](char const* what, r::index_t n, r::index_t m, auto const& run) {
    CAPTURE(what, n, m);
    std::vector<result> out;
    for (auto const& lim : limits) out.push_back(run(lim));
    CHECK(out[0].l != 0.0);
    CHECK(std::isfinite(out[0].s));
    for (std::size_t k = 1; k < out.size(); ++k) {
      CAPTURE(k);
      CHECK(resilin_test::bits_equal(out[0].l, out[k].l));
      CHECK(resilin_test::bits_equal(out[0].s, out[k].s));
      CHECK(resilin_test::bitwise_equal(out[0].gx, out[k].gx));
      CHECK(resilin_test::bitwise_equal(out[0].gy, out[k].gy));
    }
  };
  for (auto [n, m] : {std::array<r::index_t, 2>{30, 25}, {31, 40}, {17, 3}, {2, 9}, {1, 7}, {50, 50}}) {
    auto const x = random_values(n, 81 + n, -1, 1), y = random_values(m, 82 + m, -1, 1);
    auto const omega = random_values(static_cast<std::size_t>(n * m), 83, -1.0, 1.0);
    auto const read = [&, m = m](r::index_t i, r::index_t j) { return omega[static_cast<std::size_t>(i * m + j)]; };
    r::series_view<double const> const xv{x.data(), n, 1}, yv{y.data(), m, 1};
    auto const both = [&](char const* what, auto const& meas) {
      check_all(what, n, m, [&](rh::tangent_limits const& lim) {
        result o{0, 0, std::vector<double>(static_cast<std::size_t>(n)), std::vector<double>(static_cast<std::size_t>(m))};
        o.l = rh::expected_penalty(meas, xv, yv, read, r::view(o.gx), r::view(o.gy), 1.0, &o.s, lim);
        return o;
      });
      check_all(what, n, m, [&](rh::tangent_limits const& lim) {  // along the costs: sharp
        result o{0, 0, std::vector<double>(static_cast<std::size_t>(n)), std::vector<double>(static_cast<std::size_t>(m))};
        o.l = rh::tangent_pass(meas, xv, yv, rh::along_costs{}, r::view(o.gx), r::view(o.gy), 0.75, &o.s, lim);
        return o;
      });
    };
    both("soft-DTW, radius 6", r::measures::soft_dtw<double>(0.5, r::band_spec::radius(6)));
    both("soft-DTW, Itakura 1.5", r::measures::soft_dtw<double>(0.5, r::band_spec::itakura(1.5)));
    both("soft-MSM", r::measures::soft_msm<double>(0.5, 0.2));
    both("soft-CDTW, window 0.3", r::measures::soft_cdtw<double>(0.05, r::band_spec::window(0.3)));
  }
}

TEST_CASE("second-order pass: rows along the longer series, (x, y, omega) and (y, x, omega^T) the same bits",
          "[penalty][sharp][checkpoint]") {
  namespace rh = r::host_detail;
  // y longer: the pass runs the transposed problem, which is (y, x) with omega transposed, the
  // same cells in the same order (the same L and S; the gradients to rounding: a cost model's
  // step_grad may sum the moves' uses in another order); segments (table_bytes 0) cut the
  // longer series
  for (auto [n, m] : {std::array<r::index_t, 2>{25, 31}, {3, 17}, {1, 7}, {40, 41}}) {
    auto const x = random_values(static_cast<std::size_t>(2 * n), 91 + n, -1, 1);
    auto const y = random_values(static_cast<std::size_t>(2 * m), 92 + m, -1, 1);
    auto const omega = random_values(static_cast<std::size_t>(n * m), 93, -1.0, 1.0);
    auto const read = [&, m = m](r::index_t i, r::index_t j) { return omega[static_cast<std::size_t>(i * m + j)]; };
    auto const read_t = [&](r::index_t i, r::index_t j) { return read(j, i); };
    r::series_view<double const> const xv{x.data(), n, 2}, yv{y.data(), m, 2};
    auto const check = [&](char const* what, auto const& meas, rh::tangent_limits const& lim) {
      CAPTURE(what, n, m, lim.table_bytes);
      std::vector<double> gx(x.size()), gy(y.size()), hy(y.size()), hx(x.size());
      double s = 0, t = 0;
      double const l = rh::expected_penalty(meas, xv, yv, read, r::view(gx), r::view(gy), 1.0, &s, lim);
      double const k = rh::expected_penalty(meas, yv, xv, read_t, r::view(hy), r::view(hx), 1.0, &t, lim);
      CHECK(l != 0.0);
      CHECK(resilin_test::bits_equal(l, k));
      CHECK(resilin_test::bits_equal(s, t));
      CHECK(max_rel_diff(gx, hx) < 1e-13);
      CHECK(max_rel_diff(gy, hy) < 1e-13);
      std::fill(gx.begin(), gx.end(), 0.0);
      std::fill(gy.begin(), gy.end(), 0.0);
      std::fill(hx.begin(), hx.end(), 0.0);
      std::fill(hy.begin(), hy.end(), 0.0);
      double const a = rh::tangent_pass(meas, xv, yv, rh::along_costs{}, r::view(gx), r::view(gy), 0.5, &s, lim);
      double const b = rh::tangent_pass(meas, yv, xv, rh::along_costs{}, r::view(hy), r::view(hx), 0.5, &t, lim);
      CHECK(resilin_test::bits_equal(a, b));
      CHECK(max_rel_diff(gx, hx) < 1e-13);
      CHECK(max_rel_diff(gy, hy) < 1e-13);
    };
    for (auto const& lim : {rh::tangent_limits{}, rh::tangent_limits{0, 0}}) {
      check("soft-DTW, radius 4", r::measures::soft_dtw<double>(0.5, r::band_spec::radius(4)), lim);
      check("soft-DTW, Itakura 1.5", r::measures::soft_dtw<double>(0.5, r::band_spec::itakura(1.5)), lim);
      check("soft-MSM", r::measures::soft_msm<double>(0.5, 0.2), lim);
      check("soft-CDTW, window 0.3", r::measures::soft_cdtw<double>(0.05, r::band_spec::window(0.3)), lim);
    }
  }
}

TEST_CASE("expected_penalty: the tables keep the band's cells and every predecessor's slot",
          "[penalty]") {
  for (auto [n, m, radius] : {std::array<r::index_t, 3>{1000, 1000, 10}, {700, 300, 5}, {300, 700, 0},
                              {50, 60, -1}, {1, 9, 2}, {9, 1, 0}}) {
    CAPTURE(n, m, radius);
    auto const band = r::band_geometry::make(n, m, radius);
    r::host_detail::band_rows const rows(band, n);
    std::size_t cells = 0;
    for (r::index_t i = 0; i < n; ++i) {
      r::index_range const cols = band.row(i);
      cells += static_cast<std::size_t>(cols.size());
      std::size_t const row_start = rows.offset[static_cast<std::size_t>(i + 1)];
      std::size_t const next = i + 1 < n ? rows.offset[static_cast<std::size_t>(i + 2)] : rows.size;
      CHECK(rows.row_begin(i) == row_start);
      CHECK(rows.row_end(i) == next);
      CHECK(rows.row_end(i - 1) == row_start);
      std::size_t const above = rows.offset[static_cast<std::size_t>(i)];
      for (r::index_t j : {cols.lo, cols.hi}) {
        std::size_t const s = rows.slot(i, j), up = rows.slot(i - 1, j);
        CHECK((row_start < s && s < next));   // its own row, after the left border
        CHECK((above < up && up < row_start));  // up and diag (up - 1) in the row above
      }
    }
    // the band's cells, a left border per row, the right overhangs (at most m in all) and row -1
    // (at most m + 1)
    CHECK(rows.size <= cells + static_cast<std::size_t>(n + 2 * m + 1));
    if (radius >= 0 && n >= 100 && m >= 100) CHECK(rows.size < static_cast<std::size_t>(n * m / 4));  // banded
  }
}

TEST_CASE("expected_penalty and the sharp value in long double agree with double", "[penalty]") {
  // every std::floating_point is accepted; long double takes no FMA barrier (x87) and must compile
  std::vector<long double> const x{0.1L, 0.5L, -0.2L, 0.7L}, y{0.3L, 0.1L, 0.4L};
  std::vector<double> const xd(x.begin(), x.end()), yd(y.begin(), y.end());
  auto const omega = [](r::index_t i, r::index_t j) { return static_cast<double>((i - j) * (i - j)); };
  std::vector<long double> gx(x.size()), gy(y.size());
  std::vector<double> gxd(x.size()), gyd(y.size());
  auto const ml = r::measures::soft_dtw<long double>(0.5L);
  auto const md = r::measures::soft_dtw<double>(0.5);
  long double const l = r::expected_penalty(ml, r::view(x), r::view(y), omega, r::make_series(gx.data(), 4),
                                            r::make_series(gy.data(), 3));
  double const ld = r::expected_penalty(md, r::view(xd), r::view(yd), omega, r::make_series(gxd.data(), 4),
                                        r::make_series(gyd.data(), 3));
  CHECK(static_cast<double>(l) == Approx(ld).epsilon(1e-12));
  for (std::size_t k = 0; k < gx.size(); ++k) CHECK(static_cast<double>(gx[k]) == Approx(gxd[k]).epsilon(1e-10).margin(1e-12));
  CHECK(static_cast<double>(r::sharp_value(ml, r::view(x), r::view(y))) ==
        Approx(r::sharp_value(md, r::view(xd), r::view(yd))).epsilon(1e-12));
}

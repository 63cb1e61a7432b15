// Grid CDTW (spec/cdtw.md §A): cdtw_cost under hard_min and soft_min, through the public front
// end. The oracle here evaluates the piecewise-linear interpolants x(u), y(v) at real times and
// integrates |x - y|^2 along each lattice step by Simpson's rule (exact for the quadratic
// integrand), enumerating every lattice path for small n, m: it shares no code with the cost
// model. Also: central differences (soft, bands, channels, ragged batches, divergence), the
// diagonal path against fine quadrature of sqrt(2) * integral |x - y|^2, x = y, symmetry,
// scaling, constant series, refinement (never raises the hard value; refine_adjoint is the
// transpose), length-1 series, the measures' errors, and the CUDA backend's block programs run
// on the CPU with an emulated CTA (as tests/host/test_device_schedule.cpp does for DTW).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include <resilin/backend/device/wavefront.hpp>
#include <resilin/cost/cdtw.hpp>
#include "helpers.hpp"
#include "strip_helpers.hpp"

namespace r = resilin;
using r::index_t;
using resilin_test::random_values;

static_assert(r::differentiable_cost_model<r::cdtw_cost, double>);
static_assert(r::differentiable_cost_model<r::cdtw_cost, float>);
static_assert(std::is_trivially_copyable_v<r::cdtw_cost>);
static_assert(std::is_trivially_copyable_v<r::measure<r::cdtw_cost, r::soft_min<float>>>);
static_assert(std::is_trivially_copyable_v<r::measure<r::cdtw_cost, r::hard_min>>);

namespace {

// --- the oracle: interpolants, Simpson per step, every lattice path ----------------------------

/// A series as a piecewise-linear function on [0, 1] (samples at k / (len - 1)).
struct pl_series {
  std::vector<double> v;  // (len, d)
  index_t len = 0, d = 1;
  /// The value at time t in [0, 1], channel c. A single sample is constant.
  double at(double t, index_t c) const {
    if (len == 1) return v[static_cast<std::size_t>(c)];
    double const s = t * double(len - 1);
    index_t k = static_cast<index_t>(std::floor(s));
    if (k >= len - 1) k = len - 2;
    if (k < 0) k = 0;
    double const w = s - double(k);
    return (1 - w) * v[static_cast<std::size_t>(k * d + c)] + w * v[static_cast<std::size_t>((k + 1) * d + c)];
  }
  double time(index_t k) const { return len == 1 ? 0.0 : double(k) / double(len - 1); }
};

/// |x(u) - y(v)|^2.
double gap2(pl_series const& x, pl_series const& y, double u, double v) {
  double s = 0;
  for (index_t c = 0; c < x.d; ++c) {
    double const e = x.at(u, c) - y.at(v, c);
    s += e * e;
  }
  return s;
}

using path = std::vector<std::array<index_t, 2>>;

/// F along one lattice path: per step, Euclidean length times Simpson's rule.
double path_integral(pl_series const& x, pl_series const& y, path const& p) {
  double f = 0;
  for (std::size_t k = 1; k < p.size(); ++k) {
    double const u0 = x.time(p[k - 1][0]), v0 = y.time(p[k - 1][1]);
    double const u1 = x.time(p[k][0]), v1 = y.time(p[k][1]);
    double const len = std::hypot(u1 - u0, v1 - v0);
    f += len * (gap2(x, y, u0, v0) + 4 * gap2(x, y, 0.5 * (u0 + u1), 0.5 * (v0 + v1)) +
                gap2(x, y, u1, v1)) / 6;
  }
  return f;
}

/// The Sakoe-Chiba band of core/band.hpp, restated: |i (m-1) - j (n-1)| <= R max(n-1, m-1),
/// R raised to 1 when n != m and R = 0; radius < 0 or covering the grid: no band.
bool in_band(index_t n, index_t m, index_t radius, index_t i, index_t j) {
  if (radius < 0 || n <= 1 || m <= 1) return true;
  index_t const longest = std::max(n, m) - 1;
  index_t const rr = (n != m && radius == 0) ? 1 : std::min(radius, std::max(n, m));
  if (rr >= longest) return true;
  return std::abs(i * (m - 1) - j * (n - 1)) <= rr * longest;
}

void enumerate(index_t n, index_t m, index_t radius, path& cur, std::vector<path>& out) {
  auto const [i, j] = cur.back();
  if (i == n - 1 && j == m - 1) {
    out.push_back(cur);
    return;
  }
  std::array<std::array<index_t, 2>, 3> const next{{{i + 1, j + 1}, {i + 1, j}, {i, j + 1}}};
  for (auto const& q : next) {
    if (q[0] >= n || q[1] >= m || !in_band(n, m, radius, q[0], q[1])) continue;
    cur.push_back(q);
    enumerate(n, m, radius, cur, out);
    cur.pop_back();
  }
}

std::vector<path> all_paths(index_t n, index_t m, index_t radius) {
  std::vector<path> out;
  path cur{{0, 0}};
  enumerate(n, m, radius, cur, out);
  return out;
}

struct brute_result {
  double hard = 0, soft = 0;
  std::vector<double> occupancy;  // (n, m): soft probability that the alignment visits (i, j)
};

brute_result brute_force(pl_series const& x, pl_series const& y, index_t radius, double gamma) {
  auto const paths = all_paths(x.len, y.len, radius);
  std::vector<double> f;
  for (auto const& p : paths) f.push_back(path_integral(x, y, p));
  brute_result res;
  res.hard = *std::min_element(f.begin(), f.end());
  double s = 0;
  for (double v : f) s += std::exp(-(v - res.hard) / gamma);
  res.soft = res.hard - gamma * std::log(s);
  res.occupancy.assign(static_cast<std::size_t>(x.len * y.len), 0.0);
  for (std::size_t k = 0; k < paths.size(); ++k) {
    double const w = std::exp(-(f[k] - res.hard) / gamma) / s;
    for (auto const& c : paths[k]) res.occupancy[static_cast<std::size_t>(c[0] * y.len + c[1])] += w;
  }
  return res;
}

/// sqrt(2) * integral_0^1 |x(t) - y(t)|^2 dt by the composite midpoint rule on `nodes` cells.
double diagonal_integral(pl_series const& x, pl_series const& y, int nodes) {
  double s = 0;
  for (int k = 0; k < nodes; ++k) {
    double const t = (k + 0.5) / nodes;
    s += gap2(x, y, t, t);
  }
  return std::sqrt(2.0) * s / nodes;
}

// --- helpers -----------------------------------------------------------------------------------

pl_series make_series(index_t len, index_t d, std::uint64_t seed) {
  return {random_values(static_cast<std::size_t>(len * d), seed), len, d};
}

template <class T>
r::series_view<T const> view_of(std::vector<T> const& v, index_t d) {
  return {v.data(), static_cast<index_t>(v.size()) / d, d};
}

template <class M>
double value_of(M const& m, std::vector<double> const& x, std::vector<double> const& y, index_t d) {
  return r::value(m, view_of(x, d), view_of(y, d));
}

template <class M>
double value_and_grad_of(M const& m, std::vector<double> const& x, std::vector<double> const& y,
                         index_t d, std::vector<double>& gx, std::vector<double>& gy) {
  gx.assign(x.size(), 0.0);
  gy.assign(y.size(), 0.0);
  return r::value_and_grad(m, view_of(x, d), view_of(y, d),
                           r::series_view<double>{gx.data(), static_cast<index_t>(x.size()) / d, d},
                           r::series_view<double>{gy.data(), static_cast<index_t>(y.size()) / d, d});
}

/// Checks value_and_grad of m at (x, y) against central differences of value().
template <class M>
void check_gradient_fd(M const& m, std::vector<double> const& x, std::vector<double> const& y,
                       index_t d, double tol = 1e-7) {
  std::vector<double> gx, gy;
  double const v = value_and_grad_of(m, x, y, d, gx, gy);
  CHECK(resilin_test::values_agree(v, value_of(m, x, y, d)));
  auto const fdx = resilin_test::central_differences(
      [&](std::vector<double> const& p) { return value_of(m, p, y, d); }, x, 1e-6);
  auto const fdy = resilin_test::central_differences(
      [&](std::vector<double> const& p) { return value_of(m, x, p, d); }, y, 1e-6);
  CHECK(resilin_test::max_rel_diff(gx, fdx) < tol);
  CHECK(resilin_test::max_rel_diff(gy, fdy) < tol);
}

/// The shortest lattice path from (0, 0) to (n-1, m-1), by trying every number of diagonals.
double shortest_lattice_path(index_t n, index_t m) {
  double const du = n > 1 ? 1.0 / double(n - 1) : 0.0, dv = m > 1 ? 1.0 / double(m - 1) : 0.0;
  double best = std::numeric_limits<double>::infinity();
  for (index_t k = 0; k <= std::min(n, m) - 1; ++k)
    best = std::min(best, double(k) * std::hypot(du, dv) + double(n - 1 - k) * du + double(m - 1 - k) * dv);
  return best;
}

}  // namespace

// --- brute force ---------------------------------------------------------------------------------

TEST_CASE("cdtw: hard and soft values equal the enumeration of every lattice path", "[cdtw]") {
  std::uint64_t seed = 100;
  for (index_t d : {1, 2})
    for (index_t n = 1; n <= 5; ++n)
      for (index_t m = 1; m <= 5; ++m)
        for (index_t radius : {-1, 0, 1}) {
          CAPTURE(d, n, m, radius);
          auto const x = make_series(n, d, ++seed), y = make_series(m, d, ++seed);
          r::band_spec const band = radius < 0 ? r::band_spec{} : r::band_spec::radius(radius);
          for (double gamma : {0.05, 1.0}) {
            CAPTURE(gamma);
            auto const ref = brute_force(x, y, radius, gamma);
            double const hard = value_of(r::measures::cdtw(band), x.v, y.v, d);
            double const soft = value_of(r::measures::soft_cdtw(gamma, band), x.v, y.v, d);
            CHECK(std::abs(hard - ref.hard) <= 1e-12 * std::max(1.0, ref.hard));
            CHECK(std::abs(soft - ref.soft) <= 1e-12 * std::max(1.0, std::abs(ref.soft)));
            // the training path (no transposition) gives the same value
            std::vector<double> gx, gy;
            double const soft_t = value_and_grad_of(r::measures::soft_cdtw(gamma, band), x.v, y.v, d, gx, gy);
            CHECK(std::abs(soft_t - ref.soft) <= 1e-12 * std::max(1.0, std::abs(ref.soft)));
            for (double g : gx) CHECK(std::isfinite(g));
            for (double g : gy) CHECK(std::isfinite(g));
            // the soft alignment matrix is the probability of visiting each cell
            std::vector<double> e(static_cast<std::size_t>(n * m), -1.0);
            double const v = r::alignment_matrix(r::measures::soft_cdtw(gamma, band), view_of(x.v, d),
                                                 view_of(y.v, d), r::matrix_view<double>{e.data(), n, m});
            CHECK(std::abs(v - ref.soft) <= 1e-12 * std::max(1.0, std::abs(ref.soft)));
            CHECK(resilin_test::max_rel_diff(e, ref.occupancy) < 1e-10);
          }
        }
}

TEST_CASE("cdtw: float agrees with double and with the enumeration", "[cdtw]") {
  auto const x = make_series(5, 2, 7), y = make_series(4, 2, 8);
  auto const xf = resilin_test::cast<float>(x.v), yf = resilin_test::cast<float>(y.v);
  auto const ref = brute_force(x, y, -1, 0.5);
  float const hard = r::value(r::measures::cdtw(), view_of(xf, 2), view_of(yf, 2));
  float const soft = r::value(r::measures::soft_cdtw(0.5f), view_of(xf, 2), view_of(yf, 2));
  CHECK(std::abs(double(hard) - ref.hard) < 1e-5 * std::max(1.0, ref.hard));
  CHECK(std::abs(double(soft) - ref.soft) < 1e-5 * std::max(1.0, std::abs(ref.soft)));
}

TEST_CASE("cdtw: the hard path is a lattice path whose integral is the value", "[cdtw]") {
  std::uint64_t seed = 300;
  for (index_t n : {1, 3, 5})
    for (index_t m : {1, 2, 5}) {
      CAPTURE(n, m);
      auto const x = make_series(n, 2, ++seed), y = make_series(m, 2, ++seed);
      double v = -1;
      auto const p = r::alignment_path(r::measures::cdtw(), view_of(x.v, 2), view_of(y.v, 2), &v);
      REQUIRE(p.front() == std::array<index_t, 2>{0, 0});
      REQUIRE(p.back() == std::array<index_t, 2>{n - 1, m - 1});
      for (std::size_t k = 1; k < p.size(); ++k) {
        index_t const di = p[k][0] - p[k - 1][0], dj = p[k][1] - p[k - 1][1];
        CHECK(((di == 1 && dj == 1) || (di == 1 && dj == 0) || (di == 0 && dj == 1)));
      }
      path const q(p.begin(), p.end());
      CHECK(std::abs(path_integral(x, y, q) - v) <= 1e-12 * std::max(1.0, v));
      CHECK(std::abs(brute_force(x, y, -1, 1.0).hard - v) <= 1e-12 * std::max(1.0, v));
      // the hard alignment matrix is the indicator of that path
      std::vector<double> e(static_cast<std::size_t>(n * m), -1.0);
      r::alignment_matrix(r::measures::cdtw(), view_of(x.v, 2), view_of(y.v, 2),
                          r::matrix_view<double>{e.data(), n, m});
      std::vector<double> ind(e.size(), 0.0);
      for (auto const& c : p) ind[static_cast<std::size_t>(c[0] * m + c[1])] = 1.0;
      CHECK(e == ind);
    }
}

// --- gradients -----------------------------------------------------------------------------------

TEST_CASE("cdtw: soft gradients match central differences", "[cdtw][grad]") {
  std::uint64_t seed = 500;
  for (index_t d : {1, 3})
    for (auto [n, m] : {std::array<index_t, 2>{6, 6}, {7, 4}, {3, 9}, {1, 5}, {5, 1}})
      for (index_t radius : {-1, 0, 2})
        for (double gamma : {0.01, 0.3}) {
          CAPTURE(d, n, m, radius, gamma);
          auto const x = random_values(static_cast<std::size_t>(n * d), ++seed);
          auto const y = random_values(static_cast<std::size_t>(m * d), ++seed);
          r::band_spec const band = radius < 0 ? r::band_spec{} : r::band_spec::radius(radius);
          check_gradient_fd(r::measures::soft_cdtw(gamma, band), x, y, d);
        }
}

TEST_CASE("cdtw: hard gradients match central differences at generic inputs", "[cdtw][grad]") {
  std::uint64_t seed = 700;
  for (auto [n, m] : {std::array<index_t, 2>{6, 6}, {8, 5}, {4, 7}}) {
    CAPTURE(n, m);
    auto const x = random_values(static_cast<std::size_t>(n * 2), ++seed);
    auto const y = random_values(static_cast<std::size_t>(m * 2), ++seed);
    check_gradient_fd(r::measures::cdtw(), x, y, 2, 1e-6);
    check_gradient_fd(r::measures::cdtw(r::band_spec::radius(1)), x, y, 2, 1e-6);
  }
}

TEST_CASE("cdtw: soft divergence is 0 at x = y and its gradient matches differences", "[cdtw][grad]") {
  std::uint64_t seed = 900;
  for (index_t d : {1, 2})
    for (auto [n, m] : {std::array<index_t, 2>{5, 5}, {6, 3}, {2, 7}}) {
      CAPTURE(d, n, m);
      auto const x = random_values(static_cast<std::size_t>(n * d), ++seed);
      auto const y = random_values(static_cast<std::size_t>(m * d), ++seed);
      auto const div = r::measures::soft_cdtw_divergence(0.1);
      CHECK(std::abs(value_of(div, x, x, d)) < 1e-14);
      std::vector<double> gx, gy;
      CHECK(std::abs(value_and_grad_of(div, x, x, d, gx, gy)) < 1e-14);
      // at x' = x both partials of D(x, x') vanish, because S is symmetric in its arguments
      for (std::size_t k = 0; k < gx.size(); ++k) {
        CHECK(std::abs(gx[k]) < 1e-12);
        CHECK(std::abs(gy[k]) < 1e-12);
      }
      check_gradient_fd(div, x, y, d);
      check_gradient_fd(r::measures::soft_cdtw_divergence(0.5, r::band_spec::radius(1)), x, y, d);
      // D = S(x,y) - S(x,x)/2 - S(y,y)/2
      auto const s = r::measures::soft_cdtw(0.1);
      double const expect = value_of(s, x, y, d) - 0.5 * value_of(s, x, x, d) - 0.5 * value_of(s, y, y, d);
      CHECK(std::abs(value_of(div, x, y, d) - expect) < 1e-13);
    }
}

TEST_CASE("cdtw: ragged batches, pairwise and their gradients", "[cdtw][batch]") {
  index_t const B = 4, L = 7, d = 2;
  std::vector<index_t> const lengths{7, 3, 1, 5}, ylengths{4, 7, 6, 2};
  auto xs = random_values(static_cast<std::size_t>(B * L * d), 11);
  auto ys = random_values(static_cast<std::size_t>(B * L * d), 12);
  auto const X = r::make_batch(xs, B, L, d, std::span<index_t const>(lengths));
  auto const Y = r::make_batch(ys, B, L, d, std::span<index_t const>(ylengths));
  auto const sub = [&](std::vector<double> const& v, index_t b, index_t len) {
    return std::vector<double>(v.begin() + b * L * d, v.begin() + (b * L + len) * d);
  };
  std::vector<double> const upstream{1.0, -0.5, 2.0, 0.25};
  for (auto const& m : {r::measures::soft_cdtw(0.2), r::measures::soft_cdtw_divergence(0.2),
                        r::measures::soft_cdtw(0.2, r::band_spec::radius(1))}) {
    std::vector<double> out(B), gx(xs.size(), -7.0), gy(ys.size(), -7.0);
    r::values_and_grads(r::host, m, X, Y, std::span<double>(out),
                        r::batch_view<double>{gx.data(), B, L, d, lengths.data()},
                        r::batch_view<double>{gy.data(), B, L, d, ylengths.data()},
                        std::span<double const>(upstream));
    std::vector<double> vals(B);
    r::values(r::host, m, X, Y, std::span<double>(vals));
    for (index_t b = 0; b < B; ++b) {
      CAPTURE(b);
      auto const xb = sub(xs, b, lengths[b]), yb = sub(ys, b, ylengths[b]);
      double const v = value_of(m, xb, yb, d);
      CHECK(std::abs(out[b] - v) < 1e-12);
      CHECK(std::abs(vals[b] - v) < 1e-12);
      // the batch gradient is upstream[b] times the central differences of the pair's value
      auto const fdx = resilin_test::central_differences(
          [&](std::vector<double> const& p) { return value_of(m, p, yb, d); }, xb, 1e-6);
      auto const fdy = resilin_test::central_differences(
          [&](std::vector<double> const& p) { return value_of(m, xb, p, d); }, yb, 1e-6);
      for (std::size_t k = 0; k < fdx.size(); ++k)
        CHECK(std::abs(gx[static_cast<std::size_t>(b * L * d) + k] - upstream[b] * fdx[k]) < 1e-7);
      for (std::size_t k = 0; k < fdy.size(); ++k)
        CHECK(std::abs(gy[static_cast<std::size_t>(b * L * d) + k] - upstream[b] * fdy[k]) < 1e-7);
      for (index_t k = lengths[b] * d; k < L * d; ++k) CHECK(gx[static_cast<std::size_t>(b * L * d + k)] == 0.0);
      for (index_t k = ylengths[b] * d; k < L * d; ++k) CHECK(gy[static_cast<std::size_t>(b * L * d + k)] == 0.0);
    }
    // pairwise: every cross pair
    std::vector<double> pw(static_cast<std::size_t>(B * B));
    r::pairwise(r::host, m, X, Y, r::matrix_view<double>{pw.data(), B, B});
    for (index_t a = 0; a < B; ++a)
      for (index_t b = 0; b < B; ++b)
        CHECK(std::abs(pw[static_cast<std::size_t>(a * B + b)] -
                       value_of(m, sub(xs, a, lengths[a]), sub(ys, b, ylengths[b]), d)) < 1e-12);
    // pairwise_grads: the sum over b of each pair's gradient
    std::vector<double> pg(xs.size(), -7.0);
    r::pairwise_grads(r::host, m, X, Y, r::batch_view<double>{pg.data(), B, L, d, lengths.data()});
    for (index_t a = 0; a < B; ++a) {
      std::vector<double> sum(static_cast<std::size_t>(lengths[a] * d), 0.0), g1, g2;
      for (index_t b = 0; b < B; ++b) {
        value_and_grad_of(m, sub(xs, a, lengths[a]), sub(ys, b, ylengths[b]), d, g1, g2);
        for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += g1[k];
      }
      for (std::size_t k = 0; k < sum.size(); ++k)
        CHECK(std::abs(pg[static_cast<std::size_t>(a * L * d) + k] - sum[k]) < 1e-12);
    }
  }
  // the hard measure in a batch
  std::vector<double> out(B);
  r::values(r::host, r::measures::cdtw(), X, Y, std::span<double>(out));
  for (index_t b = 0; b < B; ++b)
    CHECK(std::abs(out[b] - value_of(r::measures::cdtw(), sub(xs, b, lengths[b]), sub(ys, b, ylengths[b]), d)) < 1e-14);
}

// --- properties ----------------------------------------------------------------------------------

TEST_CASE("cdtw: n = m, the diagonal path is sqrt(2) times the L2 integral", "[cdtw]") {
  std::uint64_t seed = 1100;
  for (index_t d : {1, 2})
    for (index_t n : {2, 5, 12, 40}) {
      CAPTURE(d, n);
      auto const x = make_series(n, d, ++seed), y = make_series(n, d, ++seed);
      double const integral = diagonal_integral(x, y, 400000);
      // band radius 0 with n = m leaves the diagonal path alone
      double const diag = value_of(r::measures::cdtw(r::band_spec::radius(0)), x.v, y.v, d);
      CHECK(std::abs(diag - integral) < 1e-9 * std::max(1.0, integral));
      double const best = value_of(r::measures::cdtw(), x.v, y.v, d);
      CHECK(best <= diag * (1 + 1e-12));
      CHECK(best >= 0);
      // soft-min never exceeds the hard minimum
      CHECK(value_of(r::measures::soft_cdtw(0.1), x.v, y.v, d) <= best);
    }
}

TEST_CASE("cdtw: x = y gives 0, swapping x and y keeps the value", "[cdtw]") {
  std::uint64_t seed = 1300;
  for (index_t d : {1, 3})
    for (auto [n, m] : {std::array<index_t, 2>{1, 1}, {6, 6}, {9, 4}, {3, 11}, {1, 6}, {13, 7}, {5, 23}, {31, 10}}) {
      CAPTURE(d, n, m);
      auto const x = random_values(static_cast<std::size_t>(n * d), ++seed);
      auto const y = random_values(static_cast<std::size_t>(m * d), ++seed);
      CHECK(value_of(r::measures::cdtw(), x, x, d) == 0.0);
      CHECK(value_of(r::measures::cdtw(r::band_spec::radius(1)), y, y, d) == 0.0);
      for (auto const& band : {r::band_spec{}, r::band_spec::radius(1)}) {
        // bit for bit: the transposed problem's costs are the same bits (the diagonal length
        // orders its two spacings, which a contracted multiply-add would otherwise swap)
        double const a = value_of(r::measures::cdtw(band), x, y, d), b = value_of(r::measures::cdtw(band), y, x, d);
        CHECK(a == b);
        double const sa = value_of(r::measures::soft_cdtw(0.2, band), x, y, d);
        double const sb = value_of(r::measures::soft_cdtw(0.2, band), y, x, d);
        CHECK(sa == sb);
        std::vector<double> gx, gy, hx, hy;
        value_and_grad_of(r::measures::soft_cdtw(0.2, band), x, y, d, gx, gy);
        value_and_grad_of(r::measures::soft_cdtw(0.2, band), y, x, d, hy, hx);
        CHECK(resilin_test::max_rel_diff(gx, hx) < 1e-12);
        CHECK(resilin_test::max_rel_diff(gy, hy) < 1e-12);
      }
    }
}

TEST_CASE("cdtw: step costs that overflow are +inf, not NaN or -inf", "[cdtw]") {
  // the cross term <a0, a1> overflows to -inf where |a0|^2 + |a1|^2 overflows to +inf; the step
  // cost L / 3 (|a0|^2 + <a0, a1> + |a1|^2) then overflows too here (ten times the samples below)
  std::vector<double> const x{3e154, 1.2e155, 9e154}, y{1.2e155, -1.2e155, 0.0};
  r::cdtw_cost const cost;
  auto const c = cost.step(r::series_view<double const>{x.data(), 3, 1}, r::series_view<double const>{y.data(), 3, 1}, 1, 1);
  CHECK(c.diag == std::numeric_limits<double>::infinity());
  CHECK(value_of(r::measures::cdtw(), x, y, 1) == std::numeric_limits<double>::infinity());
  std::vector<double> gx, gy;
  CHECK(value_and_grad_of(r::measures::soft_cdtw(1.0), x, y, 1, gx, gy) == std::numeric_limits<double>::infinity());
  for (double g : gx) CHECK(std::isfinite(g));
  for (double g : gy) CHECK(std::isfinite(g));
}

TEST_CASE("cdtw: a step whose form overflows but whose cost does not is finite", "[cdtw]") {
  // the form |a0|^2 + <a0, a1> + |a1|^2 overflows, L / 3 times it does not (L / 3 < 1): these
  // were +inf, soft gradients all 0
  std::vector<double> const x{3e153, 1.2e154, 9e153}, y{1.2e154, -1.2e154, 0.0};
  auto const c = r::cdtw_cost{}.step(r::series_view<double const>{x.data(), 3, 1},
                                     r::series_view<double const>{y.data(), 3, 1}, 1, 1);
  long double const a0 = -9e153L, a1 = 2.4e154L;
  long double const exact = std::sqrt(0.5L) / 3 * (a0 * a0 + a0 * a1 + a1 * a1);  // 1.04e308
  CHECK(std::abs(c.diag - exact) / exact < 1e-15L);
  // float: x = 1.1e19 against y = 0, 50 x 50: sqrt(2) 1.21e38 along the diagonal (float's
  // largest is 3.4e38; every diagonal form was inf)
  std::vector<float> const xf(50, 1.1e19f), yf(50, 0.0f);
  std::vector<float> gx(50), gy(50);
  float const v = r::value_and_grad(r::measures::soft_cdtw(1.0f), r::series_view<float const>{xf.data(), 50, 1},
                                    r::series_view<float const>{yf.data(), 50, 1},
                                    r::series_view<float>{gx.data(), 50, 1}, r::series_view<float>{gy.data(), 50, 1});
  CHECK(v == Approx(std::sqrt(2.0) * 1.1e19 * 1.1e19).epsilon(1e-5));
  double sum = 0;
  for (float g : gx) {
    REQUIRE(std::isfinite(g));
    sum += g;
  }
  // d/da of sqrt(2) a^2 (a = x - y, constant along the path): 2 sqrt(2) a
  CHECK(sum == Approx(2 * std::sqrt(2.0) * 1.1e19).epsilon(1e-4));
}

TEST_CASE("cdtw: scaling by lambda scales the value by lambda^2", "[cdtw]") {
  auto const x = random_values(14, 21), y = random_values(10, 22);
  for (double lambda : {0.5, 3.0, -2.0}) {
    std::vector<double> lx(x), ly(y);
    for (auto& v : lx) v *= lambda;
    for (auto& v : ly) v *= lambda;
    double const l2 = lambda * lambda;
    double const h = value_of(r::measures::cdtw(), x, y, 2);
    CHECK(std::abs(value_of(r::measures::cdtw(), lx, ly, 2) - l2 * h) < 1e-13 * std::max(1.0, l2 * h));
    // soft: S_gamma(lambda x, lambda y) = lambda^2 S_{gamma / lambda^2}(x, y)
    double const s = value_of(r::measures::soft_cdtw(0.3 / l2), x, y, 2);
    CHECK(std::abs(value_of(r::measures::soft_cdtw(0.3), lx, ly, 2) - l2 * s) < 1e-12 * std::max(1.0, std::abs(l2 * s)));
  }
}

TEST_CASE("cdtw: constant series cost |a - b|^2 times the shortest lattice path", "[cdtw]") {
  for (index_t d : {1, 2})
    for (auto [n, m] : {std::array<index_t, 2>{5, 5}, {2, 2}, {7, 3}, {4, 9}, {1, 4}, {6, 1}, {1, 1}}) {
      CAPTURE(d, n, m);
      std::vector<double> a(static_cast<std::size_t>(n * d)), b(static_cast<std::size_t>(m * d));
      for (index_t k = 0; k < n; ++k)
        for (index_t c = 0; c < d; ++c) a[static_cast<std::size_t>(k * d + c)] = 1.5 + double(c);
      for (index_t k = 0; k < m; ++k)
        for (index_t c = 0; c < d; ++c) b[static_cast<std::size_t>(k * d + c)] = -0.5 - 2.0 * double(c);
      double gap = 0;
      for (index_t c = 0; c < d; ++c) gap += std::pow((1.5 + double(c)) - (-0.5 - 2.0 * double(c)), 2);
      double const expect = gap * shortest_lattice_path(n, m);
      double const v = value_of(r::measures::cdtw(), a, b, d);
      CHECK(std::abs(v - expect) < 1e-13 * std::max(1.0, expect));
      if (n == m && n > 1) CHECK(std::abs(v - gap * std::sqrt(2.0)) < 1e-13 * std::max(1.0, gap));
    }
}

TEST_CASE("cdtw: length-1 series integrate along the other axis", "[cdtw]") {
  // x = one sample: the only path runs along y, F = integral_0^1 |x_0 - y(v)|^2 dv
  auto const y = make_series(6, 2, 31);
  pl_series const x{{0.3, -0.2}, 1, 2};
  double s = 0;
  int const nodes = 400000;
  for (int k = 0; k < nodes; ++k) s += gap2(x, y, 0.0, (k + 0.5) / nodes);
  s /= nodes;
  CHECK(std::abs(value_of(r::measures::cdtw(), x.v, y.v, 2) - s) < 1e-9);
  CHECK(std::abs(value_of(r::measures::cdtw(), y.v, x.v, 2) - s) < 1e-9);
  CHECK(std::abs(value_of(r::measures::soft_cdtw(0.5), x.v, y.v, 2) - s) < 1e-9);  // one path
  CHECK(value_of(r::measures::cdtw(), x.v, std::vector<double>{1.0, 4.0}, 2) == 0.0);  // (1, 1)
  check_gradient_fd(r::measures::soft_cdtw(0.5), x.v, y.v, 2);
}

// --- refinement ----------------------------------------------------------------------------------

TEST_CASE("cdtw: refinement never raises the hard value", "[cdtw][refine]") {
  std::uint64_t seed = 1500;
  for (index_t d : {1, 2})
    for (auto [n, m] : {std::array<index_t, 2>{6, 6}, {8, 5}, {3, 10}, {1, 4}, {2, 2}})
      for (index_t rf : {2, 3}) {
        CAPTURE(d, n, m, rf);
        auto const x = random_values(static_cast<std::size_t>(n * d), ++seed);
        auto const y = random_values(static_cast<std::size_t>(m * d), ++seed);
        auto const xr = r::refine(view_of(x, d), rf), yr = r::refine(view_of(y, d), rf);
        REQUIRE(xr.size() == static_cast<std::size_t>(r::refined_length(n, rf) * d));
        double const coarse = value_of(r::measures::cdtw(), x, y, d);
        double const fine = value_of(r::measures::cdtw(), xr, yr, d);
        CHECK(fine <= coarse * (1 + 1e-12) + 1e-15);
        // refining a refinement (r, then 2) does not raise it either
        auto const xrr = r::refine(view_of(xr, d), 2), yrr = r::refine(view_of(yr, d), 2);
        CHECK(value_of(r::measures::cdtw(), xrr, yrr, d) <= fine * (1 + 1e-12) + 1e-15);
        // n = m, diagonal path: the integral is unchanged by refinement (sampling invariance)
        if (n == m) {
          auto const diag = r::measures::cdtw(r::band_spec::radius(0));
          double const a = value_of(diag, x, y, d), b = value_of(diag, xr, yr, d);
          CHECK(std::abs(a - b) < 1e-13 * std::max(1.0, a));
          // a radius R keeps the old paths on the refined grid as radius r R
          for (index_t R : {1, 2}) {
            double const banded = value_of(r::measures::cdtw(r::band_spec::radius(R)), x, y, d);
            CHECK(value_of(r::measures::cdtw(r::band_spec::radius(rf * R)), xr, yr, d) <=
                  banded * (1 + 1e-12) + 1e-15);
          }
        }
      }
  // with the same radius on the refined grid, old paths can fall out of the band (documented)
  std::vector<double> const a{0, 1, 0}, b{1, 0, 1};
  auto const radius1 = r::measures::cdtw(r::band_spec::radius(1));
  auto const ar = r::refine(view_of(a, 1), 2), br = r::refine(view_of(b, 1), 2);
  CHECK(value_of(radius1, a, b, 1) == Approx(1.0 / 3.0).epsilon(1e-15));
  CHECK(value_of(radius1, ar, br, 1) == Approx(0.36575727471050096).epsilon(1e-12));
  CHECK(value_of(r::measures::cdtw(r::band_spec::radius(2)), ar, br, 1) <= 1.0 / 3.0 * (1 + 1e-12));
}

TEST_CASE("cdtw: refining an empty series gives an empty one", "[cdtw][refine]") {
  // the vector form passed an empty vector's null data, which the check refused with
  // "out must be (0, 1), got (0, 1)"
  r::series_view<double const> const empty{nullptr, 0, 1};
  CHECK(r::refine(empty, 2).empty());
  CHECK_NOTHROW(r::refine_adjoint(r::series_view<double const>{nullptr, 0, 1}, 2, r::series_view<double>{nullptr, 0, 1}));
}

TEST_CASE("cdtw: refine keeps the samples and refine_adjoint is its transpose", "[cdtw][refine]") {
  index_t const n = 5, d = 2, rf = 3;
  auto const x = random_values(static_cast<std::size_t>(n * d), 41);
  auto const xr = r::refine(view_of(x, d), rf);
  index_t const nr = r::refined_length(n, rf);
  REQUIRE(nr == 13);
  for (index_t k = 0; k < n; ++k)
    for (index_t c = 0; c < d; ++c) CHECK(xr[static_cast<std::size_t>(k * rf * d + c)] == x[static_cast<std::size_t>(k * d + c)]);
  pl_series const px{x, n, d}, pr{xr, nr, d};
  for (int k = 0; k <= 100; ++k)
    for (index_t c = 0; c < d; ++c) CHECK(std::abs(px.at(k / 100.0, c) - pr.at(k / 100.0, c)) < 1e-15);
  // <refine(x), g> = <x, refine_adjoint(g)> for random g
  auto const g = random_values(static_cast<std::size_t>(nr * d), 42);
  std::vector<double> gx(x.size(), 0.0);
  r::refine_adjoint(view_of(g, d), rf, r::series_view<double>{gx.data(), n, d});
  double lhs = 0, rhs = 0;
  for (std::size_t k = 0; k < g.size(); ++k) lhs += xr[k] * g[k];
  for (std::size_t k = 0; k < x.size(); ++k) rhs += x[k] * gx[k];
  CHECK(std::abs(lhs - rhs) < 1e-13);
  // outputs that overlap their inputs are refused: refined in place, later samples read values
  // already overwritten (0, 1/3, 2/9, ... instead of 0, 1/3, 2/3, ...)
  {
    std::vector<double> buf(13, 0.0);
    for (int k = 0; k < 5; ++k) buf[static_cast<std::size_t>(k)] = k;
    CHECK_THROWS_AS(r::refine(r::series_view<double const>{buf.data(), 5, 1}, 3, r::series_view<double>{buf.data(), 13, 1}),
                    r::invalid_argument);
    std::vector<double> gbuf(13, 1.0);
    CHECK_THROWS_AS(r::refine_adjoint(r::series_view<double const>{gbuf.data(), 13, 1}, 3,
                                      r::series_view<double>{gbuf.data() + 8, 5, 1}),
                    r::invalid_argument);
  }
  // the chain rule through refinement: d/dx S(refine(x), refine(y)) by central differences
  auto const y = random_values(static_cast<std::size_t>(4 * d), 43);
  auto const m = r::measures::soft_cdtw(0.1);
  auto const refined_value = [&](std::vector<double> const& a, std::vector<double> const& b) {
    return value_of(m, r::refine(view_of(a, d), rf), r::refine(view_of(b, d), rf), d);
  };
  std::vector<double> gxr, gyr;
  value_and_grad_of(m, xr, r::refine(view_of(y, d), rf), d, gxr, gyr);
  std::vector<double> cx(x.size(), 0.0), cy(y.size(), 0.0);
  r::refine_adjoint(view_of(gxr, d), rf, r::series_view<double>{cx.data(), n, d});
  r::refine_adjoint(view_of(gyr, d), rf, r::series_view<double>{cy.data(), 4, d});
  auto const fdx = resilin_test::central_differences(
      [&](std::vector<double> const& p) { return refined_value(p, y); }, x, 1e-6);
  auto const fdy = resilin_test::central_differences(
      [&](std::vector<double> const& p) { return refined_value(x, p); }, y, 1e-6);
  CHECK(resilin_test::max_rel_diff(cx, fdx) < 1e-7);
  CHECK(resilin_test::max_rel_diff(cy, fdy) < 1e-7);
  // r = 1 is the identity; a single sample stays a single sample
  CHECK(r::refine(view_of(x, d), 1) == x);
  CHECK(r::refine(view_of(std::vector<double>{2.0}, 1), 4) == std::vector<double>{2.0});
}

// --- errors --------------------------------------------------------------------------------------

TEST_CASE("cdtw: bad parameters are refused with the argument named", "[cdtw][errors]") {
  CHECK_THROWS_AS(r::measures::soft_cdtw(0.0), r::invalid_argument);
  CHECK_THROWS_AS(r::measures::soft_cdtw_divergence(-1.0f), r::invalid_argument);
  std::vector<double> const x{1, 2, 3};
  CHECK_THAT(resilin_test::message_of<r::invalid_argument>([&] { (void)r::refine(view_of(x, 1), 0); }),
             RESILIN_CONTAINS("refinement factor r must be >= 1, got 0"));
  std::vector<double> g(4);
  CHECK_THROWS_AS(r::refine_adjoint(view_of(g, 1), 2, r::series_view<double>{g.data(), 3, 1}),
                  r::invalid_argument);
  // a refined length beyond the index type (it wrapped around and refine wrote out of bounds)
  CHECK_THAT(resilin_test::message_of<r::invalid_argument>(
                 [&] { (void)r::refine(view_of(x, 1), r::index_t(1) << 62); }),
             RESILIN_CONTAINS("overflows"));

  // a divergence has no single path; the hard path needs a hard measure (compile time)
  std::vector<double> e(9);
  CHECK_THROWS_AS(r::alignment_matrix(r::measures::soft_cdtw_divergence(0.5), view_of(x, 1), view_of(x, 1),
                                      r::matrix_view<double>{e.data(), 3, 3}),
                  r::invalid_argument);
}

// --- the CUDA backend's block programs, emulated on the CPU ---------------------------------------

namespace {
namespace dd = resilin::device_detail;

/// What the CUDA launcher does for a paired batch (values, then gradients), with an emulated
/// CTA of `threads` threads in place of each kernel launch; the workspace is NaN-poisoned.
template <class T, class Cost, class Smooth>
std::array<std::vector<T>, 3> emulate_paired(r::measure<Cost, Smooth> const& m, r::batch_view<T const> X,
                                             r::batch_view<T const> Y, int threads, bool reverse) {
  T const nan = std::numeric_limits<T>::quiet_NaN();
  index_t const B = X.batch, d = X.channels;
  auto const band = dd::make_device_band(m.band);
  dd::emulated_cta const ex{threads, reverse};
  // values: one job per pair (no divergence here)
  auto const vp = dd::value_plan::make(dd::job_layout::paired, B, B, X.max_length, Y.max_length, false,
                                       sizeof(T));
  std::vector<T> values(static_cast<std::size_t>(vp.jobs), nan);
  dd::value_args<T, Cost, Smooth> const va{m.cost, m.smooth, band, X, Y, dd::job_layout::paired,
                                           values.data(), vp.stride};
  for (index_t k = 0; k < vp.jobs; ++k) {
    std::vector<T> ring(static_cast<std::size_t>(3 * vp.stride), nan);
    dd::value_block(ex, va, k, ring.data());
  }
  // training: R stored, backward with the cost model's step_grad
  auto const tp = dd::train_plan::make(B, X.max_length, Y.max_length, d, false, true, sizeof(T));
  std::vector<T> jobs(static_cast<std::size_t>(tp.jobs), nan), store(tp.store_bytes / sizeof(T), nan);
  std::vector<T> gx(static_cast<std::size_t>(B * X.max_length * d), T(0));
  std::vector<T> gy(static_cast<std::size_t>(B * Y.max_length * d), T(0));
  dd::train_args<T, Cost, Smooth> a{};
  a.cost = m.cost;
  a.smooth = m.smooth;
  a.band = band;
  a.X = X;
  a.Y = Y;
  a.results = jobs.data();
  a.store = store.data();
  for (int p = 0; p < 3; ++p) {
    a.slot_offset[p] = tp.slot_offset[p];
    a.slot_size[p] = tp.slot_size[p];
  }
  a.stride = tp.stride;
  a.gx0 = gx.data();
  a.gy0 = gy.data();
  for (index_t k = 0; k < tp.jobs; ++k) {
    std::vector<T> ring(static_cast<std::size_t>(7 * tp.stride), nan);
    dd::train_block(ex, a, k, ring.data());
  }
  for (index_t b = 0; b < B; ++b) CHECK(resilin_test::values_agree(jobs[static_cast<std::size_t>(b)], values[static_cast<std::size_t>(b)]));
  return {values, gx, gy};
}
}  // namespace

static_assert(r::grad_stencil<r::cdtw_cost>::value == 2);
static_assert(r::grad_stencil<r::transposed_cost<r::cdtw_cost>>::value == 2);

TEMPLATE_TEST_CASE("cdtw: the device block programs equal the host backend", "[cdtw][device]", float, double) {
  using T = TestType;
  double const tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  index_t const B = 4, L = 13, d = 2;
  std::vector<index_t> const xl{13, 4, 1, 9}, yl{6, 13, 5, 1};
  auto const xs = resilin_test::cast<T>(random_values(static_cast<std::size_t>(B * L * d), 51));
  auto const ys = resilin_test::cast<T>(random_values(static_cast<std::size_t>(B * L * d), 52));
  auto const X = r::make_batch(xs, B, L, d, std::span<index_t const>(xl));
  auto const Y = r::make_batch(ys, B, L, d, std::span<index_t const>(yl));
  auto const run = [&](auto const& m) {
    std::vector<T> hv(B), hgx(xs.size()), hgy(ys.size());
    r::values_and_grads(r::host.with_threads(1), m, X, Y, std::span<T>(hv),
                        r::batch_view<T>{hgx.data(), B, L, d, xl.data()},
                        r::batch_view<T>{hgy.data(), B, L, d, yl.data()});
    auto const dev = emulate_paired(m, X, Y, 32, false);
    CHECK(resilin_test::max_rel_diff(dev[0], hv) < tol);
    CHECK(resilin_test::max_rel_diff(dev[1], hgx) < 10 * tol);
    CHECK(resilin_test::max_rel_diff(dev[2], hgy) < 10 * tol);
    // thread count and order within a step do not change a bit
    auto const other = emulate_paired(m, X, Y, 3, true);
    for (int k = 0; k < 3; ++k) CHECK(resilin_test::bitwise_equal(other[static_cast<std::size_t>(k)], dev[static_cast<std::size_t>(k)]));
  };
  for (auto const& band : {r::band_spec{}, r::band_spec::radius(0), r::band_spec::radius(2)}) {
    run(r::measures::soft_cdtw<T>(T(0.1), band));
    run(r::measures::soft_cdtw<T>(T(1), band));
    run(r::measures::cdtw(band));
  }
}

TEST_CASE("strip traversal: the checkpoint interval", "[checkpoint]") {
  namespace rh = r::host_detail;
  for (r::index_t v : {0, 1, 2, 3, 4, 5, 8, 9, 10, 101, 65535, 65536, 65537})
    CHECK(rh::ceil_sqrt(v) == static_cast<r::index_t>(std::ceil(std::sqrt(static_cast<long double>(v)))));
  CHECK(rh::ceil_sqrt(r::index_t(1) << 40) == r::index_t(1) << 20);
  CHECK(rh::ceil_sqrt((r::index_t(1) << 40) + 1) == (r::index_t(1) << 20) + 1);
  CHECK(rh::ceil_sqrt(r::index_t(3037000499) * 3037000499) == 3037000499);  // near the largest square
  // the front end's: the slots of the rows between the strips (strip_row_slices), each the
  // span of the strip's first row and one entry: without a band, m + 1 entries per strip
  index_t const h = rh::strip_rows<double>;
  for (auto [n, m] : {std::pair<index_t, index_t>{65536, 65536}, {4096, 4096}, {1000, 70}, {70, 1000}, {1, 1}}) {
    INFO("n " << n << " m " << m);
    rh::strip_row_slices<double> slices;
    slices.plan(r::band_spec{}.geometry(n, m), n);
    index_t const strips = (n + h - 1) / h, total = strips * (m + 1);
    CHECK(slices.slots() == strips);
    CHECK(slices.total() == total);
    for (int arrays : {1, 2}) {
      bool const fits = static_cast<std::size_t>(total * arrays) * sizeof(double) <= rh::checkpoint_rows_bytes;
      CHECK(rh::row_checkpoint_interval<double>(r::band_spec{}.geometry(n, m), n, arrays) ==
            (fits ? 1 : rh::ceil_sqrt(strips)));
    }
  }
  CHECK(rh::row_checkpoint_interval<double>(r::band_spec{}.geometry(65536, 65536), 65536, 1) > 1);
  // a narrow band of a long pair: its slots, not m + H + 1 entries per strip (radius 1,
  // n = m = 10^6: 4 entries per strip, where whole rows took 3.5 GB), every strip's
  CHECK(rh::row_checkpoint_interval<double>(r::band_spec::radius(1).geometry(1000000, 1000000), 1000000, 1) == 1);
}

TEMPLATE_TEST_CASE("strip traversal: checkpointed training gives the bits of the whole table",
                   "[cdtw][checkpoint]", float, double) {
  using T = TestType;
  std::uint64_t seed = 600;
  // one strip, several, a partial last strip, one row, one column; bands that cut strips
  for (auto [n, k] : {std::pair<index_t, index_t>{1, 1}, {1, 40}, {40, 1}, {17, 23}, {70, 33}, {33, 70}, {129, 100},
                      {200, 61}})
    for (auto const& band : {r::band_spec{}, r::band_spec::radius(0), r::band_spec::radius(1), r::band_spec::radius(3),
                             r::band_spec::window(0.2), r::band_spec::itakura(1.5), r::band_spec::itakura(3.0)})
      for (index_t d : {1, 2}) {
        auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n * d), ++seed));
        auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(k * d), ++seed));
        INFO("n " << n << " m " << k << " d " << d << " band kind " << int(band.type()));
        auto const same = [&](auto const& meas) {
          std::vector<T> gx1, gy1, gx2, gy2;
          T const whole = resilin_test::strip_value_and_grad(meas, x, y, d, 0, 0, gx1, gy1);
          CHECK(std::isfinite(double(whole)));
          // every strip's row kept, then every 2nd, 3rd, 5th (two levels: segments recomputed)
          for (index_t every : {1, 2, 3, 5}) {
            INFO("checkpoint interval " << every);
            T const kept = resilin_test::strip_value_and_grad(meas, x, y, d, 0, every, gx2, gy2);
            CHECK(kept == whole);
            CHECK(resilin_test::bitwise_equal(gx2, gx1));
            CHECK(resilin_test::bitwise_equal(gy2, gy1));
          }
        };
        same(r::measures::soft_cdtw<T>(T(0.3), band));  // the generic lane cost
        same(r::measures::soft_dtw<T>(T(0.3), band));   // DTW's lanes, in the log domain here
      }
}

TEMPLATE_TEST_CASE("alignment passes: checkpointed tables give the bits of the whole table",
                   "[cdtw][checkpoint]", float, double) {
  // alignment_path, alignment_matrix and move_occupancy kept the whole strip table at any size
  // (a 16000 x 16000 DTW path 1962 MB, where value_and_grad keeps 69 MB); past
  // checkpoint_table_bytes they now keep checkpoint rows and recompute each strip (the path's
  // traceback, strip by strip from the last). Forced here on small pairs: every interval must
  // give the whole table's bits, both orientations (the strips run along the longer series).
  using T = TestType;
  namespace rh = r::host_detail;
  std::uint64_t seed = 900;
  for (auto [n, k] : {std::pair<index_t, index_t>{1, 1}, {1, 40}, {40, 1}, {70, 33}, {33, 70}, {129, 100}, {61, 200}})
    for (auto const& band : {r::band_spec{}, r::band_spec::radius(0), r::band_spec::radius(1), r::band_spec::radius(3),
                             r::band_spec::itakura(1.5)})
      for (bool ties : {false, true}) {  // integer samples: hard ties everywhere
        auto x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n), ++seed));
        auto y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(k), ++seed));
        if (ties) {
          for (auto& v : x) v = std::round(v);
          for (auto& v : y) v = std::round(v);
        }
        r::series_view<T const> const xs{x.data(), n, 1}, ys{y.data(), k, 1};
        INFO("n " << n << " m " << k << " band kind " << int(band.type()) << " ties " << ties);
        auto const paths = [&](auto const& meas) {
          rh::workspace<T> ws;
          T whole = 0, kept = 0;
          auto const p0 = rh::alignment_path(meas, xs, ys, &whole, ws, 0);
          CHECK_FALSE(ws.table.checkpointed());
          for (index_t every : {1, 2, 3}) {
            INFO("checkpoint interval " << every);
            auto const p1 = rh::alignment_path(meas, xs, ys, &kept, ws, every);
            CHECK(ws.table.checkpointed());
            CHECK(kept == whole);
            CHECK(p1 == p0);
          }
        };
        paths(r::measures::dtw(band));
        paths(r::measures::msm(1.0, band));
        auto const matrices = [&](auto const& meas) {
          rh::workspace<T> ws;
          std::vector<T> e0(static_cast<std::size_t>(n * k)), e1(e0.size()), d0(e0), u0(e0), l0(e0), d1(e0), u1(e0), l1(e0);
          auto const mv = [&](std::vector<T>& v) { return r::matrix_view<T>{v.data(), n, k}; };
          T const whole = rh::alignment_matrix(meas, xs, ys, mv(e0), ws, 0);
          T const occ = rh::move_occupancy(meas, xs, ys, mv(d0), mv(u0), mv(l0), ws, 0);
          for (index_t every : {1, 2, 3}) {
            INFO("checkpoint interval " << every);
            CHECK(rh::alignment_matrix(meas, xs, ys, mv(e1), ws, every) == whole);
            CHECK(ws.table.checkpointed());
            CHECK(resilin_test::bitwise_equal(e1, e0));
            CHECK(rh::move_occupancy(meas, xs, ys, mv(d1), mv(u1), mv(l1), ws, every) == occ);
            CHECK(resilin_test::bitwise_equal(d1, d0));
            CHECK(resilin_test::bitwise_equal(u1, u0));
            CHECK(resilin_test::bitwise_equal(l1, l0));
          }
        };
        matrices(r::measures::soft_dtw<T>(T(0.3), band));
        matrices(r::measures::soft_msm<T>(T(0.5), T(1), band));
        matrices(r::measures::dtw(band));
      }
}

TEMPLATE_TEST_CASE("grid CDTW's vectorised lanes agree with the generic engine", "[cdtw]", float, double) {
  // cdtw_cost::step once per lane took grid CDTW to 11.1 ns per cell for a value and soft-CDTW
  // to 14.2 (1000 x 1000, double); the lanes form the same expressions on vectors (a build that
  // contracts them differently may move a value by an ulp per cell) and sum the gradients per
  // strip. Samples near float's largest make forms overflow: the scaled evaluation, lane by lane.
  using T = TestType;
  namespace rh = r::host_detail;
  T const tol = std::is_same_v<T, float> ? T(2e-5) : T(1e-12);
  std::uint64_t seed = 990;
  for (auto [n, m] : {std::pair<index_t, index_t>{1, 9}, {9, 1}, {2, 2}, {17, 23}, {70, 45}})
    for (index_t d : {1, 3})
      for (double scale : {1.0, std::is_same_v<T, float> ? 1e19 : 1e154})
        for (auto const& band : {r::band_spec{}, r::band_spec::radius(2), r::band_spec::itakura(1.5)}) {
          auto const x = resilin_test::cast<T>(random_values(static_cast<std::size_t>(n * d), ++seed, -scale, scale));
          auto const y = resilin_test::cast<T>(random_values(static_cast<std::size_t>(m * d), ++seed, -scale, scale));
          INFO("n " << n << " m " << m << " d " << d << " scale " << scale << " band " << int(band.type()));
          auto const close = [&](T a, T b) {
            return a == b || std::abs(double(a) - double(b)) <= double(tol) * std::max(std::abs(double(a)), std::abs(double(b)));
          };
          std::vector<T> g1, h1, g2, h2;
          auto const hard = r::measures::cdtw(band);
          T const v1 = resilin_test::strips_with_lanes<rh::generic_lane_cost<T, r::cdtw_cost>>(hard, x, y, d, g1, h1);
          T const v2 = resilin_test::strips_with_lanes<rh::cdtw_lane_cost<T>>(hard, x, y, d, g2, h2);
          CHECK(close(v2, v1));
          CHECK(std::isfinite(double(v2)) == std::isfinite(double(v1)));
          if (scale == 1.0) {  // (the gradients of overflowed costs are documented as they come)
            CHECK(resilin_test::max_rel_diff(g2, g1) <= double(tol) * 10);
            CHECK(resilin_test::max_rel_diff(h2, h1) <= double(tol) * 10);
          }
          auto const soft = r::measures::soft_cdtw<T>(T(0.3), band);
          T const s1 = resilin_test::strips_with_lanes<rh::generic_lane_cost<T, r::cdtw_cost>>(soft, x, y, d, g1, h1);
          T const s2 = resilin_test::strips_with_lanes<rh::cdtw_lane_cost<T>>(soft, x, y, d, g2, h2);
          CHECK(close(s2, s1));
          if (scale == 1.0) {
            CHECK(resilin_test::max_rel_diff(g2, g1) <= double(tol) * 10);
            CHECK(resilin_test::max_rel_diff(h2, h1) <= double(tol) * 10);
          }
        }
}

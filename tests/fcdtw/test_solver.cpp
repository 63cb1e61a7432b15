// The Adam solver and the batched host API: F decreases from the identity, the first step is
// Adam's closed form, the envelope gradient equals finite differences at the fixed final warp,
// batches equal per-pair fits bitwise for any thread count, and bad input throws typed errors.
#include <support/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>
#include <resilin/fcdtw/solver.hpp>
#include "fcdtw_test_support.hpp"

using namespace fcdtw_test;
using resilin::batch_view;
using resilin::matrix_view;
using resilin::series_view;

namespace {
double F_at(pl_series const& x, pl_series const& y, std::vector<double> const& v,
            path_norm n = path_norm::l2) {
  return value(x.view(), y.view(), uniform_warp(v.data(), static_cast<index_t>(v.size()) - 1), n);
}
std::vector<double> identity(index_t K) {
  std::vector<double> v(static_cast<std::size_t>(K + 1));
  identity_warp(K, v.data());
  return v;
}
}  // namespace

TEST_CASE("fit decreases F from the identity and reports F at its final warp", "[fcdtw][solver]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    auto const x = random_series(30, 2, seed, true);
    auto const y = random_series(25, 2, seed + 10, seed % 2);
    double const f_id = F_at(x, y, identity(24));
    fit_options o;
    auto const res = fit(x.view(), y.view(), o);
    REQUIRE(res.logits.size() == 24);
    REQUIRE(res.knots.size() == 25);
    CHECK(res.distance < f_id);
    CHECK(res.distance == F_at(x, y, res.knots));
    std::vector<double> v(25);
    warp_from_logits(warp_map::softplus_cumsum, res.logits.data(), 24, v.data());
    CHECK(v == res.knots);
    // The repository's check: a small lr never ends above the identity.
    o.lr = 1e-3;
    o.steps = 50;
    CHECK(fit(x.view(), y.view(), o).distance <= f_id + 1e-9);
    // L1 path norm and the softmax map also descend; segments override K.
    o = fit_options{};
    o.norm = path_norm::l1;
    o.map = warp_map::softmax_cumsum;
    o.segments = 10;
    auto const r1 = fit(x.view(), y.view(), o);
    CHECK(r1.knots.size() == 11);
    CHECK(r1.distance < F_at(x, y, identity(10), path_norm::l1));
  }
}

TEST_CASE("one Adam step is -lr g / (|g| + eps) from the identity", "[fcdtw][solver]") {
  auto const x = random_series(12, 1, 5, true);
  auto const y = random_series(12, 1, 6, true);
  std::vector<double> r(11, 0.0), v(12), dv(12, 0.0), g(11);
  warp_from_logits(warp_map::softplus_cumsum, r.data(), 11, v.data());
  value_and_grad(x.view(), y.view(), uniform_warp(v.data(), 11), objective_grads<double>{dv.data()});
  logits_backward(warp_map::softplus_cumsum, r.data(), 11, dv.data(), g.data());
  fit_options o;
  o.steps = 1;
  o.lr = 0.05;
  auto const res = fit(x.view(), y.view(), o);
  for (std::size_t i = 0; i < 11; ++i)
    CHECK(std::abs(res.logits[i] - (-0.05 * g[i] / (std::abs(g[i]) + 1e-8))) < 1e-15);
  // zero steps: the identity (zero logits), D = F(zero logits)
  o.steps = 0;
  auto const r0 = fit(x.view(), y.view(), o);
  CHECK(r0.distance == F_at(x, y, v));
}

TEST_CASE("the series gradient of D is the gradient of F at the fixed final warp", "[fcdtw][solver]") {
  auto const x = random_series(10, 2, 20, true);
  auto const y = random_series(14, 2, 21, false);
  fit_options o;
  o.steps = 40;
  std::vector<double> gx(x.values.size()), gy(y.values.size());
  auto const res = fit(x.view(), y.view(), o, {}, series_view<double>{gx.data(), 10, 2},
                       series_view<double>{gy.data(), 14, 2});
  auto const fdx = resilin_test::central_differences(
      [&](std::vector<double> const& p) {
        pl_series q = x;
        q.values = p;
        return F_at(q, y, res.knots);
      },
      x.values, 1e-6);
  auto const fdy = resilin_test::central_differences(
      [&](std::vector<double> const& p) {
        pl_series q = y;
        q.values = p;
        return F_at(x, q, res.knots);
      },
      y.values, 1e-6);
  CHECK(resilin_test::max_rel_diff(gx, fdx) < 1e-8);
  CHECK(resilin_test::max_rel_diff(gy, fdy) < 1e-8);
  // A warm start continues where a previous fit stopped.
  auto const again = fit(x.view(), y.view(), o, std::span<double const>(res.logits));
  CHECK(again.distance < res.distance);
}

namespace {
// min over the polyline of s (every segment, exact projection) of ||s(.) - q||^2.
double polyline_min(interpolant<double> const& s, double const* q) {
  double best = 1e300;
  index_t const d = s.channels();
  for (index_t i = 0; i + 1 < s.length(); ++i) {
    double num = 0, den = 0;
    for (index_t c = 0; c < d; ++c) {
      double const e = s.values(i + 1, c) - s.values(i, c);
      num += (q[c] - s.values(i, c)) * e;
      den += e * e;
    }
    double const w = den > 0 ? std::clamp(num / den, 0.0, 1.0) : 0.0;
    double dist = 0;
    for (index_t c = 0; c < d; ++c) {
      double const e = (1 - w) * s.values(i, c) + w * s.values(i + 1, c) - q[c];
      dist += e * e;
    }
    best = std::min(best, dist);
  }
  return best;
}
// int_0^1 min_u ||a(u) - b(t)||^2 dt by the midpoint rule.
double lower_integral(interpolant<double> const& a, interpolant<double> const& b, long n) {
  std::vector<double> q(static_cast<std::size_t>(b.channels()));
  double s = 0;
  for (long k = 0; k < n; ++k) {
    b.eval((double(k) + 0.5) / double(n), q.data());
    s += polyline_min(a, q.data());
  }
  return s / double(n);
}
}  // namespace

TEST_CASE("F stays above the (LB_t + LB_u) / sqrt(2) lower bound, fitted warps included", "[fcdtw][solver]") {
  auto const x = random_series(15, 2, 60, true);
  auto const y = random_series(18, 2, 61, false);
  double const lb = (lower_integral(x.view(), y.view(), 20000) + lower_integral(y.view(), x.view(), 20000)) /
                    std::sqrt(2.0);
  REQUIRE(lb > 0);
  for (std::uint64_t s = 0; s < 10; ++s)
    CHECK(F_at(x, y, warp_from(resilin_test::random_values(17, s, -3, 3)).values) >= lb * (1 - 1e-6));
  fit_options o;
  o.steps = 1000;
  o.lr = 5e-2;
  double const d = fit(x.view(), y.view(), o).distance;
  CHECK(d >= lb * (1 - 1e-6));
  CHECK(d < F_at(x, y, identity(17)));
}

TEST_CASE("the fitted discrepancy is asymmetric", "[fcdtw][solver]") {
  auto const x = random_series(20, 1, 30, true);
  auto const y = random_series(20, 1, 31, true);
  fit_options o;
  o.steps = 100;
  CHECK(std::abs(fit(x.view(), y.view(), o).distance - fit(y.view(), x.view(), o).distance) > 1e-6);
}

TEST_CASE("batched and pairwise forms equal per-pair fits, for any thread count", "[fcdtw][solver]") {
  index_t const B = 5, n = 16, m = 12, d = 2;
  auto xs = resilin_test::random_values(static_cast<std::size_t>(B * n * d), 40);
  auto ys = resilin_test::random_values(static_cast<std::size_t>(B * m * d), 41);
  std::vector<index_t> xl{16, 9, 2, 16, 11}, yl{12, 12, 5, 3, 7};
  batch_view<double> const X{xs.data(), B, n, d, xl.data()}, Y{ys.data(), B, m, d, yl.data()};
  fit_options o;
  o.steps = 60;
  std::vector<double> want(B);
  std::vector<std::vector<double>> wgx(B), wgy(B);
  for (index_t b = 0; b < B; ++b) {
    wgx[b].assign(static_cast<std::size_t>(xl[b] * d), 0.0);
    wgy[b].assign(static_cast<std::size_t>(yl[b] * d), 0.0);
    want[b] = fit(uniform_interpolant(resilin::as_const(X[b])), uniform_interpolant(resilin::as_const(Y[b])), o,
                  {}, series_view<double>{wgx[b].data(), xl[b], d},
                  series_view<double>{wgy[b].data(), yl[b], d}).distance;
  }
  for (int threads : {1, 3}) {
    o.threads = threads;
    std::vector<double> out(B), out2(B);
    distances(o, X, Y, std::span<double>(out));
    CHECK(out == want);
    std::vector<double> gx(xs.size(), -7.0), gy(ys.size(), -7.0), up{1, 2, 0.5, 1, -1};
    distances_and_grads(o, X, Y, std::span<double>(out2), batch_view<double>{gx.data(), B, n, d},
                        batch_view<double>{gy.data(), B, m, d}, std::span<double const>(up));
    CHECK(out2 == want);
    for (index_t b = 0; b < B; ++b) {
      for (index_t k = 0; k < n * d; ++k) {
        double const e = k < xl[b] * d ? up[b] * wgx[b][k] : 0.0;
        CHECK(gx[b * n * d + k] == e);
      }
      for (index_t k = 0; k < m * d; ++k) {
        double const e = k < yl[b] * d ? up[b] * wgy[b][k] : 0.0;
        CHECK(gy[b * m * d + k] == e);
      }
    }
    std::vector<double> C(B * B);
    pairwise_distances(o, X, Y, matrix_view<double>{C.data(), B, B});
    for (index_t a = 0; a < B; ++a)
      for (index_t b = 0; b < B; ++b)
        CHECK(C[a * B + b] == fit(uniform_interpolant(resilin::as_const(X[a])),
                                  uniform_interpolant(resilin::as_const(Y[b])), o).distance);
  }
  // refused: outputs over inputs (GX = X gave gradients off by 0.67: X was read after GX was
  // zeroed), and a non-finite upstream
  o.threads = 1;
  std::vector<double> out(B), gy(ys.size()), xcopy = xs;
  batch_view<double> const Xc{xcopy.data(), B, n, d, xl.data()};
  CHECK_THROWS_WITH(distances_and_grads(o, Xc, Y, std::span<double>(out), batch_view<double>{xcopy.data(), B, n, d},
                                        batch_view<double>{gy.data(), B, m, d}),
                    Catch::Contains("GX overlaps the input X"));
  std::vector<double> gx(xs.size()), up{1, NAN, 1, 1, 1};
  CHECK_THROWS_WITH(distances_and_grads(o, X, Y, std::span<double>(out), batch_view<double>{gx.data(), B, n, d},
                                        batch_view<double>{gy.data(), B, m, d}, std::span<double const>(up)),
                    Catch::Contains("upstream[1] is not finite"));
  // out over an input: distances and pairwise_distances wrote out while reading X (a reviewer's
  // case: out[1] 2.7152 for 2.1988) and Y (off by up to 805)
  CHECK_THROWS_WITH(distances(o, Xc, Y, std::span<double>(xcopy.data() + n * d, B)),
                    Catch::Contains("out overlaps the input X"));
  std::vector<double> ycopy = ys;
  batch_view<double const> const Yc{ycopy.data(), B, m, d, yl.data()};
  CHECK_THROWS_WITH(pairwise_distances(o, X, Yc, matrix_view<double>{ycopy.data(), B, B}),
                    Catch::Contains("out overlaps the input Y"));
  std::vector<double> xv = xs;
  series_view<double> const x0{xv.data(), xl[0], d};
  CHECK_THROWS_WITH(fit(uniform_interpolant(resilin::as_const(x0)), uniform_interpolant(resilin::as_const(Y[0])), o,
                        {}, x0),
                    Catch::Contains("gx overlaps the input x"));
  // gx or gy over explicit knots, which the final gradient reads after zeroing gx and gy (a
  // reviewer's case: NaN gradients, no error); gx = gy stays allowed for y = x
  std::vector<double> knots(static_cast<std::size_t>(xl[0] * d));
  for (index_t i = 0; i < xl[0]; ++i) knots[static_cast<std::size_t>(i)] = double(i) / double(xl[0] - 1);
  auto const xk = knotted_interpolant(resilin::as_const(x0), knots.data());
  std::vector<double> g0(static_cast<std::size_t>(Y.length(0) * d));
  series_view<double> const gy0{g0.data(), Y.length(0), d};
  CHECK_THROWS_WITH(fit(xk, uniform_interpolant(resilin::as_const(Y[0])), o, {},
                        series_view<double>{knots.data(), xl[0], d}),
                    Catch::Contains("gx overlaps the input x's knots"));
  CHECK_THROWS_WITH(fit(uniform_interpolant(resilin::as_const(Y[0])), xk, o, {}, gy0,
                        series_view<double>{knots.data(), xl[0], d}),
                    Catch::Contains("gy overlaps the input y's knots"));
  std::vector<double> gxx(static_cast<std::size_t>(xl[0] * d), 0.0), ga(gxx), gb(gxx);
  series_view<double> const gs{gxx.data(), xl[0], d};
  fit(xk, xk, o, {}, gs, gs);
  fit(xk, xk, o, {}, series_view<double>{ga.data(), xl[0], d}, series_view<double>{gb.data(), xl[0], d});
  for (std::size_t k = 0; k < gxx.size(); ++k) CHECK(gxx[k] == Approx(ga[k] + gb[k]).margin(1e-12));
}

TEST_CASE("float fits descend too", "[fcdtw][solver]") {
  auto const x = resilin_test::random_values<float>(40, 50);
  auto const y = resilin_test::random_values<float>(40, 51);
  series_view<float const> const xs{x.data(), 40, 1}, ys{y.data(), 40, 1};
  std::vector<float> v(40);
  identity_warp<float>(39, v.data());
  float const f_id = value(uniform_interpolant(xs), uniform_interpolant(ys), uniform_warp(v.data(), 39));
  auto const res = fit(xs, ys);
  CHECK(std::isfinite(res.distance));
  CHECK(res.distance < f_id);
}

TEST_CASE("bad input throws resilin::invalid_argument", "[fcdtw][solver]") {
  std::vector<double> a{0, 1, 2}, b{1, 2}, one{1}, nan{0, NAN, 1};
  series_view<double const> const x{a.data(), 3, 1}, y{b.data(), 2, 1};
  auto bad = [&](fit_options o) { return fit(x, y, o); };
  fit_options o;
  REQUIRE_NOTHROW(bad(o));
  o.lr = 0;
  CHECK_THROWS_AS(bad(o), resilin::invalid_argument);
  o = {};
  o.steps = -1;
  CHECK_THROWS_AS(bad(o), resilin::invalid_argument);
  o = {};
  o.beta2 = 1;
  CHECK_THROWS_AS(bad(o), resilin::invalid_argument);
  o = {};
  o.segments = -3;
  CHECK_THROWS_AS(bad(o), resilin::invalid_argument);
  // integers cast to the enums ran softmax, L1, and the identity start in fit() but the grid
  // start in distances()
  o = {};
  o.map = static_cast<warp_map>(7);
  CHECK_THROWS_WITH(bad(o), Catch::Contains("map must be softplus_cumsum or softmax_cumsum, got 7"));
  o = {};
  o.norm = static_cast<path_norm>(9);
  CHECK_THROWS_WITH(bad(o), Catch::Contains("norm must be l2 or l1, got 9"));
  {  // the host helpers that take a map read an unknown one as softplus in one place, softmax in another
    std::vector<double> v{0, 0.1, 0.5, 0.6, 1}, r(4);
    CHECK_THROWS_WITH(logits_from_knots(static_cast<warp_map>(7), v.data(), 4, r.data()),
                      Catch::Contains("map must be softplus_cumsum or softmax_cumsum, got 7"));
  }
  o = {};
  o.init = static_cast<warp_init>(5);
  CHECK_THROWS_WITH(bad(o), Catch::Contains("init must be identity or grid, got 5"));
  {
    std::vector<double> out(1);
    CHECK_THROWS_WITH(distances(o, batch_view<double const>{a.data(), 1, 3, 1}, batch_view<double const>{b.data(), 1, 2, 1},
                                std::span<double>(out)),
                      Catch::Contains("init must be identity or grid"));
  }
  // options that leave their domain once cast to float (inf, 0, 1): the float fit returned NaN
  // logits and a wrong distance
  {
    std::vector<float> af{0, 1, 2}, bf{1, 2};
    series_view<float const> const xf{af.data(), 3, 1}, yf{bf.data(), 2, 1};
    fit_options f;
    f.lr = 1e39;
    CHECK_THROWS_WITH(fit(xf, yf, f), Catch::Contains("lr must be finite and > 0 in the value type"));
    CHECK_NOTHROW(resilin::fcdtw::detail::check_options<double>(f));
    f = {};
    f.eps = 1e-50;
    CHECK_THROWS_WITH(fit(xf, yf, f), Catch::Contains("eps must be > 0 in the value type"));
    f = {};
    f.beta2 = 1 - 1e-9;
    CHECK_THROWS_WITH(fit(xf, yf, f), Catch::Contains("must stay below 1 in the value type"));
  }
  // a diverging fit (logits overflow) is refused, not returned as a distance
  {
    std::vector<double> xa{0, 3, 1, 4, 1, 5}, ya{2, 7, 1, 8, 2, 8};
    fit_options f;
    f.lr = 1e308;
    f.steps = 3;
    CHECK_THROWS_WITH(fit(series_view<double const>{xa.data(), 6, 1}, series_view<double const>{ya.data(), 6, 1}, f),
                      Catch::Contains("fit: the Adam fit of pair 0 diverged"));
  }
  // an objective that overflows with finite logits (steps = 0: no gradient to overflow them) is
  // a diverged fit too, not an infinite distance
  {
    double const big = resilin::fcdtw::max_sample_magnitude<double>();
    std::vector<double> xa(32, big), ya(32, -big);
    batch_view<double const> const X{xa.data(), 1, 4, 8}, Y{ya.data(), 1, 4, 8};
    for (resilin::index_t steps : {0, 5}) {
      fit_options f;
      f.steps = steps;
      INFO(steps << " steps");
      CHECK_THROWS_WITH(fit(X[0], Y[0], f), Catch::Contains("fit: the Adam fit of pair 0 diverged"));
      std::vector<double> out(1);
      CHECK_THROWS_WITH(distances(f, X, Y, std::span<double>(out)), Catch::Contains("diverged"));
    }
  }
  o = {};
  o.segments = resilin::index_t{1} << 61;  // 8 K + 2 (was 6 K + 2) overflowed the index type (undefined behaviour)
  CHECK_THROWS_WITH(bad(o), Catch::Contains("segments must be in [0, 2^40]"));
  o.segments = fit_options::max_segments;  // accepted (the fit itself is not run here)
  CHECK_NOTHROW(resilin::fcdtw::detail::check_options(o));
  o = {};
  CHECK_THROWS_AS(fit(x, series_view<double const>{one.data(), 1, 1}), resilin::invalid_argument);
  CHECK_THROWS_AS(fit(x, series_view<double const>{nan.data(), 3, 1}), resilin::invalid_argument);
  CHECK_THROWS_AS(fit(x, series_view<double const>{a.data(), 1, 3}), resilin::invalid_argument);
  std::vector<double> r0(5, 0.0);
  CHECK_THROWS_AS(fit(uniform_interpolant(x), uniform_interpolant(y), fit_options{},
                      std::span<double const>(r0)),
                  resilin::invalid_argument);
  std::vector<double> bad_knots{0, 0.5, 0.9};
  CHECK_THROWS_AS(fit(knotted_interpolant(x, bad_knots.data()), uniform_interpolant(y)),
                  resilin::invalid_argument);
  std::vector<double> out(2), six{0, 1, 2, 3, 4, 5};
  std::vector<index_t> lens{3, 1};  // a one-sample series has no PL interpolant
  CHECK_THROWS_AS(distances(fit_options{}, batch_view<double const>{six.data(), 2, 3, 1, lens.data()},
                            batch_view<double const>{six.data(), 2, 3, 1}, std::span<double>(out)),
                  resilin::invalid_argument);
  CHECK_THROWS_AS(distances(fit_options{}, batch_view<double const>{six.data(), 1, 3, 1},
                            batch_view<double const>{six.data(), 1, 3, 1}, std::span<double>(out)),
                  resilin::invalid_argument);
  // magnitudes whose squared differences overflow (D and the logits came out NaN)
  std::vector<double> huge{1e200, -1e200, 3}, ok{0, 1e150, 2};
  CHECK_THROWS_AS(fit(series_view<double const>{huge.data(), 3, 1}, x), resilin::invalid_argument);
  auto const edge = fit(series_view<double const>{ok.data(), 3, 1}, x);
  CHECK(std::isfinite(edge.distance));
  std::vector<float> hugef{1e20f, 0, 1}, af{0, 1, 2};
  CHECK_THROWS_AS(fit(series_view<float const>{hugef.data(), 3, 1}, series_view<float const>{af.data(), 3, 1}),
                  resilin::invalid_argument);
  std::vector<double> huge_batch{0, 1, 2, 0, 1e160, 2};
  CHECK_THROWS_AS(distances(fit_options{}, batch_view<double const>{huge_batch.data(), 2, 3, 1},
                            batch_view<double const>{six.data(), 2, 3, 1}, std::span<double>(out)),
                  resilin::invalid_argument);
  for (double v : edge.logits) CHECK(std::isfinite(v));
}

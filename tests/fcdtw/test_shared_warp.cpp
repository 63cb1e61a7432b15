// The shared-warp cost matrix (formed from each pair's differences) and its VJP against the closed
// form called pair by pair, finite differences through the logits, thread-count determinism,
// and input validation.
#include <support/catch.hpp>

#include <cmath>
#include <vector>
#include <resilin/fcdtw/shared_warp.hpp>
#include "fcdtw_test_support.hpp"

using namespace fcdtw_test;
using resilin::batch_view;
using resilin::matrix_view;
using resilin::series_view;

namespace {
struct problem {
  index_t bx = 4, by = 5, nx = 9, ny = 11, d = 2;
  std::vector<double> xs, ys, xk, G;
  owned_warp w;
  problem(std::uint64_t seed, bool flat) {
    xs = resilin_test::random_values(static_cast<std::size_t>(bx * nx * d), seed);
    ys = resilin_test::random_values(static_cast<std::size_t>(by * ny * d), seed + 1);
    xk = random_knots(nx, seed + 2);
    G = resilin_test::random_values(static_cast<std::size_t>(bx * by), seed + 3);
    w = flat ? owned_warp{{0, 0.2, 0.2, 0.2, 0.7, 0.9, 0.9, 1}, {}}
             : warp_from(resilin_test::random_values(7, seed + 4, -1.5, 1.5));
  }
  batch_view<double const> X() const { return {xs.data(), bx, nx, d}; }
  batch_view<double const> Y() const { return {ys.data(), by, ny, d}; }
  interpolant<double> x(index_t i) const { return knotted_interpolant(X()[i], xk.data()); }
  interpolant<double> y(index_t j) const { return uniform_interpolant(Y()[j]); }
  shared_warp_options<double> options(int threads = 0) const {
    return {path_norm::l2, threads, xk.data(), nullptr};
  }
};
double scale(double v) { return std::max(1.0, std::abs(v)); }
}  // namespace

TEST_CASE("shared-warp cost matrix equals the closed form pair by pair", "[fcdtw][shared]") {
  for (bool flat : {false, true})
    for (auto norm : {path_norm::l2, path_norm::l1}) {
      problem const p(10, flat);
      auto o = p.options();
      o.norm = norm;
      std::vector<double> C(static_cast<std::size_t>(p.bx * p.by));
      cdist_shared(p.w.view(), p.X(), p.Y(), matrix_view<double>{C.data(), p.bx, p.by}, o);
      for (index_t i = 0; i < p.bx; ++i)
        for (index_t j = 0; j < p.by; ++j) {
          double const f = value(p.x(i), p.y(j), p.w.view(), norm);
          CHECK(std::abs(C[i * p.by + j] - f) < 1e-12 * scale(f));
        }
    }
}

TEST_CASE("shared-warp VJP equals the sum of per-pair gradients", "[fcdtw][shared]") {
  for (bool flat : {false, true}) {
    problem const p(20, flat);
    index_t const K = p.w.segments();
    std::vector<double> gx(p.xs.size(), 9.0), gy(p.ys.size(), 9.0), dv(K + 1, 9.0),
        C(p.G.size());
    cdist_shared_vjp(p.w.view(), p.X(), p.Y(), matrix_view<double const>{p.G.data(), p.bx, p.by},
                     batch_view<double>{gx.data(), p.bx, p.nx, p.d},
                     batch_view<double>{gy.data(), p.by, p.ny, p.d}, dv.data(),
                     matrix_view<double>{C.data(), p.bx, p.by}, p.options());
    std::vector<double> wx(gx.size(), 0.0), wy(gy.size(), 0.0), wv(dv.size(), 0.0);
    for (index_t i = 0; i < p.bx; ++i)
      for (index_t j = 0; j < p.by; ++j) {
        objective_grads<double> g{wv.data(), {wx.data() + i * p.nx * p.d, p.nx, p.d},
                                  {wy.data() + j * p.ny * p.d, p.ny, p.d}, p.G[i * p.by + j]};
        double const f = value_and_grad(p.x(i), p.y(j), p.w.view(), g);
        CHECK(std::abs(C[i * p.by + j] - f) < 1e-12 * scale(f));
      }
    CHECK(resilin_test::max_rel_diff(gx, wx) < 1e-12);
    CHECK(resilin_test::max_rel_diff(gy, wy) < 1e-12);
    CHECK(resilin_test::max_rel_diff(dv, wv) < 1e-11);
  }
}

TEST_CASE("shared-warp costs and VJP keep their accuracy for series with a common offset",
          "[fcdtw][shared]") {
  // C = <X,QX> + <Y,QY> - 2<X,QY> cancelled the offset: float series near 1000 that differ by
  // 0.01 gave C = -1.25, 0.75 for 0.0035 and warp gradients 33 % off. Compared with the closed
  // form pair by pair in float (the interpolation near 1000 is the same in both).
  index_t const b = 2, n = 64, K = 20;
  std::vector<float> xs(b * n), ys(b * n), r(K), v(K + 1), G{1.f, -0.5f, 0.25f, 2.f};
  auto const noise = resilin_test::random_values(static_cast<std::size_t>(2 * b * n), 77, -1e-2, 1e-2);
  for (index_t k = 0; k < b * n; ++k) {
    xs[k] = static_cast<float>(1000 + std::sin(0.1 * static_cast<double>(k % n)) + noise[k]);
    ys[k] = static_cast<float>(1000 + std::sin(0.1 * static_cast<double>(k % n)) + noise[b * n + k]);
  }
  for (index_t i = 0; i < K; ++i) r[i] = static_cast<float>(0.3 * std::sin(static_cast<double>(i)));
  warp_from_logits(warp_map::softplus_cumsum, r.data(), K, v.data());
  auto const phi = uniform_warp<float>(v.data(), K);
  batch_view<float const> const X{xs.data(), b, n, 1}, Y{ys.data(), b, n, 1};
  std::vector<float> C(b * b), dv(K + 1), gx(xs.size()), gy(ys.size());
  cdist_shared(phi, X, Y, matrix_view<float>{C.data(), b, b});
  cdist_shared_vjp(phi, X, Y, matrix_view<float const>{G.data(), b, b}, batch_view<float>{gx.data(), b, n, 1},
                   batch_view<float>{gy.data(), b, n, 1}, dv.data());
  std::vector<float> wv(K + 1, 0.f);
  for (index_t i = 0; i < b; ++i)
    for (index_t j = 0; j < b; ++j) {
      float const f = value_and_grad(uniform_interpolant(X[i]), uniform_interpolant(Y[j]), phi,
                                     objective_grads<float>{wv.data(), {}, {}, G[i * b + j]});
      INFO("C(" << i << ", " << j << ") " << C[i * b + j] << " against " << f);
      CHECK(std::abs(C[i * b + j] - f) < 1e-5f * f);
    }
  float largest = 0;
  for (float g : wv) largest = std::max(largest, std::abs(g));
  for (index_t k = 0; k <= K; ++k) {
    INFO("dv[" << k << "] " << dv[k] << " against " << wv[k]);
    CHECK(std::abs(dv[k] - wv[k]) < 1e-5f * largest);
  }
}

TEST_CASE("shared-warp costs of near pairs in a diverse float batch keep their accuracy", "[fcdtw][shared]") {
  // The expanded C = <X,QX> + <Y,QY> - 2<X,QY> lost a pair 1e-4 apart among N(0, 9) series: its
  // cost came out 25 times too large, and negative in 95 of 200 seeds. Now from the differences,
  // against the closed form pair by pair (accurate in float) for C, the warp gradient and GX.
  index_t const n = 64, d = 8, by = 8, K = n - 1;
  int negative = 0;
  double worst = 0, worst_dv = 0, worst_gx = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    auto const base = resilin_test::random_values(static_cast<std::size_t>(n * d), 500 + seed, -2.0, 2.0);
    auto const noise = resilin_test::random_values(static_cast<std::size_t>(n * d), 600 + seed, -1e-4, 1e-4);
    auto const far = resilin_test::random_values(static_cast<std::size_t>((by - 1) * n * d), 700 + seed, -5.0, 5.0);
    std::vector<float> xs(base.begin(), base.end()), ys;
    for (std::size_t k = 0; k < base.size(); ++k) ys.push_back(static_cast<float>(base[k] + noise[k]));
    ys.insert(ys.end(), far.begin(), far.end());
    std::vector<float> v(K + 1), C(by), G(by, 0.f), gx(xs.size()), dv(K + 1);
    identity_warp(K, v.data());
    G[0] = 1.f;  // the near pair's gradients alone
    auto const phi = uniform_warp<float>(v.data(), K);
    batch_view<float const> const X{xs.data(), 1, n, d}, Y{ys.data(), by, n, d};
    cdist_shared(phi, X, Y, matrix_view<float>{C.data(), 1, by});
    cdist_shared_vjp(phi, X, Y, matrix_view<float const>{G.data(), 1, by}, batch_view<float>{gx.data(), 1, n, d},
                     batch_view<float>{}, dv.data());
    std::vector<float> wv(K + 1, 0.f), wx(xs.size(), 0.f);
    float const f = value_and_grad(uniform_interpolant(X[0]), uniform_interpolant(Y[0]), phi,
                                   objective_grads<float>{wv.data(), {wx.data(), n, d}, {}, 1.f});
    negative += C[0] < 0;
    worst = std::max(worst, std::abs(double(C[0]) - f) / f);
    double largest_v = 0, largest_x = 0;
    for (float g : wv) largest_v = std::max(largest_v, double(std::abs(g)));
    for (float g : wx) largest_x = std::max(largest_x, double(std::abs(g)));
    for (index_t k = 0; k <= K; ++k) worst_dv = std::max(worst_dv, std::abs(double(dv[k]) - wv[k]) / largest_v);
    for (std::size_t k = 0; k < gx.size(); ++k) worst_gx = std::max(worst_gx, std::abs(double(gx[k]) - wx[k]) / largest_x);
  }
  CHECK(negative == 0);
  CHECK(worst < 1e-5);
  CHECK(worst_dv < 1e-3);
  CHECK(worst_gx < 1e-4);
}

TEST_CASE("shared-warp costs that overflow over many channels are refused, equal series cost 0",
          "[fcdtw][shared]") {
  // samples within max_sample_magnitude, but 1024 channels of (2 M)^2 overflow: C was NaN (the
  // expanded form's inf - inf) also for equal series, whose cost is 0
  index_t const n = 2, d = 1024;
  double const M = max_sample_magnitude<double>();
  std::vector<double> xs(n * d, M), ys(n * d, M), v{0.0, 1.0}, C(1), G{1.0}, dv(2);
  auto const phi = uniform_warp<double>(v.data(), 1);
  batch_view<double const> const X{xs.data(), 1, n, d}, Y{ys.data(), 1, n, d};
  cdist_shared(phi, X, Y, matrix_view<double>{C.data(), 1, 1});
  CHECK(C[0] == 0.0);
  for (index_t c = 0; c < d; ++c) ys[d + c] = -M;
  CHECK_THROWS_WITH(cdist_shared(phi, X, Y, matrix_view<double>{C.data(), 1, 1}),
                    Catch::Contains("the cost of pair (0, 0) overflowed"));
  std::vector<double> C2(1);
  CHECK_THROWS_WITH(cdist_shared_vjp(phi, X, Y, matrix_view<double const>{G.data(), 1, 1}, batch_view<double>{},
                                     batch_view<double>{}, dv.data(), matrix_view<double>{C2.data(), 1, 1}),
                    Catch::Contains("the cost of pair (0, 0) overflowed"));
  // without C, the warp gradient overflows (its bracket sums the squared differences)
  CHECK_THROWS_WITH(cdist_shared_vjp(phi, X, Y, matrix_view<double const>{G.data(), 1, 1}, batch_view<double>{},
                                     batch_view<double>{}, dv.data()),
                    Catch::Contains("a gradient overflowed"));
}

TEST_CASE("shared-warp logits gradient matches finite differences", "[fcdtw][shared]") {
  problem const p(30, false);
  auto const r = resilin_test::random_values(7, 34, -1.5, 1.5);
  auto loss = [&](std::vector<double> const& rr) {
    auto const w = warp_from(rr);
    std::vector<double> C(p.G.size());
    cdist_shared(w.view(), p.X(), p.Y(), matrix_view<double>{C.data(), p.bx, p.by}, p.options());
    double s = 0;
    for (std::size_t k = 0; k < C.size(); ++k) s += p.G[k] * C[k];
    return s;
  };
  auto const w = warp_from(r);
  std::vector<double> dv(8), dr(7);
  cdist_shared_vjp(w.view(), p.X(), p.Y(), matrix_view<double const>{p.G.data(), p.bx, p.by},
                   batch_view<double>{}, batch_view<double>{}, dv.data(), matrix_view<double>{},
                   p.options());
  logits_backward(warp_map::softplus_cumsum, r.data(), 7, dv.data(), dr.data());
  auto const fd = resilin_test::central_differences(loss, r, 1e-6);
  CHECK(resilin_test::max_rel_diff(dr, fd) < 1e-7);
}

TEST_CASE("shared-warp results do not depend on the thread count", "[fcdtw][shared]") {
  problem const p(40, false);
  std::vector<std::vector<double>> out;
  for (int threads : {1, 3}) {
    std::vector<double> C(p.G.size()), gx(p.xs.size()), gy(p.ys.size()), dv(8);
    cdist_shared(p.w.view(), p.X(), p.Y(), matrix_view<double>{C.data(), p.bx, p.by},
                 p.options(threads));
    cdist_shared_vjp(p.w.view(), p.X(), p.Y(), matrix_view<double const>{p.G.data(), p.bx, p.by},
                     batch_view<double>{gx.data(), p.bx, p.nx, p.d},
                     batch_view<double>{gy.data(), p.by, p.ny, p.d}, dv.data(), {},
                     p.options(threads));
    C.insert(C.end(), gx.begin(), gx.end());
    C.insert(C.end(), gy.begin(), gy.end());
    C.insert(C.end(), dv.begin(), dv.end());
    out.push_back(C);
  }
  CHECK(out[0] == out[1]);
}

TEST_CASE("shared-warp input validation", "[fcdtw][shared]") {
  problem const p(50, false);
  std::vector<double> C(p.G.size());
  matrix_view<double> const Cv{C.data(), p.bx, p.by};
  std::vector<double> bad{0, 0.5, 0.9};  // v_K != 1
  CHECK_THROWS_AS(cdist_shared(uniform_warp(bad.data(), 2), p.X(), p.Y(), Cv, p.options()),
                  resilin::invalid_argument);
  std::vector<double> down{0, 0.5, 0.4, 1};
  CHECK_THROWS_AS(cdist_shared(uniform_warp(down.data(), 3), p.X(), p.Y(), Cv, p.options()),
                  resilin::invalid_argument);
  std::vector<index_t> lens{9, 9, 5, 9};
  batch_view<double const> const ragged{p.xs.data(), p.bx, p.nx, p.d, lens.data()};
  CHECK_THROWS_AS(cdist_shared(p.w.view(), ragged, p.Y(), Cv, p.options()), resilin::invalid_argument);
  CHECK_THROWS_AS(cdist_shared(p.w.view(), p.X(), p.Y(), matrix_view<double>{C.data(), p.by, p.bx},
                               p.options()),
                  resilin::invalid_argument);
  std::vector<double> knots(static_cast<std::size_t>(p.nx), 0.5);
  auto o = p.options();
  o.x_knots = knots.data();
  CHECK_THROWS_AS(cdist_shared(p.w.view(), p.X(), p.Y(), Cv, o), resilin::invalid_argument);
  o = p.options();
  o.norm = static_cast<path_norm>(4);  // ran as L1
  CHECK_THROWS_WITH(cdist_shared(p.w.view(), p.X(), p.Y(), Cv, o), Catch::Contains("norm must be l2 or l1, got 4"));
}

TEST_CASE("shared-warp: sample range and overlapping outputs are refused", "[fcdtw][shared]") {
  problem p(51, false);
  std::vector<double> C(p.G.size());
  matrix_view<double> const Cv{C.data(), p.bx, p.by};
  std::vector<double> gx(p.xs.size()), gy(p.ys.size()), dv(p.w.values.size());
  batch_view<double> const GX{gx.data(), p.bx, p.nx, p.d}, GY{gy.data(), p.by, p.ny, p.d};
  matrix_view<double const> const G{p.G.data(), p.bx, p.by};
  REQUIRE_NOTHROW(cdist_shared_vjp(p.w.view(), p.X(), p.Y(), G, GX, GY, dv.data(), Cv, p.options()));
  // C over G: C was written while G was read (GY off by 1.8)
  std::vector<double> g2 = p.G;
  CHECK_THROWS_WITH(cdist_shared_vjp(p.w.view(), p.X(), p.Y(), matrix_view<double const>{g2.data(), p.bx, p.by},
                                     GX, GY, dv.data(), matrix_view<double>{g2.data(), p.bx, p.by}, p.options()),
                    Catch::Contains("C overlaps the input G"));
  // GX over X
  std::vector<double> xs = p.xs;
  batch_view<double const> const Xc{xs.data(), p.bx, p.nx, p.d};
  CHECK_THROWS_WITH(cdist_shared_vjp(p.w.view(), Xc, p.Y(), G, batch_view<double>{xs.data(), p.bx, p.nx, p.d},
                                     GY, dv.data(), {}, p.options()),
                    Catch::Contains("GX overlaps the input X"));
  // GX or C over the series' knots, which the dv pass reads after both are written (a
  // reviewer's case: dv off by 9.7, finite, no error)
  std::vector<double> kx(p.xs.size());
  std::copy(p.xk.begin(), p.xk.end(), kx.begin());
  auto ok = p.options();
  ok.x_knots = kx.data();
  CHECK_THROWS_WITH(cdist_shared_vjp(p.w.view(), p.X(), p.Y(), G, batch_view<double>{kx.data(), p.bx, p.nx, p.d},
                                     GY, dv.data(), {}, ok),
                    Catch::Contains("GX overlaps the input x_knots"));
  CHECK_THROWS_WITH(cdist_shared_vjp(p.w.view(), p.X(), p.Y(), G, GX, GY, dv.data(),
                                     matrix_view<double>{kx.data(), p.bx, p.by}, ok),
                    Catch::Contains("C overlaps the input x_knots"));
  CHECK_THROWS_WITH(cdist_shared(p.w.view(), p.X(), p.Y(), matrix_view<double>{kx.data(), p.bx, p.by}, ok),
                    Catch::Contains("C overlaps the input x_knots"));
  // samples whose squared differences overflow: refused as distances() refuses them (C was inf)
  p.xs[3] = 1e200;
  CHECK_THROWS_WITH(cdist_shared(p.w.view(), p.X(), p.Y(), Cv, p.options()),
                    Catch::Contains("FastCDTW takes magnitudes up to"));
}

TEST_CASE("shared-warp: an empty batch needs no cost matrix or upstream gradient", "[fcdtw][shared]") {
  // cdist_shared accepted a null C there, cdist_shared_vjp refused a null G
  problem const p(60, false);
  batch_view<double const> const none{p.xs.data(), 0, p.nx, p.d};
  cdist_shared(p.w.view(), none, p.Y(), matrix_view<double>{nullptr, 0, p.by}, p.options());
  index_t const K = p.w.segments();
  std::vector<double> dv(K + 1, 9.0), gy(p.ys.size(), 9.0);
  cdist_shared_vjp(p.w.view(), none, p.Y(), matrix_view<double const>{nullptr, 0, p.by}, batch_view<double>{},
                   batch_view<double>{gy.data(), p.by, p.ny, p.d}, dv.data(), {}, p.options());
  for (double g : dv) CHECK(g == 0.0);
  for (double g : gy) CHECK(g == 0.0);
}

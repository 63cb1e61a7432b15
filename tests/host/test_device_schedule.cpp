// The CUDA backend's block programs (include/resilin/backend/device/wavefront.hpp), run on the
// CPU with an emulated CTA: every thread index of a step in turn, the steps in lock-step, the
// workspace poisoned with NaN. These are the kernels' exact per-thread bodies, so this checks
// the device traversal (diagonal and band index math, rolling rings, R layout, backward
// recurrence, divergence epilogues, gradient stencil phases) on a machine without a GPU,
// against the host backend: values, gradients and alignment matrices on random ragged,
// banded shapes, float and double, hard and soft. The thread order within a step must not
// matter (forward and reverse order give the same bits).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>
#include <utility>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include <resilin/backend/device/wavefront.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace dd = resilin::device_detail;
using resilin_test::random_values;

namespace {

template <class T>
struct ragged {
  r::index_t count, max_length, channels;
  std::vector<r::index_t> lengths;
  std::vector<T> data;
  ragged(r::index_t b, r::index_t L, r::index_t d, std::uint64_t seed, bool full)
      : count(b), max_length(L), channels(d) {
    auto const u = random_values(static_cast<std::size_t>(b), seed * 7 + 3, 0, 1);
    for (r::index_t k = 0; k < b; ++k)
      lengths.push_back(full ? L : 1 + static_cast<r::index_t>(u[static_cast<std::size_t>(k)] * double(L)) % L);
    if (!full && b > 1) lengths[1] = L;
    data = resilin_test::cast<T>(random_values(static_cast<std::size_t>(b * L * d), seed, -1, 1));
    for (r::index_t k = 0; k < b; ++k)
      for (r::index_t t = lengths[static_cast<std::size_t>(k)]; t < L; ++t)
        for (r::index_t c = 0; c < d; ++c) data[static_cast<std::size_t>((k * L + t) * d + c)] = T(1e3);
  }
  r::batch_view<T const> view() const {
    return r::make_batch(std::span<T const>(data), count, max_length, channels,
                         std::span<r::index_t const>(lengths));
  }
};

template <class T>
std::vector<T> poisoned(std::size_t n) {
  return std::vector<T>(n, std::numeric_limits<T>::quiet_NaN());
}

struct launch_options {
  int threads = 0;  // 0: the plan's choice
  bool reverse = false;
  r::device_schedule schedule = r::device_schedule::automatic;
  r::training_store storage = r::training_store::automatic;
  bool stage = true;  // the strip warp stages its rows series (when the plan does)
};

/// What the CUDA launcher does, with the emulated CTA in place of a kernel launch.
template <class T, class Cost, class Smooth>
std::vector<T> emulate_values(r::measure<Cost, Smooth> const& m, r::batch_view<T const> X,
                              r::batch_view<T const> Y, dd::job_layout layout,
                              launch_options lo = {}) {
  auto const plan = dd::value_plan::make(layout, X.batch, Y.batch, X.max_length, Y.max_length,
                                         m.divergence, sizeof(T), lo.schedule, 0,
                                         false, X.channels);
  std::vector<T> results = poisoned<T>(static_cast<std::size_t>(plan.jobs));
  dd::value_args<T, Cost, Smooth> const a{m.cost, m.smooth,
                                          dd::make_device_band(m.band),
                                          X, Y, layout, results.data(), plan.stride};
  dd::emulated_cta const ex{lo.threads ? lo.threads : plan.threads, lo.reverse};
  if (plan.tiled) {  // one "launch" per tile diagonal; borders and rings start poisoned
    std::vector<T> borders = poisoned<T>(plan.borders_bytes / sizeof(T));
    dd::tiled_args<T, Cost, Smooth> const ta{a, borders.data(), plan.tiles_per_diagonal};
    bool const dist = dd::uses_distance_tiles<Cost>(X.channels);
    for (r::index_t d = 0; d < plan.tile_diagonals; ++d)
      for (r::index_t job = 0; job < plan.jobs; ++job)
        for (r::index_t t = 0; t < plan.tiles_per_diagonal; ++t) {  // reverse: the last tile first
          r::index_t const k = lo.reverse ? plan.tiles_per_diagonal - 1 - t : t;
          std::vector<T> ring = poisoned<T>(static_cast<std::size_t>(3 * dd::tile_size));
          std::vector<T> tile = poisoned<T>(static_cast<std::size_t>(dist ? dd::distance_tile_values() : 0));
          dd::tiled_value_block(ex, ta, job, d, k, ring.data(), dist ? tile.data() : nullptr);
        }
  } else if (plan.shuffle) {  // registers only: no ring
    for (r::index_t k = 0; k < plan.jobs; ++k) dd::value_shuffle_block(dd::emulated_warp{lo.reverse}, a, k);
  } else if (plan.strip) {  // registers, and the stage (poisoned) of the rows series
    r::index_t const values = lo.stage ? plan.stage_values : 0;
    for (r::index_t k = 0; k < plan.jobs; ++k) {
      std::vector<T> stage = poisoned<T>(static_cast<std::size_t>(values));
      dd::with_univariate(X.channels, [&](auto univariate) {  // the launcher's choice of kernel
        dd::value_strip_block<decltype(univariate)::value>(dd::emulated_warp{lo.reverse}, a, k,
                                                             values ? stage.data() : nullptr, values);
      });
    }
  } else {
    for (r::index_t k = 0; k < plan.jobs; ++k) {
      std::vector<T> ring = poisoned<T>(static_cast<std::size_t>(3 * plan.stride));
      dd::value_block(ex, a, k, ring.data());
    }
  }
  if (!m.divergence) return results;
  if (layout == dd::job_layout::paired) {
    std::vector<T> out(static_cast<std::size_t>(X.batch));
    for (r::index_t b = 0; b < X.batch; ++b) dd::divergence_paired(results.data(), X.batch, out.data(), b);
    return out;
  }
  std::vector<T> out(static_cast<std::size_t>(X.batch * Y.batch));
  for (r::index_t k = 0; k < X.batch * Y.batch; ++k)
    dd::divergence_pairwise(results.data(), X.batch, Y.batch, out.data(), k);
  return out;
}

template <class T>
struct train_result {
  std::vector<T> values, gx, gy, e;
};

template <class T, class Cost, class Smooth>
train_result<T> emulate_train(r::measure<Cost, Smooth> const& m, r::batch_view<T const> X,
                              r::batch_view<T const> Y, std::vector<T> const* upstream,
                              bool want_grad, bool want_e, launch_options lo = {}) {
  r::index_t const B = X.batch, d = X.channels;
  auto const plan = dd::train_plan::make(B, X.max_length, Y.max_length, d, m.divergence, true,
                                         sizeof(T),
                                         lo.schedule, lo.storage);
  train_result<T> res;
  std::vector<T> jobs = poisoned<T>(static_cast<std::size_t>(plan.jobs));
  std::vector<T> store = poisoned<T>(plan.store_bytes / sizeof(T));
  std::size_t const xs = static_cast<std::size_t>(B * X.max_length * d),
                    ys = static_cast<std::size_t>(B * Y.max_length * d);
  res.gx.assign(want_grad ? xs : 0, T(0));
  res.gy.assign(want_grad ? ys : 0, T(0));
  std::vector<T> self(want_grad && m.divergence ? 2 * (xs + ys) : 0, T(0));
  res.e.assign(want_e ? static_cast<std::size_t>(B * X.max_length * Y.max_length) : 0, T(0));
  dd::train_args<T, Cost, Smooth> a{};
  a.cost = m.cost;
  a.smooth = m.smooth;
  a.band = dd::make_device_band(m.band);
  a.X = X;
  a.Y = Y;
  a.results = jobs.data();
  a.upstream = upstream ? upstream->data() : nullptr;
  a.store = store.data();
  for (int p = 0; p < 3; ++p) {
    a.slot_offset[p] = plan.slot_offset[p];
    a.slot_size[p] = plan.slot_size[p];
  }
  a.stride = plan.stride;
  a.checkpoint = plan.checkpoint;
  if (want_grad) {
    a.gx0 = res.gx.data();
    a.gy0 = res.gy.data();
    if (m.divergence) {
      a.gx1 = self.data();
      a.gx2 = self.data() + xs;
      a.gy1 = self.data() + 2 * xs;
      a.gy2 = self.data() + 2 * xs + ys;
    }
  }
  a.e = want_e ? res.e.data() : nullptr;
  dd::emulated_cta const ex{lo.threads ? lo.threads : plan.threads, lo.reverse};
  if (plan.tiled) {  // one "launch" per tile diagonal, forward then backward; rings poisoned
    bool const dist = dd::uses_distance_tiles<Cost>(X.channels);
    auto const each_tile = [&](auto&& block) {
      for (r::index_t job = 0; job < plan.jobs; ++job)
        for (r::index_t t = 0; t < plan.tiles_per_diagonal; ++t) {  // reverse: the last tile first
          r::index_t const k = lo.reverse ? plan.tiles_per_diagonal - 1 - t : t;
          std::vector<T> ring = poisoned<T>(static_cast<std::size_t>(7 * dd::tile_size));
          std::vector<T> tile = poisoned<T>(static_cast<std::size_t>(dist ? dd::distance_tile_values() : 0));
          block(job, k, ring.data(), dist ? tile.data() : nullptr);
        }
    };
    for (r::index_t td = 0; td < plan.tile_diagonals; ++td)
      each_tile([&](r::index_t job, r::index_t k, T* ring, T* tile) {
        dd::tiled_train_forward_block(ex, a, job, td, k, ring, tile);
      });
    int const launches = dd::tiled_backward_launches<Cost>(want_grad);
    if (want_grad || want_e)
      for (r::index_t td = plan.tile_diagonals - 1; td >= 0; --td)
        for (int l = 0; l < launches; ++l)
          each_tile([&](r::index_t job, r::index_t k, T* ring, T* tile) {
            dd::tiled_train_backward_block(ex, a, job, td, k, launches > 1 ? l : -1, ring, tile);
          });
  } else if (plan.shuffle) {  // registers only: no ring
    for (r::index_t k = 0; k < plan.jobs; ++k) dd::train_shuffle_block(dd::emulated_warp{lo.reverse}, a, k);
  } else {
    for (r::index_t k = 0; k < plan.jobs; ++k) {
      std::vector<T> ring = poisoned<T>(static_cast<std::size_t>(7 * plan.stride));
      dd::train_block(ex, a, k, ring.data());
    }
  }
  res.values.resize(static_cast<std::size_t>(B));
  if (m.divergence) {
    for (r::index_t b = 0; b < B; ++b) dd::divergence_paired(jobs.data(), B, res.values.data(), b);
    if (want_grad) {
      for (std::size_t k = 0; k < xs; ++k) dd::add_two(res.gx.data(), a.gx1, a.gx2, static_cast<r::index_t>(k));
      for (std::size_t k = 0; k < ys; ++k) dd::add_two(res.gy.data(), a.gy1, a.gy2, static_cast<r::index_t>(k));
    }
  } else {
    for (r::index_t b = 0; b < B; ++b) res.values[static_cast<std::size_t>(b)] = jobs[static_cast<std::size_t>(b)];
  }
  return res;
}

template <class T>
double tolerance() { return std::is_same_v<T, double> ? 1e-12 : 1e-5; }

/// max |a - b| / max(1, |b|) over the entries; infinities must match exactly.
template <class A, class B>
double rel_err(A const& a, B const& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    double const x = double(a[k]), y = double(b[k]);
    if (std::isinf(y) && x == y) continue;
    double const d = std::abs(x - y) / std::max(1.0, std::abs(y));
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

/// A cost model whose moves read x_{i-1} and y_{j-1} (first differences, like derivative
/// DTW, plus the point distance): exercises the generic path with a gradient stencil of 2.
struct difference_cost {
  template <class T>
  RESILIN_HD r::step3<T> step(r::series_view<T const> x, r::series_view<T const> y, r::index_t i,
                              r::index_t j) const noexcept {
    T s = T(0);
    for (r::index_t c = 0; c < x.channels; ++c) {
      T const dx = i > 0 ? x(i, c) - x(i - 1, c) : T(0);
      T const dy = j > 0 ? y(j, c) - y(j - 1, c) : T(0);
      T const e = x(i, c) - y(j, c);
      s += (dx - dy) * (dx - dy) + e * e;
    }
    return {s, s + T(0.25), s + T(0.5)};
  }
  template <class T>
  RESILIN_HD void step_grad(r::series_view<T const> x, r::series_view<T const> y, r::index_t i,
                            r::index_t j, r::step3<T> u, r::series_view<T> gx,
                            r::series_view<T> gy) const noexcept {
    T const w = u.diag + u.up + u.left;
    for (r::index_t c = 0; c < x.channels; ++c) {
      T const dx = i > 0 ? x(i, c) - x(i - 1, c) : T(0);
      T const dy = j > 0 ? y(j, c) - y(j - 1, c) : T(0);
      T const e = x(i, c) - y(j, c);
      T const g = T(2) * w * (dx - dy);
      gx(i, c) += g + T(2) * w * e;
      if (i > 0) gx(i - 1, c) -= g;
      gy(j, c) -= g + T(2) * w * e;
      if (j > 0) gy(j - 1, c) += g;
    }
  }
};
static_assert(r::differentiable_cost_model<difference_cost, double>);
static_assert(r::grad_stencil<difference_cost>::value == 2);
static_assert(r::grad_stencil<r::dtw_cost<>>::value == 1);

/// A user's point distance, 2 |a - b|^2: value and partial only (no term(): the tiles compute
/// each cell's distance by value()).
struct weighted_distance {
  template <class T>
  RESILIN_HD static T value(T const* a, T const* b, r::index_t channels) noexcept {
    T s = T(0);
    for (r::index_t c = 0; c < channels; ++c) s += T(2) * (a[c] - b[c]) * (a[c] - b[c]);
    return s;
  }
  template <class T>
  RESILIN_HD static T partial(T a, T b) noexcept { return T(4) * (a - b); }
};

std::vector<r::band_spec> bands() {
  return {r::band_spec::none(), r::band_spec::radius(0), r::band_spec::radius(2),
          r::band_spec::radius(5), r::band_spec::window(0.1), r::band_spec::window(0.3),
          r::band_spec::itakura(1.5)};
}

/// The bands of the heaviest emulations: bands(), or three of them in the sanitizer build
/// (resilin_test::unless_sanitized).
std::vector<r::band_spec> heavy_bands() {
  if (resilin_test::sanitized)
    return {r::band_spec::none(), r::band_spec::radius(0), r::band_spec::window(0.1)};
  return bands();
}

}  // namespace

TEST_CASE("device schedule: the diagonal spans are the band's cells", "[device][schedule]") {
  for (r::index_t n = 1; n <= 13; ++n)
    for (r::index_t m = 1; m <= 13; ++m)
      for (r::index_t R : {-1, 0, 1, 2, 3, 7}) {
        auto const g = r::band_geometry::make(n, m, R);
        std::vector<int> seen(static_cast<std::size_t>(n * m), 0);
        for (r::index_t t = -2; t <= n + m; ++t) {
          dd::diag_span const s = dd::diagonal(g, t);
          for (r::index_t i = 0; i < n; ++i) {
            r::index_t const j = t - i;
            bool const in = j >= 0 && j < m && g.contains(i, j);
            INFO("n " << n << " m " << m << " R " << R << " t " << t << " i " << i);
            CHECK(s.contains(i) == in);
          }
        }
        // anti-diagonal-major layout: a bijection onto [0, n m)
        for (r::index_t i = 0; i < n; ++i)
          for (r::index_t j = 0; j < m; ++j) {
            r::index_t const k = dd::diag_index(n, m, i, j);
            REQUIRE(k >= 0);
            REQUIRE(k < n * m);
            ++seen[static_cast<std::size_t>(k)];
          }
        for (int c : seen) CHECK(c == 1);
        CHECK(dd::diag_offset(n, m, n + m - 1) == n * m);
      }
}

TEST_CASE("device schedule: the device band resolves like band_spec", "[device][schedule]") {
  std::vector<r::band_spec> all = bands();
  // windows whose products land next to integers (0.07 * 100 = 7.000000000000001), and the ends
  for (double f : {0.0, 0.07, 0.15, 1.0 / 3.0, 0.29, 0.57, 1.0, 2.5})
    all.push_back(r::band_spec::window(f));
  all.push_back(r::band_spec::radius(100000));
  for (auto const& b : all) {
    auto const db = dd::make_device_band(b);
    INFO("band kind " << int(b.type()) << " window " << b.window_fraction());
    for (r::index_t n : {1, 2, 5, 17, 100, 300})
      for (r::index_t m : {1, 3, 17, 299}) {
        CHECK(db.radius_for(n, m) == b.radius_for(n, m));
        auto const gd = db.geometry(n, m), gh = b.geometry(n, m);
        CHECK((gd.n == gh.n && gd.m == gh.m && gd.half_width == gh.half_width && gd.slope == gh.slope));
      }
    for (r::index_t L = 0; L <= 5000; ++L) REQUIRE(db.radius_for(L, 1) == b.radius_for(L, 1));
    for (r::index_t L : {r::index_t(1) << 20, r::index_t(1) << 31, r::index_t(1) << 40})
      CHECK(db.radius_for(1, L) == b.radius_for(1, L));
  }
}

TEMPLATE_TEST_CASE("device schedule: values equal the host backend", "[device][schedule]", float,
                   double) {
  using T = TestType;
  std::uint64_t seed = 100;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      for (int smooth = 0; smooth < 3; ++smooth) {
        ++seed;
        ragged<T> const X(5, 23, 2, seed, false), Y(5, 31, 2, seed + 50, false);
        auto check = [&](auto const& meas) {
          INFO("band kind " << int(band.type()) << " divergence " << div << " smooth " << smooth);
          std::vector<T> host(5);
          r::values(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<T>(host));
          auto const dev = emulate_values(meas, X.view(), Y.view(), dd::job_layout::paired);
          CHECK(rel_err(dev, host) <= tolerance<T>());
          // pairwise (cdist) form
          std::vector<T> hp(25);
          r::pairwise(r::host.with_threads(1), meas, X.view(), Y.view(), r::matrix_view<T>{hp.data(), 5, 5});
          auto const dp = emulate_values(meas, X.view(), Y.view(), dd::job_layout::pairwise);
          CHECK(rel_err(dp, hp) <= tolerance<T>());
          // any thread count, any order within a step: the same bits
          auto const d1 = emulate_values(meas, X.view(), Y.view(), dd::job_layout::paired, {1, false});
          auto const d7 = emulate_values(meas, X.view(), Y.view(), dd::job_layout::paired, {7, true});
          CHECK(resilin_test::bitwise_equal(d1, dev));
          CHECK(resilin_test::bitwise_equal(d7, dev));
        };
        if (smooth == 2) {
          auto meas = r::measures::dtw().with_band(band);
          meas.divergence = div;
          check(meas);
        } else {
          T const gamma = smooth == 0 ? T(1) : T(0.05);
          auto meas = r::measures::soft_dtw<T>(gamma, band);
          meas.divergence = div;
          check(meas);
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("device schedule: gradients equal the host backend", "[device][schedule]",
                   float, double) {
  using T = TestType;
  std::uint64_t seed = 900;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      for (int smooth = 0; smooth < 3; ++smooth) {
        ++seed;
        r::index_t const B = 4, d = 3;
        ragged<T> const X(B, 19, d, seed, false), Y(B, 14, d, seed + 77, false);
        std::vector<T> const up = resilin_test::cast<T>(random_values(B, seed + 5, 0.5, 2));
        auto check = [&](auto const& meas) {
          INFO("band kind " << int(band.type()) << " divergence " << div << " smooth " << smooth);
          std::vector<T> hv(B), hgx(X.data.size()), hgy(Y.data.size());
          r::values_and_grads(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<T>(hv),
                              r::batch_view<T>{hgx.data(), B, X.max_length, d, X.lengths.data()},
                              r::batch_view<T>{hgy.data(), B, Y.max_length, d, Y.lengths.data()},
                              std::span<T const>(up));
          auto const dv = emulate_train(meas, X.view(), Y.view(), &up, true, false);
          CHECK(rel_err(dv.values, hv) <= tolerance<T>());
          CHECK(rel_err(dv.gx, hgx) <= 10 * tolerance<T>());
          CHECK(rel_err(dv.gy, hgy) <= 10 * tolerance<T>());
          auto const d5 = emulate_train(meas, X.view(), Y.view(), &up, true, false, {5, true});
          CHECK(resilin_test::bitwise_equal(d5.gx, dv.gx));
          CHECK(resilin_test::bitwise_equal(d5.gy, dv.gy));
          CHECK(resilin_test::bitwise_equal(d5.values, dv.values));
        };
        if (smooth == 2) {
          auto meas = r::measures::dtw().with_band(band);
          meas.divergence = div;
          check(meas);
        } else {
          T const gamma = smooth == 0 ? T(1) : T(0.1);
          auto meas = r::measures::soft_dtw<T>(gamma, band);
          meas.divergence = div;
          check(meas);
        }
      }
    }
  }
}

/// What launch_pairwise_grads does: expand the |X| |Y| pairs into a paired batch, train it with
/// upstream = weights, sum each X[a]'s jobs over b.
template <class T, class Cost, class Smooth>
std::pair<std::vector<T>, std::vector<T>> emulate_pairwise_grads(r::measure<Cost, Smooth> const& m,
                                                                 r::batch_view<T const> X,
                                                                 r::batch_view<T const> Y,
                                                                 std::vector<T> const& weights) {
  r::index_t const nx = X.batch, ny = Y.batch, jobs = nx * ny, d = X.channels;
  r::index_t const xrow = X.max_length * d, yrow = Y.max_length * d;
  std::vector<T> xe = poisoned<T>(static_cast<std::size_t>(jobs * xrow)),
                 ye = poisoned<T>(static_cast<std::size_t>(jobs * yrow));
  std::vector<r::index_t> xl(static_cast<std::size_t>(jobs), -1), yl(static_cast<std::size_t>(jobs), -1);
  for (r::index_t k = 0; k < jobs * xrow; ++k) dd::expand_pairwise(X.data, xrow, ny, true, xe.data(), k);
  for (r::index_t k = 0; k < jobs * yrow; ++k) dd::expand_pairwise(Y.data, yrow, ny, false, ye.data(), k);
  for (r::index_t k = 0; k < jobs; ++k) {
    dd::expand_pairwise(X.lengths, 1, ny, true, xl.data(), k);
    dd::expand_pairwise(Y.lengths, 1, ny, false, yl.data(), k);
  }
  r::batch_view<T const> const Xe{xe.data(), jobs, X.max_length, d, xl.data()};
  r::batch_view<T const> const Ye{ye.data(), jobs, Y.max_length, d, yl.data()};
  auto const t = emulate_train(m, Xe, Ye, &weights, true, false);
  std::vector<T> gx = poisoned<T>(static_cast<std::size_t>(nx * xrow));
  for (r::index_t k = 0; k < nx * xrow; ++k) dd::sum_pairwise_grads(t.gx.data(), xrow, ny, gx.data(), k);
  return {t.values, gx};
}

TEMPLATE_TEST_CASE("device schedule: pairwise gradients equal the host backend", "[device][schedule]",
                   float, double) {
  using T = TestType;
  std::uint64_t seed = 1300;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      ++seed;
      r::index_t const nx = 3, ny = 4, d = 2;
      ragged<T> const X(nx, 17, d, seed, false), Y(ny, 13, d, seed + 31, false);
      std::vector<T> const w = resilin_test::cast<T>(random_values(nx * ny, seed + 9, 0.25, 2));
      auto meas = r::measures::soft_dtw<T>(T(0.3), band);
      meas.divergence = div;
      INFO("band kind " << int(band.type()) << " divergence " << div);
      std::vector<T> hv(nx * ny), hg(X.data.size());
      r::pairwise_grads(r::host.with_threads(1), meas, X.view(), Y.view(),
                        r::batch_view<T>{hg.data(), nx, X.max_length, d, X.lengths.data()},
                        r::matrix_view<T>{hv.data(), nx, ny}, r::matrix_view<T const>{w.data(), nx, ny});
      auto const [dv, dg] = emulate_pairwise_grads(meas, X.view(), Y.view(), w);
      CHECK(rel_err(dv, hv) <= tolerance<T>());
      CHECK(rel_err(dg, hg) <= 10 * ny * tolerance<T>());
    }
  }
}

/// What launch_per_channel does for a measure with independent channels: X and Y copied
/// channel-major, run(Xc, Yc) once per channel on one-channel batches (the univariate launches,
/// emulated), the channels' `count` values summed in channel order, their gradients merged back.
template <class T, class Run>
train_result<T> emulate_per_channel(ragged<T> const& X, ragged<T> const& Y, r::index_t count,
                                    bool grads, Run const& run) {
  r::index_t const d = X.channels, xn = X.count * X.max_length, yn = Y.count * Y.max_length;
  std::vector<T> xs = poisoned<T>(static_cast<std::size_t>(d * xn)), ys = poisoned<T>(static_cast<std::size_t>(d * yn));
  for (r::index_t k = 0; k < d * xn; ++k) dd::split_channels(X.data.data(), X.count, X.max_length, d, xs.data(), k);
  for (r::index_t k = 0; k < d * yn; ++k) dd::split_channels(Y.data.data(), Y.count, Y.max_length, d, ys.data(), k);
  std::vector<T> values = poisoned<T>(static_cast<std::size_t>(d * count));
  std::vector<T> gxs = poisoned<T>(static_cast<std::size_t>(d * xn)), gys = poisoned<T>(static_cast<std::size_t>(d * yn));
  for (r::index_t c = 0; c < d; ++c) {
    r::batch_view<T const> const Xc{xs.data() + c * xn, X.count, X.max_length, 1, X.lengths.data()};
    r::batch_view<T const> const Yc{ys.data() + c * yn, Y.count, Y.max_length, 1, Y.lengths.data()};
    train_result<T> const t = run(Xc, Yc);
    REQUIRE(static_cast<r::index_t>(t.values.size()) == count);
    std::copy(t.values.begin(), t.values.end(), values.begin() + c * count);
    if (!grads) continue;
    REQUIRE(static_cast<r::index_t>(t.gx.size()) == xn);
    std::copy(t.gx.begin(), t.gx.end(), gxs.begin() + c * xn);
    if (!t.gy.empty()) std::copy(t.gy.begin(), t.gy.end(), gys.begin() + c * yn);
  }
  train_result<T> res;
  res.values = poisoned<T>(static_cast<std::size_t>(count));
  for (r::index_t k = 0; k < count; ++k) dd::sum_channels(values.data(), count, d, res.values.data(), k);
  if (grads) {
    res.gx = poisoned<T>(X.data.size());
    res.gy = poisoned<T>(Y.data.size());
    for (r::index_t k = 0; k < d * xn; ++k) dd::merge_channels(gxs.data(), X.count, X.max_length, d, res.gx.data(), k);
    for (r::index_t k = 0; k < d * yn; ++k) dd::merge_channels(gys.data(), Y.count, Y.max_length, d, res.gy.data(), k);
  }
  return res;
}

TEMPLATE_TEST_CASE("device schedule: independent channels, one univariate problem per channel, "
                   "equal the host backend", "[device][schedule][channels]", float, double) {
  using T = TestType;
  using dd::job_layout;
  std::uint64_t seed = 2100;
  for (auto const& band : {r::band_spec::none(), r::band_spec::radius(2), r::band_spec::window(0.3)}) {
    ++seed;
    r::index_t const B = 3, ny = 4, d = 3;
    ragged<T> const X(B, 17, d, seed, false), Y(B, 13, d, seed + 31, false), Z(ny, 15, d, seed + 57, false);
    std::vector<T> const up = resilin_test::cast<T>(random_values(B, seed + 5, 0.5, 2));
    std::vector<T> const w = resilin_test::cast<T>(random_values(B * ny, seed + 9, 0.25, 2));
    auto check = [&](auto const& meas, char const* name) {
      INFO(name << ", band kind " << int(band.type()));
      REQUIRE(meas.independent_channels);
      auto const one = meas.single_channel();
      auto const host = r::host.with_threads(1);
      // paired values
      std::vector<T> hv(B);
      r::values(host, meas, X.view(), Y.view(), std::span<T>(hv));
      auto const dv = emulate_per_channel(X, Y, B, false, [&](auto Xc, auto Yc) {
        return train_result<T>{emulate_values(one, Xc, Yc, job_layout::paired), {}, {}, {}};
      });
      CHECK(rel_err(dv.values, hv) <= tolerance<T>());
      // pairwise values
      std::vector<T> hp(B * ny);
      r::pairwise(host, meas, X.view(), Z.view(), r::matrix_view<T>{hp.data(), B, ny});
      auto const dp = emulate_per_channel(X, Z, B * ny, false, [&](auto Xc, auto Zc) {
        return train_result<T>{emulate_values(one, Xc, Zc, job_layout::pairwise), {}, {}, {}};
      });
      CHECK(rel_err(dp.values, hp) <= tolerance<T>());
      // values and gradients, with an upstream
      std::vector<T> hgx(X.data.size()), hgy(Y.data.size());
      r::values_and_grads(host, meas, X.view(), Y.view(), std::span<T>(hv),
                          r::batch_view<T>{hgx.data(), B, X.max_length, d, X.lengths.data()},
                          r::batch_view<T>{hgy.data(), B, Y.max_length, d, Y.lengths.data()},
                          std::span<T const>(up));
      auto const dt = emulate_per_channel(X, Y, B, true, [&](auto Xc, auto Yc) {
        return emulate_train(one, Xc, Yc, &up, true, false);
      });
      CHECK(rel_err(dt.values, hv) <= tolerance<T>());
      CHECK(rel_err(dt.gx, hgx) <= 10 * tolerance<T>());
      CHECK(rel_err(dt.gy, hgy) <= 10 * tolerance<T>());
      // pairwise gradients, weighted
      std::vector<T> hg(X.data.size());
      r::pairwise_grads(host, meas, X.view(), Z.view(),
                        r::batch_view<T>{hg.data(), B, X.max_length, d, X.lengths.data()},
                        r::matrix_view<T>{hp.data(), B, ny}, r::matrix_view<T const>{w.data(), B, ny});
      auto const dg = emulate_per_channel(X, Z, B * ny, true, [&](auto Xc, auto Zc) {
        auto [v, g] = emulate_pairwise_grads(one, Xc, Zc, w);
        return train_result<T>{v, g, {}, {}};
      });
      CHECK(rel_err(dg.values, hp) <= tolerance<T>());
      CHECK(rel_err(dg.gx, hg) <= 10 * ny * tolerance<T>());
    };
    check(r::measures::soft_msm<T>(T(0.5), T(1), band), "soft-msm");
    check(r::measures::soft_msm_divergence<T>(T(0.3), T(0.5), band), "soft-msm divergence");
    check(r::measures::msm(0.5, band), "msm");
    auto sdtw = r::measures::soft_dtw<T>(T(0.4), band);
    sdtw.independent_channels = true;  // any cost model
    check(sdtw, "soft-dtw, channels independent");
  }
}

TEST_CASE("device schedule: alignment matrices equal the host backend", "[device][schedule]") {
  using T = double;
  r::index_t const B = 3;
  ragged<T> const X(B, 17, 2, 4242, false), Y(B, 21, 2, 4343, false);
  for (auto const& band : bands()) {
    auto const meas = r::measures::soft_dtw<T>(0.3, band);
    auto const dv = emulate_train<T>(meas, X.view(), Y.view(), nullptr, false, true);
    for (r::index_t b = 0; b < B; ++b) {
      r::index_t const n = X.lengths[static_cast<std::size_t>(b)], m = Y.lengths[static_cast<std::size_t>(b)];
      std::vector<T> e(static_cast<std::size_t>(n * m));
      T const v = r::alignment_matrix(meas, X.view()[b], Y.view()[b], r::matrix_view<T>{e.data(), n, m});
      CHECK(std::abs(dv.values[static_cast<std::size_t>(b)] - v) <= 1e-12 * std::max(1.0, std::abs(v)));
      double worst = 0;
      for (r::index_t i = 0; i < X.max_length; ++i)
        for (r::index_t j = 0; j < Y.max_length; ++j) {
          T const got = dv.e[static_cast<std::size_t>((b * X.max_length + i) * Y.max_length + j)];
          T const want = (i < n && j < m) ? e[static_cast<std::size_t>(i * m + j)] : T(0);
          worst = std::max(worst, std::abs(got - want));
        }
      CHECK(worst <= 1e-12);
    }
  }
}

TEST_CASE("device schedule: a cost with a gradient stencil of 2 (generic path)", "[device][schedule]") {
  using T = double;
  r::index_t const B = 4, d = 2;
  ragged<T> const X(B, 16, d, 77, false), Y(B, 20, d, 78, false);
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      r::measure<difference_cost, r::soft_min<T>> meas{{}, {T(0.5)}, band, div};
      std::vector<T> hv(B), hgx(X.data.size()), hgy(Y.data.size());
      r::values_and_grads(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<T>(hv),
                          r::batch_view<T>{hgx.data(), B, X.max_length, d, X.lengths.data()},
                          r::batch_view<T>{hgy.data(), B, Y.max_length, d, Y.lengths.data()});
      auto const dv = emulate_train<T>(meas, X.view(), Y.view(), nullptr, true, false, {3, true});
      CHECK(rel_err(dv.values, hv) <= 1e-12);
      CHECK(rel_err(dv.gx, hgx) <= 1e-11);
      CHECK(rel_err(dv.gy, hgy) <= 1e-11);
      std::vector<T> vv(B);
      r::values(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<T>(vv));
      auto const ev = emulate_values(meas, X.view(), Y.view(), dd::job_layout::paired);
      CHECK(rel_err(ev, vv) <= 1e-12);
    }
  }
}

TEST_CASE("device schedule: long sequences at gamma 0.01 stay finite", "[device][schedule]") {
  using T = float;
  r::index_t const B = 2, L = 600;
  ragged<T> const X(B, L, 3, 5, true), Y(B, L - 37, 3, 6, true);
  auto const meas = r::measures::soft_dtw<T>(T(0.01));
  auto const dv = emulate_train<T>(meas, X.view(), Y.view(), nullptr, true, false);
  CHECK(resilin_test::all_finite(dv.values));
  CHECK(resilin_test::all_finite(dv.gx));
  CHECK(resilin_test::all_finite(dv.gy));
  std::vector<T> hv(B);
  r::values(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<T>(hv));
  CHECK(rel_err(dv.values, hv) <= 1e-5);
}

TEST_CASE("device schedule: workspace plans", "[device][schedule]") {
  // value-only: O(min(n, m)) per pair, in shared memory for moderate lengths, nothing global
  auto const v = dd::value_plan::make(dd::job_layout::paired, 32, 32, 1024, 4096, false, 4);
  CHECK(v.stride == 1024);
  CHECK(v.shared_ring);
  CHECK(v.bytes == 1);  // never 0: a null workspace is the size query
  auto const vl = dd::value_plan::make(dd::job_layout::paired, 4, 4, 65536, 65536, false, 8);
  CHECK_FALSE(vl.shared_ring);
  CHECK(vl.bytes == dd::align_up(4 * 3 * 65536 * 8));
  // training: R (one value per cell) plus O(n) per pair
  auto const t = dd::train_plan::make(32, 1024, 1024, 64, false, false, 4);
  CHECK(t.store_bytes == std::size_t(32) * 1024 * 1024 * 4);
  CHECK(t.shared_ring);
  CHECK(t.bytes == t.store_bytes);
}

TEST_CASE("device schedule: the headline's training memory (issue 3's goal: <= 1.1 x (inputs + one "
          "value per cell))", "[device][schedule]") {
  // B = 32, n = m = 1024, d = 64, float, as bm_soft_dtw_cuda's headline row counts it: inputs,
  // gradient outputs, values and the workspace; automatic on an H200 (132 SMs, opt-in shared
  // memory for the distance tiles) is tiled, and one CTA per pair for comparison
  double const inputs = 2.0 * 32 * 1024 * 64 * 4, cells = 32.0 * 1024 * 1024 * 4, values = 32 * 4;
  for (auto const schedule : {r::device_schedule::automatic, r::device_schedule::block_per_pair}) {
    auto const p = dd::train_plan::make(32, 1024, 1024, 64, false, false, 4, schedule,
                                        r::training_store::automatic, 132, true);
    CHECK(p.tiled == (schedule == r::device_schedule::automatic));
    double const peak = inputs + inputs + values + double(p.bytes);
    INFO("schedule " << int(schedule) << " workspace " << p.bytes << " peak " << peak);
    CHECK((peak - inputs) / (inputs + cells) <= 1.1);  // the gradient outputs aside: 1.024 tiled
    CHECK(peak / (inputs + cells) <= 1.14);            // with them: 1.135 tiled, 1.111 per CTA
  }
}

TEST_CASE("device schedule: automatic storage checkpoints only where that takes less", "[device][schedule]") {
  // a checkpoint slot holds a diagonal at X's length: with X much the longer series the
  // checkpoints outweighed the whole grids, which automatic storage (past 4 GiB) still chose:
  // (300, 20000, 200) float took 10.4 GB for 4.8 GB, (1100, 100000, 10) 421 GB for 4.4 GB
  std::size_t const whole = std::size_t(300) * 20000 * 200 * 4;
  auto const wide = dd::train_plan::make(300, 20000, 200, 1, false, false, 4);
  CHECK(wide.checkpoint == 0);
  CHECK(wide.store_bytes >= whole);
  CHECK(wide.store_bytes < whole + (std::size_t(1) << 21));
  auto const narrow = dd::train_plan::make(1100, 100000, 10, 1, false, false, 4);
  CHECK(narrow.checkpoint == 0);
  CHECK(narrow.store_bytes < std::size_t(1100) * 100000 * 10 * 4 + (std::size_t(1) << 21));
  // the other orientation checkpoints (0.10 GB for 4.8 GB), and an explicit request is kept
  auto const tall = dd::train_plan::make(300, 200, 20000, 1, false, false, 4);
  CHECK(tall.checkpoint > 0);
  CHECK(tall.store_bytes < whole / 20);
  auto const asked = dd::train_plan::make(300, 20000, 200, 1, false, false, 4, r::device_schedule::automatic,
                                          r::training_store::checkpointed);
  CHECK(asked.checkpoint > 0);
}

TEST_CASE("device schedule: calls of more blocks than a grid holds launch in order", "[device][schedule]") {
  std::vector<std::pair<r::index_t, r::index_t>> chunks;
  auto record = [&](r::index_t first, r::index_t count) {
    chunks.emplace_back(first, count);
    return 0;
  };
  CHECK(dd::for_each_block_chunk(10, 3, record) == 0);
  CHECK(chunks == std::vector<std::pair<r::index_t, r::index_t>>{{0, 3}, {3, 3}, {6, 3}, {9, 1}});
  chunks.clear();
  CHECK(dd::for_each_block_chunk(0, 3, record) == 0);
  CHECK(chunks.empty());
  CHECK(dd::for_each_block_chunk(dd::max_grid_blocks, dd::max_grid_blocks, record) == 0);
  CHECK(chunks.size() == 1);
  chunks.clear();  // 50 000 x 50 000 pairs, one CTA each: two launches, the second from 2^31 - 1
  CHECK(dd::for_each_block_chunk(r::index_t(50000) * 50000, dd::max_grid_blocks, record) == 0);
  CHECK(chunks == std::vector<std::pair<r::index_t, r::index_t>>{
                      {0, dd::max_grid_blocks}, {dd::max_grid_blocks, r::index_t(2500000000) - dd::max_grid_blocks}});
  int calls = 0;  // the first error stops the launches and is returned
  CHECK(dd::for_each_block_chunk(10, 3, [&](r::index_t, r::index_t) { return ++calls == 2 ? 7 : 0; }) == 7);
  CHECK(calls == 2);
}

TEST_CASE("device schedule: warp per pair", "[device][schedule]") {
  using S = r::device_schedule;
  // automatic: one warp per job where the job's CTA would be one warp anyway, 8 jobs per CTA
  auto const a = dd::map_jobs(S::automatic, 32, 1000);
  CHECK(a.warps);
  CHECK(a.threads == 32);
  CHECK(a.jobs_per_block == dd::warp_jobs_per_block);
  CHECK(a.blocks(1000) == 125);
  CHECK(a.blocks(1001) == 126);
  CHECK_FALSE(dd::map_jobs(S::automatic, 33, 1000).warps);
  CHECK(dd::map_jobs(S::automatic, 33, 1000).threads == 64);
  CHECK_FALSE(dd::map_jobs(S::automatic, 16, 1).warps);  // one job: a one-warp CTA
  CHECK_FALSE(dd::map_jobs(S::block_per_pair, 8, 1000).warps);
  auto const f = dd::map_jobs(S::warp_per_pair, 500, 3);  // forced: fewer jobs than a CTA holds
  CHECK(f.warps);
  CHECK(f.jobs_per_block == 3);
  CHECK(f.blocks(3) == 1);
  // shared memory holds the rings of every job of the CTA, else they go to the workspace
  auto const v = dd::value_plan::make(dd::job_layout::paired, 64, 64, 30, 40, false, 8);
  CHECK(v.mapping.warps);
  CHECK(v.shuffle);  // at most 32 rows: the shuffle program, registers only
  CHECK(v.shared_bytes() == 0);
  CHECK(v.bytes == 1);
  auto const v33 = dd::value_plan::make(dd::job_layout::paired, 64, 64, 33, 40, false, 8,
                                        S::warp_per_pair);
  CHECK_FALSE(v33.shuffle);  // 33 rows: a strip of rows per lane, the rows staged
  CHECK(v33.strip);
  CHECK(v33.stage_values == 33);
  CHECK(v33.mapping.jobs_per_block == dd::strip_jobs_per_block);
  CHECK(v33.shared_bytes() == std::size_t(4) * 33 * 8);
  CHECK(v33.bytes == 1);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::paired, 64, 64, 30, 40, false, 8,
                                   S::block_per_pair).shuffle);
  auto const big = dd::value_plan::make(dd::job_layout::paired, 64, 64, 1000, 1000, false, 8,
                                        S::warp_per_pair);
  CHECK_FALSE(big.strip);  // past 992 rows the lanes stride a ring
  CHECK_FALSE(big.shared_ring);  // 8 rings of 3 * 1000 doubles exceed 48 KB
  CHECK(big.shared_bytes() == 0);
  CHECK(big.bytes == dd::align_up(64 * 3 * 1000 * 8));
  auto const t = dd::train_plan::make(64, 20, 25, 1, false, false, 4);
  CHECK(t.mapping.warps);
  CHECK(t.shuffle);  // at most 32 rows: the shuffle program, G in registers
  CHECK(t.shared_bytes() == 0);
  auto const t33 = dd::train_plan::make(64, 33, 25, 1, false, false, 4, S::warp_per_pair);
  CHECK_FALSE(t33.shuffle);  // the rows are x's: 33 of them, a ring in shared memory
  CHECK(t33.shared_bytes() == std::size_t(8) * 7 * 33 * 4);
  CHECK_FALSE(dd::train_plan::make(64, 20, 25, 1, false, false, 4, S::warp_per_pair,
                                   r::training_store::checkpointed).shuffle);
  CHECK_FALSE(dd::train_plan::make(64, 20, 40, 1, true, false, 4, S::warp_per_pair).shuffle);  // self term (40, 40)
  // every schedule gives the same bits (values: a strip of 64 rows; training: 32 lanes striding 70 rows)
  ragged<double> const X(6, 70, 2, 41, false), Y(6, 64, 2, 42, false);
  auto const meas = r::measures::soft_dtw<double>(0.3);
  auto const vb = emulate_values(meas, X.view(), Y.view(), dd::job_layout::pairwise,
                                 {0, false, S::block_per_pair});
  auto const vw = emulate_values(meas, X.view(), Y.view(), dd::job_layout::pairwise,
                                 {0, true, S::warp_per_pair});
  CHECK(resilin_test::bitwise_equal(vb, vw));
  auto const tb = emulate_train<double>(meas, X.view(), Y.view(), nullptr, true, false,
                                        {0, false, S::block_per_pair});
  auto const tw = emulate_train<double>(meas, X.view(), Y.view(), nullptr, true, false,
                                        {0, true, S::warp_per_pair});
  CHECK(resilin_test::bitwise_equal(tb.values, tw.values));
  CHECK(resilin_test::bitwise_equal(tb.gx, tw.gx));
  CHECK(resilin_test::bitwise_equal(tb.gy, tw.gy));
}

/// The shuffle tests' measures, each given to check(meas, A, B) with its batches: soft and
/// hard DTW and soft-MSM (gradient stencil 2; channels summed, as the device programs do) in
/// double on X, Y, soft-DTW in float on Xf, Yf.
template <class Check, class D, class F>
void each_shuffle_measure(r::band_spec const& band, bool div, Check&& check, D const& X, D const& Y,
                          F const& Xf, F const& Yf) {
  auto soft = r::measures::soft_dtw<double>(0.3, band);
  soft.divergence = div;
  check(soft, X, Y);
  auto hard = r::measures::dtw().with_band(band);
  hard.divergence = div;
  check(hard, X, Y);
  auto softf = r::measures::soft_dtw<float>(0.3f, band);
  softf.divergence = div;
  check(softf, Xf, Yf);
  auto msm = r::measures::soft_msm<double>(1.0, 1.0, band);
  msm.independent_channels = false;
  msm.divergence = div;
  check(msm, X, Y);
}

/// Values by one warp per pair (lanes in order and reversed; with in_place also reversed with
/// the strip's rows read in place) against one block per pair, bit for bit: every band, plain
/// and divergence (skipped for shapes whose self terms have more than max_div_rows rows), each
/// (n, m) in batches of `batch`, each_shuffle_measure's measures, both job layouts. Returns the
/// seed after those the batches took.
static std::uint64_t check_warp_values(std::uint64_t seed, r::index_t batch,
                       std::initializer_list<std::pair<r::index_t, r::index_t>> shapes,
                       r::index_t max_div_rows, bool in_place) {
  using S = r::device_schedule;
  for (auto const& band : heavy_bands()) {
    for (bool div : {false, true}) {
      for (auto [n, m] : shapes) {
        if (div && (n > max_div_rows || m > max_div_rows)) continue;
        ++seed;
        ragged<double> const X(batch, n, 2, seed, false), Y(batch, m, 2, seed + 3, false);
        ragged<float> const Xf(batch, n, 1, seed, true), Yf(batch, m, 1, seed + 3, true);
        auto check = [&](auto const& meas, auto const& A, auto const& B) {
          INFO("band kind " << int(band.type()) << " divergence " << div << " n " << n << " m " << m);
          for (auto layout : {dd::job_layout::paired, dd::job_layout::pairwise}) {
            auto const block = emulate_values(meas, A.view(), B.view(), layout, {0, false, S::block_per_pair});
            launch_options warp{0, false, S::warp_per_pair};
            CHECK(resilin_test::bitwise_equal(block, emulate_values(meas, A.view(), B.view(), layout, warp)));
            warp.reverse = true;
            CHECK(resilin_test::bitwise_equal(block, emulate_values(meas, A.view(), B.view(), layout, warp)));
            if (!in_place) continue;
            warp.stage = false;
            CHECK(resilin_test::bitwise_equal(block, emulate_values(meas, A.view(), B.view(), layout, warp)));
          }
        };
        each_shuffle_measure(band, div, check, X, Y, Xf, Yf);
      }
    }
  }
  return seed;
}

TEST_CASE("device schedule: the shuffle warp gives the bits of one block per pair", "[device][schedule][shuffle]") {
  using S = r::device_schedule;
  // the shorter series at most 32 (the rows), the longer one past 32: both orientations; the
  // divergence's self terms put the longer series on the rows
  check_warp_values(1500, 5, {{32, 45}, {45, 32}, {7, 9}, {1, 30}}, dd::shuffle_rows, false);
  // and against the host backend
  ragged<double> const X(6, 20, 3, 77, false), Y(6, 28, 3, 78, false);
  auto const meas = r::measures::soft_dtw<double>(0.5);
  std::vector<double> host(36);
  r::pairwise(r::host.with_threads(1), meas, X.view(), Y.view(), r::matrix_view<double>{host.data(), 6, 6});
  CHECK(rel_err(emulate_values(meas, X.view(), Y.view(), dd::job_layout::pairwise, {0, false, S::warp_per_pair}),
                host) <= tolerance<double>());
}

TEST_CASE("device schedule: strip plans", "[device][schedule][strip]") {
  using S = r::device_schedule;
  // rows per lane: ceil(rows / 32); staged, not a multiple of 4 (4- to 16-way bank conflicts)
  CHECK(dd::strip_rows_per_lane(33, true) == 2);
  CHECK(dd::strip_rows_per_lane(64, true) == 2);
  CHECK(dd::strip_rows_per_lane(97, true) == 5);
  CHECK(dd::strip_rows_per_lane(97, false) == 4);
  CHECK(dd::strip_rows_per_lane(256, true) == 9);
  CHECK(dd::strip_rows_per_lane(256, false) == 8);
  CHECK(dd::strip_rows_per_lane(395, true) == 13);
  CHECK(dd::strip_rows_per_lane(896, true) == 29);
  CHECK(dd::strip_rows_per_lane(961, true) == 31);
  CHECK(dd::strip_rows_per_lane(992, true) == 31);
  CHECK(dd::strip_rows_per_lane(992, false) == 31);
  CHECK(dd::strip_rows_per_lane(1, true) == 1);
  // automatic: 33 to 992 rows, at least 4 jobs per SM
  CHECK(dd::strips(S::automatic, 528, 395, 132));
  CHECK_FALSE(dd::strips(S::automatic, 527, 395, 132));
  CHECK_FALSE(dd::strips(S::automatic, 8192, 395, 0));  // SM count unknown
  CHECK_FALSE(dd::strips(S::automatic, 8192, 32, 132));  // the shuffle warp's
  CHECK_FALSE(dd::strips(S::automatic, 8192, 993, 132));
  CHECK(dd::strips(S::warp_per_pair, 1, 992, 0));
  CHECK_FALSE(dd::strips(S::block_per_pair, 8192, 395, 132));
  // H1 (8192 pairs of 395 x 4437, univariate): the strip warp, the rows (x) staged
  auto const h1 = dd::value_plan::make(dd::job_layout::paired, 8192, 8192, 395, 4437, false, 4,
                                       S::automatic, 132);
  CHECK(h1.strip);
  CHECK_FALSE(h1.tiled);
  CHECK(h1.mapping.warps);
  CHECK(h1.mapping.jobs_per_block == 4);
  CHECK(h1.mapping.blocks(8192) == 2048);
  CHECK(h1.threads == 32);
  CHECK(h1.stage_values == 395);
  CHECK(h1.shared_bytes() == std::size_t(4) * 395 * 4);
  CHECK(h1.bytes == 1);
  // the divergence's self terms put the longer series on the rows
  auto const div = dd::value_plan::make(dd::job_layout::paired, 600, 600, 100, 300, true, 4,
                                        S::automatic, 132, false, 3);
  CHECK(div.strip);
  CHECK(div.stage_values == 900);
  CHECK(div.shared_bytes() == std::size_t(4) * 900 * 4);
  // stages past 48 KB per CTA: the rows are read in place
  auto const wide = dd::value_plan::make(dd::job_layout::paired, 600, 600, 400, 400, false, 8,
                                         S::automatic, 132, false, 4);  // 4 x 400 x 4 x 8 = 51 KB
  CHECK(wide.strip);
  CHECK(wide.stage_values == 0);
  CHECK(wide.shared_bytes() == 0);
  // the tiled rules come first (DTW of >= 16 channels with distance tiles)
  CHECK(dd::value_plan::make(dd::job_layout::paired, 600, 600, 400, 400, false, 4, S::automatic,
                             132, true, 32).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::paired, 600, 600, 400, 400, false, 4,
                                   S::automatic, 132, true, 32).strip);
}

TEST_CASE("device schedule: the strip warp walks the band's rows of each column", "[device][schedule][strip]") {
  for (r::index_t n = 2; n <= 40; n += 3)
    for (r::index_t m = 2; m <= 40; m += 5)
      for (r::index_t R : {-1, 0, 1, 2, 5, 11}) {
        auto const g = r::band_geometry::make(n, m, R);
        auto w = dd::band_column_walk::first(g);
        for (r::index_t j = 0; j < m; ++j) {
          INFO("n " << n << " m " << m << " R " << R << " column " << j);
          for (r::index_t i = 0; i < n; ++i) CHECK((w.lo <= i && i <= w.hi) == g.contains(i, j));
          w.advance();
        }
      }
}

TEST_CASE("device schedule: the strip warp gives the bits of one block per pair", "[device][schedule][strip]") {
  using S = r::device_schedule;
  // rows (the shorter series; the self terms: each) from 33 to 130: 2 to 5 rows per lane, lanes
  // partly idle; both orientations; staged and in place
  std::uint64_t const seed =
      check_warp_values(2500, 3, {{33, 40}, {40, 33}, {64, 97}, {130, 100}}, dd::strip_rows, true);
  // the longest strips (31 rows per lane), 9 (staged 256 rows) and H1's 13, univariate soft and
  // hard DTW and soft-MSM, against the host backend too
  for (auto [n, m] : resilin_test::unless_sanitized<std::pair<r::index_t, r::index_t>>(
           {{992, 1000}, {395, 1200}, {256, 300}})) {
    ragged<double> const X(2, n, 1, seed + 11, false), Y(2, m, 1, seed + 12, true);
    for (auto const& band : {r::band_spec::none(), r::band_spec::window(0.1)}) {
      auto check = [&](auto const& meas) {
        INFO("n " << n << " m " << m << " band kind " << int(band.type()));
        auto const block = emulate_values(meas, X.view(), Y.view(), dd::job_layout::paired, {0, false, S::block_per_pair});
        auto const strip = emulate_values(meas, X.view(), Y.view(), dd::job_layout::paired, {0, true, S::warp_per_pair});
        CHECK(resilin_test::bitwise_equal(block, strip));
        std::vector<double> host(2);
        r::values(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<double>(host));
        CHECK(rel_err(strip, host) <= tolerance<double>());
      };
      check(r::measures::soft_dtw<double>(0.5, band));
      check(r::measures::dtw().with_band(band));
      if (n < 900) check(r::measures::soft_msm<double>(1.0, 1.0, band));
    }
  }
}

TEST_CASE("device schedule: the shuffle warp trains with the bits of one block per pair",
          "[device][schedule][shuffle]") {
  using S = r::device_schedule;
  std::uint64_t seed = 1700;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      // the rows are x (the divergence's self terms: both series): at most 32
      for (auto [n, m] : {std::pair<r::index_t, r::index_t>{32, 45}, {29, 32}, {7, 9}, {1, 30}, {20, 1}}) {
        if (div && (n > 32 || m > 32)) continue;
        ++seed;
        ragged<double> const X(5, n, 2, seed, false), Y(5, m, 2, seed + 3, false);
        ragged<float> const Xf(5, n, 1, seed, true), Yf(5, m, 1, seed + 3, true);
        REQUIRE(dd::train_plan::make(5, n, m, 2, div, true, 8, S::warp_per_pair).shuffle);
        auto check = [&](auto const& meas, auto const& A, auto const& B) {
          using T = typename std::remove_cvref_t<decltype(A.data)>::value_type;
          INFO("band kind " << int(band.type()) << " divergence " << div << " n " << n << " m " << m);
          std::vector<T> const up = resilin_test::cast<T>(random_values(5, seed + 9, 0.5, 2));
          for (bool e : {false, true}) {
            if (e && div) continue;  // E is the plain measure's
            auto const block = emulate_train(meas, A.view(), B.view(), &up, true, e, {0, false, S::block_per_pair});
            auto const warp = emulate_train(meas, A.view(), B.view(), &up, true, e, {0, false, S::warp_per_pair});
            auto const back = emulate_train(meas, A.view(), B.view(), &up, true, e, {0, true, S::warp_per_pair});
            for (auto const* w : {&warp, &back}) {
              CHECK(resilin_test::bitwise_equal(block.values, w->values));
              CHECK(resilin_test::bitwise_equal(block.gx, w->gx));
              CHECK(resilin_test::bitwise_equal(block.gy, w->gy));
              CHECK(resilin_test::bitwise_equal(block.e, w->e));
            }
          }
          // values only (no backward)
          auto const vb = emulate_train<T>(meas, A.view(), B.view(), nullptr, false, false, {0, false, S::block_per_pair});
          auto const vw = emulate_train<T>(meas, A.view(), B.view(), nullptr, false, false, {0, false, S::warp_per_pair});
          CHECK(resilin_test::bitwise_equal(vb.values, vw.values));
        };
        each_shuffle_measure(band, div, check, X, Y, Xf, Yf);
      }
    }
  }
  // and against the host backend: values and gradients with an upstream
  r::index_t const B = 6;
  ragged<double> const X(B, 24, 3, 88, false), Y(B, 40, 3, 89, false);
  std::vector<double> const up = random_values(B, 90, 0.5, 2);
  auto const meas = r::measures::soft_dtw<double>(0.5);
  std::vector<double> hv(B), hgx(X.data.size()), hgy(Y.data.size());
  r::values_and_grads(r::host.with_threads(1), meas, X.view(), Y.view(), std::span<double>(hv),
                      r::batch_view<double>{hgx.data(), B, X.max_length, 3, X.lengths.data()},
                      r::batch_view<double>{hgy.data(), B, Y.max_length, 3, Y.lengths.data()},
                      std::span<double const>(up));
  auto const w = emulate_train(meas, X.view(), Y.view(), &up, true, false, {0, false, S::warp_per_pair});
  CHECK(rel_err(w.values, hv) <= tolerance<double>());
  CHECK(rel_err(w.gx, hgx) <= 10 * tolerance<double>());
  CHECK(rel_err(w.gy, hgy) <= 10 * tolerance<double>());
}

TEST_CASE("device schedule: checkpointed training gives the bits of the whole grid",
          "[device][schedule][checkpoint]") {
  using S = r::training_store;
  std::uint64_t seed = 700;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      ++seed;
      ragged<double> const X(4, 37, 2, seed, false), Y(4, 29, 2, seed + 9, false);
      std::vector<double> const up{0.5, -1.0, 2.0, 1.5};
      auto check = [&](auto const& meas, char const* name) {
        INFO(name << " band kind " << int(band.type()) << " divergence " << div);
        for (bool e : {false, true}) {
          if (e && div) continue;  // E is the plain problem's
          auto const whole = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                   {0, false, r::device_schedule::automatic, S::whole_grid});
          auto const cp = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                {5, true, r::device_schedule::automatic, S::checkpointed});
          CHECK(resilin_test::bitwise_equal(cp.values, whole.values));
          CHECK(resilin_test::bitwise_equal(cp.gx, whole.gx));
          CHECK(resilin_test::bitwise_equal(cp.gy, whole.gy));
          CHECK(resilin_test::bitwise_equal(cp.e, whole.e));
        }
      };
      auto sd = r::measures::soft_dtw<double>(0.2, band);
      sd.divergence = div;
      check(sd, "soft-dtw");
      auto sm = r::measures::soft_msm<double>(0.5, 1.0, band);  // stencil 2: x_{i-1}, y_{j-1}
      sm.divergence = div;
      sm.independent_channels = false;
      check(sm, "soft-msm");
    }
  }
}

TEST_CASE("device schedule: checkpointed plans", "[device][schedule][checkpoint]") {
  // the checkpoints: diagonals s k - 2 and s k - 1 of every segment s >= 1, two slots each
  dd::checkpoints const cp{5};
  CHECK(cp.segments(23) == 5);
  CHECK(cp.slot(2) == -1);
  CHECK(cp.slot(3) == 0);
  CHECK(cp.slot(4) == 1);
  CHECK(cp.slot(5) == -1);
  CHECK(cp.slot(8) == 2);
  CHECK(cp.slot(9) == 3);
  CHECK(dd::checkpoint_interval(65535) == 363);  // ceil(sqrt(2 * 65535))
  CHECK(dd::checkpoint_slots(23, 5) == 5 + 2 + 2 * 4);
  // issue 3: forward + backward of (B = 4, n = m = 32768, d = 16) in a few GB (float): the
  // whole grids would be 16 GiB; checkpointed, 4 * 725 diagonals of 32768 values = 380 MB
  auto const t = dd::train_plan::make(4, 32768, 32768, 16, false, false, 4);
  CHECK(t.checkpoint == 363);
  CHECK(t.slot_size[0] == 725 * 32768);
  CHECK(t.store_bytes == dd::align_up(std::size_t(4) * 725 * 32768 * 4));
  CHECK(t.bytes < (std::size_t(1) << 30));
  auto const w = dd::train_plan::make(4, 32768, 32768, 16, false, false, 4,
                                      r::device_schedule::automatic, r::training_store::whole_grid);
  CHECK(w.checkpoint == 0);
  CHECK(w.store_bytes == std::size_t(4) * 32768 * 32768 * 4);
  auto const small = dd::train_plan::make(32, 1024, 1024, 64, false, false, 4);
  CHECK(small.checkpoint == 0);  // 128 MiB of grids: stored whole
}

TEST_CASE("device schedule: the tiled wavefront gives the bits of one block per pair",
          "[device][schedule][tiled]") {
  using S = r::device_schedule;
  // automatic: a few long pairs (at most a quarter of the SMs, the shorter series >= 512)
  CHECK(dd::value_plan::make(dd::job_layout::paired, 2, 2, 4096, 5000, false, 4, S::automatic, 132).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::paired, 40, 40, 4096, 5000, false, 4, S::automatic, 132).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::paired, 2, 2, 300, 5000, false, 4, S::automatic, 132).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::paired, 2, 2, 4096, 5000, false, 4, S::automatic, 0).tiled);
  // and many pairs with distance tiles (d >= 16), the shorter series at least half a tile
  CHECK(dd::value_plan::make(dd::job_layout::pairwise, 100, 100, 200, 64, false, 4, S::automatic, 132, true).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::pairwise, 100, 100, 200, 63, false, 4, S::automatic, 132, true).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::pairwise, 100, 100, 200, 64, false, 4, S::automatic, 132).tiled);
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::pairwise, 300, 300, 200, 64, false, 4, S::automatic, 132, true).tiled);
  // with the divergence the rows reach max(n, m), but the (x, y) problems' shorter side decides
  CHECK_FALSE(dd::value_plan::make(dd::job_layout::paired, 50, 50, 10, 100, true, 4, S::automatic, 132, true).tiled);
  auto const big = dd::value_plan::make(dd::job_layout::paired, 2, 2, 65536, 65536, false, 4, S::tiled);
  CHECK(big.tile_diagonals == 1023);
  CHECK(big.tiles_per_diagonal == 512);
  CHECK(big.borders_bytes == dd::align_up(std::size_t(2) * 6 * 65536 * 4));  // 6 min(n, m) per pair
  // O(min(n, m)): the borders of a long, narrow grid are those of its shorter side, in whole tiles
  auto const narrow = dd::value_plan::make(dd::job_layout::paired, 2, 2, 1000, 65536, false, 4, S::tiled);
  CHECK(narrow.tiles_per_diagonal == 8);
  CHECK(narrow.borders_bytes == dd::align_up(std::size_t(2) * 6 * 1024 * 4));
  auto const narrow_div = dd::value_plan::make(dd::job_layout::paired, 2, 2, 1000, 65536, true, 4, S::tiled);
  CHECK(narrow_div.tiles_per_diagonal == 512);  // the self problem (65536, 65536)
  // tiles of 128: 3 x 4 tiles and ragged lengths, every band, plain and divergence, paired and
  // pairwise, hard and soft; 128 threads per tile, or 7 in reverse order
  std::uint64_t seed = 300;
  for (auto const& band : heavy_bands()) {
    for (bool div : {false, true}) {
      ++seed;
      ragged<double> const X(3, 300, 2, seed, false), Y(3, 390, 2, seed + 5, false);
      auto check = [&](auto const& meas) {
        INFO("band kind " << int(band.type()) << " divergence " << div);
        for (auto layout : {dd::job_layout::paired, dd::job_layout::pairwise}) {
          auto const block = emulate_values(meas, X.view(), Y.view(), layout, {0, false, S::block_per_pair});
          auto const tiled = emulate_values(meas, X.view(), Y.view(), layout, {0, false, S::tiled});
          auto const tiled7 = emulate_values(meas, X.view(), Y.view(), layout, {7, true, S::tiled});
          CHECK(resilin_test::bitwise_equal(tiled, block));
          CHECK(resilin_test::bitwise_equal(tiled7, block));
        }
      };
      auto soft = r::measures::soft_dtw<double>(0.5, band);
      soft.divergence = div;
      check(soft);
      auto hard = r::measures::dtw().with_band(band);
      hard.divergence = div;
      check(hard);
    }
  }
}

TEST_CASE("device schedule: tiled training gives the bits of one block per pair",
          "[device][schedule][tiled]") {
  using S = r::device_schedule;
  using St = r::training_store;
  // automatic: a few long pairs, as for values; the headline shape (B = 32, n = m =
  // 1024) is one of them on a 132-SM GPU
  CHECK(dd::train_plan::make(2, 4096, 5000, 4, false, false, 4, S::automatic, St::automatic, 132).tiled);
  CHECK(dd::train_plan::make(32, 1024, 1024, 64, false, false, 4, S::automatic, St::automatic, 132).tiled);
  CHECK_FALSE(dd::train_plan::make(40, 4096, 4096, 4, false, false, 4, S::automatic, St::automatic, 132).tiled);
  CHECK_FALSE(dd::train_plan::make(2, 300, 5000, 4, false, false, 4, S::automatic, St::automatic, 132).tiled);
  CHECK_FALSE(dd::train_plan::make(2, 4096, 4096, 4, false, false, 4).tiled);  // SMs unknown
  // and many pairs whose tiles compute their distances in shared memory (d >= 16), from half a
  // tile on; more than 65535 problems do not tile (the launch's grid.y)
  CHECK(dd::train_plan::make(256, 512, 512, 64, false, false, 4, S::automatic, St::automatic, 132, true).tiled);
  CHECK(dd::train_plan::make(256, 64, 100, 64, false, false, 4, S::automatic, St::automatic, 132, true).tiled);
  CHECK_FALSE(dd::train_plan::make(256, 512, 512, 64, false, false, 4, S::automatic, St::automatic, 132).tiled);
  CHECK_FALSE(dd::train_plan::make(256, 63, 512, 64, false, false, 4, S::automatic, St::automatic, 132, true).tiled);
  CHECK_FALSE(dd::train_plan::make(70000, 128, 128, 64, false, false, 4, S::automatic, St::automatic, 132, true).tiled);
  CHECK_FALSE(dd::train_plan::make(256, 512, 512, 64, false, false, 4, S::block_per_pair, St::automatic, 132, true).tiled);
  // issue 3's (B = 4, n = m = 32768, d = 16) float: checkpointed tiles keep the R borders (2 n m
  // / 128 values), the G borders and one scratch tile per tile of a diagonal: 341 MB in all
  auto const big = dd::train_plan::make(4, 32768, 32768, 16, false, false, 4, S::tiled);
  CHECK(big.checkpoint == 1);
  CHECK(big.tile_diagonals == 511);
  CHECK(big.tiles_per_diagonal == 256);
  CHECK(big.slot_size[0] == 2 * 256 * 32768 + 6 * 65536 + 256 * 128 * 128);
  CHECK(big.bytes < std::size_t(400) << 20);
  // launches from the call's grids: 8192 x 600 is 64 x 5 tiles (68 diagonals of at most 5
  // tiles); with the divergence the (8192, 8192) self term sets them (127 of at most 64)
  auto const narrow = dd::train_plan::make(2, 8192, 600, 4, false, false, 4, S::tiled);
  CHECK(narrow.tile_diagonals == 68);
  CHECK(narrow.tiles_per_diagonal == 5);
  auto const narrow_div = dd::train_plan::make(2, 8192, 600, 4, true, false, 4, S::tiled);
  CHECK(narrow_div.tile_diagonals == 127);
  CHECK(narrow_div.tiles_per_diagonal == 64);
  auto const values = dd::value_plan::make(dd::job_layout::pairwise, 2, 3, 600, 8192, false, 4, S::tiled);
  CHECK(values.tile_diagonals == 68);
  CHECK(values.tiles_per_diagonal == 5);
  auto const whole = dd::train_plan::make(2, 1024, 1024, 64, false, false, 4, S::tiled, St::whole_grid);
  CHECK(whole.checkpoint == 0);
  CHECK(whole.slot_size[0] == 1024 * 1024 + 2 * 8 * 1024 + 6 * 2048);  // 1.04 values per cell

  // 3 x 3 tiles and ragged lengths; values, gradients and E of stencil-1 costs bit for bit,
  // whole grid or recomputed tiles, 128 threads per tile or 7 in reverse order
  std::uint64_t seed = 1700;
  for (auto const& band : resilin_test::unless_sanitized<r::band_spec>(
           {r::band_spec::none(), r::band_spec::radius(40), r::band_spec::window(0.3)})) {
    for (bool div : {false, true}) {
      ++seed;
      ragged<double> const X(3, 300, 2, seed, false), Y(3, 270, 2, seed + 5, false);
      std::vector<double> const up{0.5, -1.0, 2.0};
      auto check = [&](auto const& meas, char const* name, bool bits) {
        INFO(name << " band kind " << int(band.type()) << " divergence " << div);
        for (bool e : {false, true}) {
          if (e && div) continue;  // E is the plain problem's
          auto const block = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                   {0, false, S::block_per_pair, St::whole_grid});
          auto const tw = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                {0, false, S::tiled, St::whole_grid});
          auto const tc = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                {7, true, S::tiled, St::checkpointed});
          CHECK(resilin_test::bitwise_equal(tw.values, block.values));
          CHECK(resilin_test::bitwise_equal(tw.e, block.e));
          if (bits) {
            CHECK(resilin_test::bitwise_equal(tw.gx, block.gx));
            CHECK(resilin_test::bitwise_equal(tw.gy, block.gy));
          } else {  // sums at the tile borders in another order
            CHECK(rel_err(tw.gx, block.gx) <= 1e-12);
            CHECK(rel_err(tw.gy, block.gy) <= 1e-12);
          }
          CHECK(resilin_test::bitwise_equal(tc.values, tw.values));
          CHECK(resilin_test::bitwise_equal(tc.gx, tw.gx));
          CHECK(resilin_test::bitwise_equal(tc.gy, tw.gy));
          CHECK(resilin_test::bitwise_equal(tc.e, tw.e));
        }
      };
      auto sd = r::measures::soft_dtw<double>(0.3, band);
      sd.divergence = div;
      check(sd, "soft-dtw", true);
      auto hd = r::measures::dtw().with_band(band);
      hd.divergence = div;
      check(hd, "dtw", true);
      auto sm = r::measures::soft_msm<double>(0.5, 1.0, band);  // stencil 2: two launches per D
      sm.divergence = div;
      sm.independent_channels = false;
      check(sm, "soft-msm", false);
    }
  }
}

TEST_CASE("device schedule: distance tiles give the bits of the per-cell distance",
          "[device][schedule][tiled]") {
  using S = r::device_schedule;
  using St = r::training_store;
  STATIC_REQUIRE(dd::uses_distance_tiles<r::dtw_cost<>>(16));
  STATIC_REQUIRE_FALSE(dd::uses_distance_tiles<r::dtw_cost<>>(15));
  STATIC_REQUIRE_FALSE(dd::uses_distance_tiles<r::soft_msm_cost<double>>(64));
  STATIC_REQUIRE_FALSE(dd::uses_distance_tiles<r::dtw_cost<weighted_distance>>(64));  // a user's
  // 16 and 21 channels (two and three staged chunks), every distance, ragged 3 x 3 tiles;
  // values (paired, pairwise: the transposed orientation too) and training, whole and
  // recomputed, against one block per pair with the per-cell distance
  std::uint64_t seed = 2100;
  for (r::index_t d : resilin_test::unless_sanitized<r::index_t>({16, 21})) {  // 21: three chunks
    ++seed;
    ragged<double> const X(2, 300, d, seed, false), Y(2, 270, d, seed + 5, false);
    std::vector<double> const up{0.5, 2.0};
    auto check = [&](auto const& meas, char const* name) {
      INFO(name << " channels " << d);
      for (auto layout : {dd::job_layout::paired, dd::job_layout::pairwise}) {
        auto const block = emulate_values(meas, X.view(), Y.view(), layout, {0, false, S::block_per_pair});
        auto const tiled = emulate_values(meas, X.view(), Y.view(), layout, {9, true, S::tiled});
        CHECK(resilin_test::bitwise_equal(tiled, block));
      }
      for (bool e : {false, true}) {
        auto const block = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                 {0, false, S::block_per_pair, St::whole_grid});
        for (auto store : {St::whole_grid, St::checkpointed}) {
          auto const tiled = emulate_train<double>(meas, X.view(), Y.view(), &up, !e, e,
                                                   {0, false, S::tiled, store});
          CHECK(resilin_test::bitwise_equal(tiled.values, block.values));
          CHECK(resilin_test::bitwise_equal(tiled.gx, block.gx));
          CHECK(resilin_test::bitwise_equal(tiled.gy, block.gy));
          CHECK(resilin_test::bitwise_equal(tiled.e, block.e));
        }
      }
    };
    check(r::measures::soft_dtw<double>(0.3, r::band_spec::window(0.4)), "soft-dtw");
    check(r::measure<r::dtw_cost<r::l1_distance>, r::soft_min<double>>{{}, {0.5}, {}, false}, "soft-dtw L1");
    check(r::measure<r::dtw_cost<r::half_squared_euclidean>, r::hard_min>{}, "dtw half-squared");
    check(r::measure<r::dtw_cost<weighted_distance>, r::soft_min<double>>{{}, {0.5}, {}, false},
          "a user's distance (per cell)");
  }
}

namespace {
// Where step_grad of every cell (i, j) writes: only rows i - s + 1 .. i of x and columns
// j - s + 1 .. j of y, s = grad_stencil<Cost>. The device backward runs a diagonal's gradient
// in s phases (i mod s) without atomics on that promise; a cost that wrote further would pass
// the emulated device (its threads never interleave inside a phase) and lose updates on a GPU.
template <class Cost>
void check_gradient_footprint(Cost const& cost, r::index_t n, r::index_t m, r::index_t d,
                              std::uint64_t seed) {
  constexpr r::index_t s = r::grad_stencil<Cost>::value;
  auto const xs = random_values(static_cast<std::size_t>(n * d), seed, -1, 1);
  auto const ys = random_values(static_cast<std::size_t>(m * d), seed + 1, -1, 1);
  r::series_view<double const> const x{xs.data(), n, d}, y{ys.data(), m, d};
  std::vector<double> gx(xs.size()), gy(ys.size());
  r::step3<double> const usage{0.7, 1.3, 0.4};
  int outside = 0, own = 0;
  for (r::index_t i = 0; i < n; ++i)
    for (r::index_t j = 0; j < m; ++j) {
      std::fill(gx.begin(), gx.end(), 0.0);
      std::fill(gy.begin(), gy.end(), 0.0);
      cost.step_grad(x, y, i, j, usage, r::series_view<double>{gx.data(), n, d},
                     r::series_view<double>{gy.data(), m, d});
      for (r::index_t k = 0; k < n * d; ++k)
        if (gx[static_cast<std::size_t>(k)] != 0.0 && (k / d > i || k / d <= i - s)) ++outside;
      for (r::index_t k = 0; k < m * d; ++k)
        if (gy[static_cast<std::size_t>(k)] != 0.0 && (k / d > j || k / d <= j - s)) ++outside;
      for (r::index_t c = 0; c < d; ++c) own += gx[static_cast<std::size_t>(i * d + c)] != 0.0;
    }
  CHECK(outside == 0);
  CHECK(own > 0);  // the cell's own row is written: the check above is not vacuous
}
}  // namespace

TEST_CASE("device: every cost model's step_grad stays inside its declared gradient stencil",
          "[device][schedule]") {
  for (r::index_t d : {1, 3}) {
    INFO("channels " << d);
    check_gradient_footprint(r::measures::dtw().cost, 9, 7, d, 11);
    check_gradient_footprint(r::dtw_cost<r::l1_distance>{}, 9, 7, d, 12);
    check_gradient_footprint(r::measures::msm(0.5).cost, 9, 7, d, 13);
    check_gradient_footprint(r::measures::soft_msm<double>(1.0, 0.5).cost, 9, 7, d, 14);
    check_gradient_footprint(r::measures::cdtw().cost, 9, 7, d, 15);
    check_gradient_footprint(r::transposed_cost<r::soft_msm_cost<double>>{r::measures::soft_msm<double>(0.5).cost},
                             7, 9, d, 16);
    check_gradient_footprint(r::with_warp_penalty(r::measures::soft_cdtw<double>(0.5), 0.2).cost, 9, 7, d, 17);
  }
}

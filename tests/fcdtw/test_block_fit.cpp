// The block fit of block_fit.hpp (the GPU's block_per_pair fit) run on the CPU with an emulated
// CTA: one thread gives the host's warp and logit backward bit for bit; any thread count gives
// the host fit's distance up to rounding; the threads' order does not change a bit; the warp
// stays monotone across the threads' shares; a diverged fit gives NaN where the host refuses.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>
#include <support/catch.hpp>
#include <resilin/backend/device/wavefront.hpp>
#include <resilin/fcdtw/block_fit.hpp>
#include "host/helpers.hpp"

namespace fc = resilin::fcdtw;
using resilin::index_t;
using resilin::device_detail::emulated_cta;

namespace {

/// One block's global and shared buffers for fits of up to K segments.
template <class T>
struct block_buffers {
  std::vector<T> global, shared;
  block_buffers(index_t K, int threads)
      : global(static_cast<std::size_t>(fc::detail::block_fit_size(K)), std::numeric_limits<T>::quiet_NaN()),
        shared(static_cast<std::size_t>(fc::detail::block_scratch_size(threads)), std::numeric_limits<T>::quiet_NaN()) {}
  fc::fit_workspace<T> ws(index_t K) { return fc::fit_workspace_in(global.data(), K); }
  T* slots(index_t K) { return global.data() + fc::fit_workspace_size(K); }
  fc::detail::block_scratch<T> scratch(int threads) { return fc::detail::block_scratch_in(shared.data(), threads); }
};

template <class T>
std::vector<T> series(index_t n, std::uint64_t seed) {
  auto const d = resilin_test::random_values(static_cast<std::size_t>(n), seed, -1.0, 1.0);
  return std::vector<T>(d.begin(), d.end());
}

template <class T>
fc::interpolant<T> view(std::vector<T> const& s, index_t d) {
  return fc::uniform_interpolant(resilin::series_view<T const>{s.data(), static_cast<index_t>(s.size()) / d, d});
}

struct block_run {
  double d;
  std::vector<double> v;
};

template <class T>
block_run run_block(fc::interpolant<T> const& x, fc::interpolant<T> const& y, index_t K,
                    fc::fit_options const& o, emulated_cta ex) {
  block_buffers<T> b(K, ex.threads);
  auto const ws = b.ws(K);
  T const d = fc::detail::block_fit(ex, ex.threads, x, y, K, o, ws, b.slots(K), b.scratch(ex.threads));
  return {static_cast<double>(d), std::vector<double>(ws.v, ws.v + K + 1)};
}

template <class T>
double host_fit(fc::interpolant<T> const& x, fc::interpolant<T> const& y, index_t K,
                fc::fit_options const& o, bool& finite) {
  std::vector<T> buf(static_cast<std::size_t>(fc::fit_workspace_size(K)));
  T value = T(0);
  finite = fc::detail::fit_from_identity(x, y, K, o, fc::fit_workspace_in(buf.data(), K), value);
  return static_cast<double>(value);
}

}  // namespace

TEMPLATE_TEST_CASE("block warp and logit backward with one thread: the host's bits", "[fcdtw][block]",
                   float, double) {
  using T = TestType;
  index_t const K = 37;
  for (auto map : {fc::warp_map::softplus_cumsum, fc::warp_map::softmax_cumsum}) {
    for (double scale : {3.0, 1e308}) {  // 1e308: the softplus sum overflows and is rescaled
      if (scale > 1e30 && sizeof(T) == 4) continue;
      INFO("map " << static_cast<int>(map) << " scale " << scale);
      auto const r = resilin_test::random_values(static_cast<std::size_t>(K), 5, scale > 1e30 ? 0.5 : -1.0, 1.0);
      auto const dv = series<T>(K + 1, 6);
      block_buffers<T> b(K, 1);
      auto const ws = b.ws(K);
      for (index_t i = 0; i < K; ++i) ws.r[i] = static_cast<T>(r[static_cast<std::size_t>(i)] * scale);
      // slots whose combination is dv: dv_k in segment k's left slot, 0 in the right ones
      T* const slots = b.slots(K);
      for (index_t j = 0; j < K; ++j) {
        slots[2 * j] = dv[static_cast<std::size_t>(j)];
        slots[2 * j + 1] = T(0);
      }
      emulated_cta const ex{1, false};
      fc::detail::block_warp(ex, 1, map, ws, K, b.scratch(1));
      std::vector<T> v(static_cast<std::size_t>(K + 1)), dr(static_cast<std::size_t>(K));
      fc::warp_from_logits(map, ws.r, K, v.data());
      CHECK(std::memcmp(v.data(), ws.v, v.size() * sizeof(T)) == 0);
      fc::detail::block_logits_backward(ex, 1, map, ws, slots, K, b.scratch(1));
      std::vector<T> dv_inner(dv.begin(), dv.end());
      dv_inner[static_cast<std::size_t>(K)] = T(0);  // never reaches the logits
      fc::logits_backward(map, ws.r, K, dv_inner.data(), dr.data());
      CHECK(std::memcmp(dr.data(), ws.dr, dr.size() * sizeof(T)) == 0);
    }
  }
}

TEMPLATE_TEST_CASE("block fit equals the host fit up to rounding, for any thread count and order",
                   "[fcdtw][block]", float, double) {
  using T = TestType;
  double const tol = sizeof(T) == 4 ? 1e-4 : 1e-9;
  struct shape {
    index_t nx, ny, d, segments, steps;
    fc::warp_map map;
    fc::path_norm norm;
  };
  shape const shapes[] = {
      {40, 60, 1, 0, 300, fc::warp_map::softplus_cumsum, fc::path_norm::l2},   // the defaults
      {150, 90, 2, 0, 40, fc::warp_map::softplus_cumsum, fc::path_norm::l2},   // K < threads
      {700, 600, 1, 0, 25, fc::warp_map::softplus_cumsum, fc::path_norm::l2},  // K > 256 threads
      {50, 50, 3, 7, 60, fc::warp_map::softmax_cumsum, fc::path_norm::l1},
      {33, 20, 1, 0, 0, fc::warp_map::softplus_cumsum, fc::path_norm::l2},     // no step: the identity
  };
  std::uint64_t seed = 100;
  for (auto const& s : shapes) {
    auto const xs = series<T>(s.nx * s.d, ++seed), ys = series<T>(s.ny * s.d, ++seed);
    auto const x = view(xs, s.d), y = view(ys, s.d);
    fc::fit_options o;
    o.steps = s.steps;
    o.map = s.map;
    o.norm = s.norm;
    o.segments = s.segments;
    index_t const K = fc::detail::segments_for(o, s.ny);
    bool finite = false;
    double const want = host_fit(x, y, K, o, finite);
    REQUIRE(finite);
    for (int threads : {1, 7, 32, 256}) {
      INFO("nx " << s.nx << " ny " << s.ny << " K " << K << " steps " << s.steps << " threads " << threads);
      block_run const fwd = run_block(x, y, K, o, emulated_cta{threads, false});
      CHECK(std::abs(fwd.d - want) <= tol * std::max(1.0, std::abs(want)));
      for (index_t j = 0; j < K; ++j) CHECK(fwd.v[static_cast<std::size_t>(j)] <= fwd.v[static_cast<std::size_t>(j + 1)]);
      CHECK(fwd.v.front() == 0.0);
      CHECK(fwd.v.back() == 1.0);
      block_run const rev = run_block(x, y, K, o, emulated_cta{threads, true});
      CHECK(std::memcmp(&fwd.d, &rev.d, sizeof(double)) == 0);
      CHECK(std::memcmp(fwd.v.data(), rev.v.data(), fwd.v.size() * sizeof(double)) == 0);
    }
  }
}

TEST_CASE("block fit that diverges gives NaN where the host refuses", "[fcdtw][block]") {
  auto const xs = series<double>(30, 1), ys = series<double>(25, 2);
  auto const x = view(xs, 1), y = view(ys, 1);
  fc::fit_options o;
  o.steps = 60;
  o.lr = 1e308;
  index_t const K = 24;
  bool finite = true;
  host_fit(x, y, K, o, finite);
  REQUIRE_FALSE(finite);
  CHECK(std::isnan(run_block(x, y, K, o, emulated_cta{32, false}).d));
}

TEMPLATE_TEST_CASE("block fit from given logits equals the host fit from them", "[fcdtw][block]",
                   float, double) {
  // The warm start of fit_distances(..., logits): the block reads the start (here in place, as
  // the kernel passes the row it later overwrites) and ends at the host fit_from_logits' result.
  using T = TestType;
  double const tol = sizeof(T) == 4 ? 1e-4 : 1e-9;
  auto const xs = series<T>(90, 41), ys = series<T>(70, 42);
  auto const x = view(xs, 1), y = view(ys, 1);
  fc::fit_options o;
  o.steps = 50;
  index_t const K = 69;
  auto const start = resilin_test::random_values(static_cast<std::size_t>(K), 43, -1.0, 1.0);
  std::vector<T> buf(static_cast<std::size_t>(fc::fit_workspace_size(K)));
  auto const hws = fc::fit_workspace_in(buf.data(), K);
  for (index_t i = 0; i < K; ++i) hws.r[i] = static_cast<T>(start[static_cast<std::size_t>(i)]);
  T want = T(0);
  REQUIRE(fc::detail::fit_from_logits(x, y, K, o, hws, want));
  for (int threads : {1, 7, 256}) {
    for (bool reverse : {false, true}) {
      INFO("threads " << threads << " reverse " << reverse);
      block_buffers<T> b(K, threads);
      auto const ws = b.ws(K);
      for (index_t i = 0; i < K; ++i) ws.r[i] = static_cast<T>(start[static_cast<std::size_t>(i)]);
      // the start in ws.r itself, or in a buffer of its own (the kernel's row of logits)
      std::vector<T> own(start.begin(), start.end());
      if (!reverse)
        for (index_t i = 0; i < K; ++i) ws.r[i] = std::numeric_limits<T>::quiet_NaN();
      T const d = fc::detail::block_fit(emulated_cta{threads, reverse}, threads, x, y, K, o, ws,
                                        b.slots(K), b.scratch(threads), reverse ? ws.r : own.data());
      CHECK(std::abs(static_cast<double>(d) - static_cast<double>(want)) <=
            tol * std::max(1.0, std::abs(static_cast<double>(want))));
      for (index_t i = 0; i < K; ++i) CHECK(std::abs(static_cast<double>(ws.r[i] - hws.r[i])) <= 10 * tol);
    }
  }
}

// The CUDA backend against the host backend (issue 3, item 6): values, pairwise, gradients and
// alignment matrices on random ragged, banded shapes, float (1e-5 relative) and double (1e-12),
// hard and soft, plain and divergence; finiteness on long sequences at gamma = 0.01; run-to-run
// bitwise determinism; every job schedule (block or warp per pair) giving the same bits; the
// memory contract through a counting workspace allocator; input validation. Exits 77 (skipped) without a GPU (support/gpu_main.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <span>
#include <type_traits>
#include <vector>
#include <support/catch.hpp>
#include <support/device_buffer.cuh>
#include <resilin/cuda.cuh>
#include "host_reference.hpp"

namespace r = resilin;
using resilin_test::ref_measure;

/// On the emulated device (tests/emulation), where kernels run on the CPU, the two largest
/// tiled cases use smaller shapes that take the same paths (explicit tiling; the premise checks
/// of the automatic one): 6.5 s each there instead of 61 and 76 s (2-core Xeon VM).
#if defined(RESILIN_CUDA_EMULATION)
constexpr bool emulated_device = true;
#else
constexpr bool emulated_device = false;
#endif

namespace {

using resilin_test::device_buffer;

/// A ragged batch on the host and on the device.
template <class T>
struct batch {
  r::index_t count, max_length, channels;
  std::vector<r::index_t> lengths;
  std::vector<T> data;
  device_buffer<T> d_data;
  device_buffer<r::index_t> d_lengths;

  batch(r::index_t b, r::index_t L, r::index_t d, std::uint64_t seed, bool full)
      : count(b), max_length(L), channels(d), lengths(init_lengths(b, L, seed, full)),
        data(init_data(b, L, d, seed)), d_data(data), d_lengths(lengths) {}

  static std::vector<r::index_t> init_lengths(r::index_t b, r::index_t L, std::uint64_t seed, bool full) {
    std::mt19937_64 g(seed * 31 + 7);
    std::uniform_int_distribution<r::index_t> u(1, L);
    std::vector<r::index_t> v(static_cast<std::size_t>(b));
    for (auto& e : v) e = full ? L : u(g);
    if (b > 1) v[1] = L;
    return v;
  }
  std::vector<T> init_data(r::index_t b, r::index_t L, r::index_t d, std::uint64_t seed) const {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> v(static_cast<std::size_t>(b * L * d));
    for (auto& e : v) e = static_cast<T>(u(g));
    for (r::index_t k = 0; k < b; ++k)
      for (r::index_t t = lengths[static_cast<std::size_t>(k)]; t < L; ++t)
        for (r::index_t c = 0; c < d; ++c) v[static_cast<std::size_t>((k * L + t) * d + c)] = T(1e3);
    return v;
  }
  r::batch_view<T const> host_view() const {
    return {data.data(), count, max_length, channels, lengths.data()};
  }
  r::batch_view<T const> device_view() const {
    return {d_data.ptr, count, max_length, channels, d_lengths.ptr};
  }
};

template <class T>
double tolerance() { return std::is_same_v<T, double> ? 1e-12 : 1e-5; }

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

template <class V>
bool bitwise(V const& a, V const& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

std::vector<r::band_spec> bands() {
  return {r::band_spec::none(), r::band_spec::radius(0), r::band_spec::radius(3),
          r::band_spec::window(0.1), r::band_spec::window(0.3), r::band_spec::itakura(1.5)};
}

/// Counts the workspace bytes the convenience layer holds at once.
struct counting_allocator {
  std::size_t current = 0, peak = 0, calls = 0;
  static void* allocate(std::size_t bytes, cudaStream_t s, void* ctx) {
    auto* self = static_cast<counting_allocator*>(ctx);
    void* p = nullptr;
    if (r::cuda_memory::allocate(&p, bytes, s) != cudaSuccess) return nullptr;
    self->current += bytes;
    self->peak = std::max(self->peak, self->current);
    ++self->calls;
    return p;
  }
  static void deallocate(void* p, std::size_t bytes, cudaStream_t s, void* ctx) {
    auto* self = static_cast<counting_allocator*>(ctx);
    (void)r::cuda_memory::release(p, s);
    self->current -= bytes;
  }
  r::device_allocator handle() { return {&allocate, &deallocate, this}; }
};

template <class T, class M>
void compare_all(ref_measure const& rm, M const& meas, std::uint64_t seed, cudaStream_t stream) {
  r::index_t const B = 6, d = 3;
  batch<T> const X(B, 45, d, seed, false), Y(B, 38, d, seed + 1000, false);
  auto const exec = r::device.on(stream);
  // values
  std::vector<T> hv(B);
  resilin_test::ref_values(rm, X.host_view(), Y.host_view(), std::span<T>(hv));
  device_buffer<T> dv(B);
  r::values(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B));
  CHECK(rel_err(dv.host(), hv) <= tolerance<T>());
  // pairwise
  std::vector<T> hp(B * B);
  resilin_test::ref_pairwise(rm, X.host_view(), Y.host_view(), r::matrix_view<T>{hp.data(), B, B});
  device_buffer<T> dp(B * B);
  r::pairwise(exec, meas, X.device_view(), Y.device_view(), r::matrix_view<T>{dp.ptr, B, B});
  CHECK(rel_err(dp.host(), hp) <= tolerance<T>());
  // gradients, with an upstream
  std::vector<T> up(B);
  for (r::index_t b = 0; b < B; ++b) up[static_cast<std::size_t>(b)] = T(0.5) + T(b) / T(4);
  std::vector<T> hgx(X.data.size()), hgy(Y.data.size());
  resilin_test::ref_values_and_grads(rm, X.host_view(), Y.host_view(), std::span<T>(hv),
                      r::batch_view<T>{hgx.data(), B, X.max_length, d, X.lengths.data()},
                      r::batch_view<T>{hgy.data(), B, Y.max_length, d, Y.lengths.data()},
                      std::span<T const>(up));
  device_buffer<T> dgx(hgx.size()), dgy(hgy.size()), dup(up);
  r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B),
                      r::batch_view<T>{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr},
                      r::batch_view<T>{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr},
                      std::span<T const>(dup.ptr, B));
  CHECK(rel_err(dv.host(), hv) <= tolerance<T>());
  CHECK(rel_err(dgx.host(), hgx) <= 10 * tolerance<T>());
  CHECK(rel_err(dgy.host(), hgy) <= 10 * tolerance<T>());
}

/// Values and pairwise values of X against Y under each schedule, bit for bit the first's;
/// returns the values.
template <class T, class M>
std::vector<T> check_value_schedules(M const& meas, batch<T> const& X, batch<T> const& Y,
                           std::initializer_list<r::device_schedule> schedules) {
  r::index_t const B = X.count;
  std::vector<T> v0, p0;
  for (r::device_schedule const s : schedules) {
    INFO("schedule " << int(s));
    auto const exec = r::device.with_schedule(s);
    device_buffer<T> dv(B), dp(B * B);
    r::values(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B));
    r::pairwise(exec, meas, X.device_view(), Y.device_view(), r::matrix_view<T>{dp.ptr, B, B});
    if (v0.empty()) {
      v0 = dv.host();
      p0 = dp.host();
      continue;
    }
    CHECK(bitwise(dv.host(), v0));
    CHECK(bitwise(dp.host(), p0));
  }
  return v0;
}

}  // namespace

TEMPLATE_TEST_CASE("cuda: values, pairwise and gradients equal the host", "[cuda][wavefront]",
                   float, double) {
  using T = TestType;
  cudaStream_t stream = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreate(&stream));
  std::uint64_t seed = 1;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      INFO("band kind " << int(band.type()) << " divergence " << div);
      for (double gamma : {1.0, 0.05}) {
        auto meas = r::measures::soft_dtw<T>(T(gamma), band);
        meas.divergence = div;
        compare_all<T>(ref_measure{gamma, band, div}, meas, ++seed, stream);
      }
      {
        auto meas = r::measures::dtw().with_band(band);
        meas.divergence = div;
        compare_all<T>(ref_measure{0.0, band, div}, meas, ++seed, stream);
      }
      if constexpr (std::is_same_v<T, double>) {  // a cost-model wrapper (warp_penalty_cost)
        auto meas = r::with_warp_penalty(r::measures::soft_dtw<T>(T(0.5), band), 0.3);
        meas.divergence = div;
        compare_all<T>(ref_measure{0.5, band, div, ref_measure::cost_kind::dtw, 1.0, 0.3}, meas, ++seed,
                       stream);
      }
    }
  }
  RESILIN_CUDA_TRY(cudaStreamDestroy(stream));
}

TEMPLATE_TEST_CASE("cuda: independent channels (the MSM family, d = 3) equal the host",
                   "[cuda][wavefront][channels]", float, double) {
  using T = TestType;
  using cost_kind = ref_measure::cost_kind;
  cudaStream_t stream = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreate(&stream));
  std::uint64_t seed = 300;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      INFO("band kind " << int(band.type()) << " divergence " << div);
      auto soft = r::measures::soft_msm<T>(T(0.5), T(1), band);
      soft.divergence = div;
      compare_all<T>(ref_measure{0.5, band, div, cost_kind::soft_msm, 1.0}, soft, ++seed, stream);
      auto hard = r::measures::msm(0.5, band);
      hard.divergence = div;
      compare_all<T>(ref_measure{0.0, band, div, cost_kind::msm, 0.5}, hard, ++seed, stream);
    }
  }
  // pairwise gradients, weighted, and E refused (one alignment per channel)
  r::index_t const nx = 3, ny = 4, d = 3;
  batch<T> const X(nx, 29, d, 401, false), Y(ny, 23, d, 402, false);
  std::vector<T> w(nx * ny);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = T(0.25) + T(k % 5) / T(4);
  auto const meas = r::measures::soft_msm<T>(T(0.5), T(1), r::band_spec::window(0.3));
  std::vector<T> hg(X.data.size()), hv(nx * ny);
  resilin_test::ref_pairwise_grads(ref_measure{0.5, r::band_spec::window(0.3), false, cost_kind::soft_msm, 1.0},
                                   X.host_view(), Y.host_view(),
                                   r::batch_view<T>{hg.data(), nx, X.max_length, d, X.lengths.data()},
                                   r::matrix_view<T>{hv.data(), nx, ny}, r::matrix_view<T const>{w.data(), nx, ny});
  device_buffer<T> dg(hg.size()), dv(hv.size()), dw(w);
  auto const exec = r::device.on(stream);
  r::pairwise_grads(exec, meas, X.device_view(), Y.device_view(),
                    r::batch_view<T>{dg.ptr, nx, X.max_length, d, X.d_lengths.ptr},
                    r::matrix_view<T>{dv.ptr, nx, ny}, r::matrix_view<T const>{dw.ptr, nx, ny});
  CHECK(rel_err(dv.host(), hv) <= tolerance<T>());
  CHECK(rel_err(dg.host(), hg) <= 10 * ny * tolerance<T>());
  device_buffer<T> de(static_cast<std::size_t>(nx * X.max_length * X.max_length)), dvals(nx);
  CHECK_THROWS_AS(r::alignment_matrices(exec, meas, X.device_view(), X.device_view(),
                                        std::span<T>(dvals.ptr, nx), de.ptr),
                  r::invalid_argument);
  RESILIN_CUDA_TRY(cudaStreamDestroy(stream));
}

TEMPLATE_TEST_CASE("cuda: pairwise gradients equal the host's", "[cuda][wavefront][pairwise]", float, double) {
  using T = TestType;
  cudaStream_t stream = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreate(&stream));
  auto const exec = r::device.on(stream);
  r::index_t const nx = 3, ny = 5, d = 2;
  std::uint64_t seed = 500;
  for (auto const& band : bands()) {
    for (bool div : {false, true}) {
      INFO("band kind " << int(band.type()) << " divergence " << div);
      batch<T> const X(nx, 33, d, ++seed, false), Y(ny, 41, d, ++seed, false);
      std::vector<T> w(nx * ny);
      for (std::size_t k = 0; k < w.size(); ++k) w[k] = T(0.25) + T(k % 7) / T(5);
      auto meas = r::measures::soft_dtw<T>(T(0.5), band);
      meas.divergence = div;
      std::vector<T> hg(X.data.size()), hv(nx * ny);
      resilin_test::ref_pairwise_grads(ref_measure{0.5, band, div}, X.host_view(), Y.host_view(),
                                       r::batch_view<T>{hg.data(), nx, X.max_length, d, X.lengths.data()},
                                       r::matrix_view<T>{hv.data(), nx, ny},
                                       r::matrix_view<T const>{w.data(), nx, ny});
      device_buffer<T> dg(hg.size()), dv(hv.size()), dw(w);
      r::pairwise_grads(exec, meas, X.device_view(), Y.device_view(),
                        r::batch_view<T>{dg.ptr, nx, X.max_length, d, X.d_lengths.ptr},
                        r::matrix_view<T>{dv.ptr, nx, ny}, r::matrix_view<T const>{dw.ptr, nx, ny});
      CHECK(rel_err(dv.host(), hv) <= tolerance<T>());
      CHECK(rel_err(dg.host(), hg) <= 10 * ny * tolerance<T>());
      // without out and weights (ones), twice: the same bits
      device_buffer<T> dg1(hg.size()), dg2(hg.size());
      r::pairwise_grads(exec, meas, X.device_view(), Y.device_view(),
                        r::batch_view<T>{dg1.ptr, nx, X.max_length, d, X.d_lengths.ptr});
      r::pairwise_grads(exec, meas, X.device_view(), Y.device_view(),
                        r::batch_view<T>{dg2.ptr, nx, X.max_length, d, X.d_lengths.ptr});
      CHECK(bitwise(dg1.host(), dg2.host()));
    }
  }
  RESILIN_CUDA_TRY(cudaStreamDestroy(stream));
}

TEST_CASE("cuda: alignment matrices equal the host", "[cuda][wavefront]") {
  using T = double;
  r::index_t const B = 4;
  batch<T> const X(B, 33, 2, 71, false), Y(B, 29, 2, 72, false);
  for (auto const& band : bands()) {
    auto const meas = r::measures::soft_dtw<T>(0.2, band);
    device_buffer<T> dv(B), de(static_cast<std::size_t>(B * X.max_length * Y.max_length));
    r::alignment_matrices(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B), de.ptr);
    auto const e = de.host();
    auto const v = dv.host();
    for (r::index_t b = 0; b < B; ++b) {
      r::index_t const n = X.lengths[static_cast<std::size_t>(b)], m = Y.lengths[static_cast<std::size_t>(b)];
      std::vector<T> he(static_cast<std::size_t>(n * m));
      T const hv = resilin_test::ref_alignment_matrix(ref_measure{0.2, band, false}, X.host_view()[b], Y.host_view()[b], r::matrix_view<T>{he.data(), n, m});
      CHECK(std::abs(v[static_cast<std::size_t>(b)] - hv) <= 1e-12 * std::max(1.0, std::abs(hv)));
      double worst = 0;
      for (r::index_t i = 0; i < X.max_length; ++i)
        for (r::index_t j = 0; j < Y.max_length; ++j) {
          T const got = e[static_cast<std::size_t>((b * X.max_length + i) * Y.max_length + j)];
          T const want = i < n && j < m ? he[static_cast<std::size_t>(i * m + j)] : T(0);
          worst = std::max(worst, std::abs(got - want));
        }
      CHECK(worst <= 1e-12);
    }
  }
}

TEST_CASE("cuda: long sequences at gamma 0.01 stay finite", "[cuda][wavefront][long]") {
  using T = float;
  auto const meas = r::measures::soft_dtw<T>(T(0.01));
  {  // value, n = m = 65536: one CTA with its rings in global memory, and tiled (automatic on
     // a GPU with 4 or more SMs): finite, and the same bits
    batch<T> const X(1, 65536, 1, 5, true), Y(1, 65536, 1, 6, true);
    std::vector<T> v[2];
    r::device_schedule const schedules[2] = {r::device_schedule::block_per_pair, r::device_schedule::tiled};
    for (int k = 0; k < 2; ++k) {
      device_buffer<T> dv(1);
      r::values(r::device.with_schedule(schedules[k]), meas, X.device_view(), Y.device_view(),
                std::span<T>(dv.ptr, 1));
      v[k] = dv.host();
      CHECK(std::isfinite(v[k][0]));
    }
    CHECK(bitwise(v[1], v[0]));
  }
  {  // gradients, n = m = 16384, against the host
    batch<T> const X(1, 16384, 1, 7, true), Y(1, 16384, 1, 8, true);
    device_buffer<T> dv(1), dgx(X.data.size()), dgy(Y.data.size());
    r::values_and_grads(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, 1),
                        r::batch_view<T>{dgx.ptr, 1, X.max_length, 1, nullptr},
                        r::batch_view<T>{dgy.ptr, 1, Y.max_length, 1, nullptr});
    auto const gx = dgx.host(), gy = dgy.host();
    CHECK(std::all_of(gx.begin(), gx.end(), [](T v) { return std::isfinite(v); }));
    CHECK(std::all_of(gy.begin(), gy.end(), [](T v) { return std::isfinite(v); }));
    std::vector<T> hv(1);
    resilin_test::ref_values(ref_measure{0.01, {}, false}, X.host_view(), Y.host_view(), std::span<T>(hv));
    CHECK(std::abs(dv.host()[0] - hv[0]) <= 1e-4 * std::max(1.0f, std::abs(hv[0])));
  }
  {  // S1: (2, 128, 128, 3), gamma 0.01: finite, mean |grad| > 1e-6
    batch<T> const X(2, 128, 3, 9, true), Y(2, 128, 3, 10, true);
    device_buffer<T> dv(2), dgx(X.data.size()), dgy(Y.data.size());
    r::values_and_grads(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, 2),
                        r::batch_view<T>{dgx.ptr, 2, 128, 3, nullptr},
                        r::batch_view<T>{dgy.ptr, 2, 128, 3, nullptr});
    auto const gx = dgx.host();
    double mean = 0;
    for (T v : gx) {
      CHECK(std::isfinite(v));
      mean += std::abs(v);
    }
    CHECK(mean / double(gx.size()) > 1e-6);
  }
}

TEST_CASE("cuda: results are bitwise identical run to run", "[cuda][wavefront]") {
  using T = float;
  r::index_t const B = 8, d = 4;
  batch<T> const X(B, 300, d, 21, false), Y(B, 257, d, 22, false);
  auto const meas = r::measures::soft_dtw_divergence<T>(T(0.1), r::band_spec::window(0.2));
  std::vector<T> v0, gx0, gy0;
  for (int run = 0; run < 3; ++run) {
    device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size());
    r::values_and_grads(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B),
                        r::batch_view<T>{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr},
                        r::batch_view<T>{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr});
    if (run == 0) {
      v0 = dv.host();
      gx0 = dgx.host();
      gy0 = dgy.host();
    } else {
      CHECK(bitwise(dv.host(), v0));
      CHECK(bitwise(dgx.host(), gx0));
      CHECK(bitwise(dgy.host(), gy0));
    }
  }
}

TEST_CASE("cuda: expert launches (window band) replay from a CUDA graph with the bits of direct calls",
          "[cuda][wavefront][graph]") {
  // Nothing in a launch may depend on host memory that is gone when the call returns: the
  // band is resolved on the device, the workspace is the caller's, every operation is on the
  // stream. Captured once, the graph replays the calls.
  using T = float;
  r::index_t const B = 6, d = 2;
  batch<T> const X(B, 120, d, 91, false), Y(B, 100, d, 92, false);
  auto const meas = r::measures::soft_dtw_divergence<T>(T(0.3), r::band_spec::window(0.25));
  // the uploads (cudaMemcpy from pageable memory may return before the copy lands) complete
  // before the work of a non-blocking stream, which the default stream does not order
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  auto const exec = r::device.on(s);
  std::size_t vb = 0, tb = 0;
  device_buffer<T> v[2] = {device_buffer<T>(B), device_buffer<T>(B)}, t[2] = {device_buffer<T>(B), device_buffer<T>(B)};
  device_buffer<T> gx[2] = {device_buffer<T>(X.data.size()), device_buffer<T>(X.data.size())};
  device_buffer<T> gy[2] = {device_buffer<T>(Y.data.size()), device_buffer<T>(Y.data.size())};
  auto const GX = [&](int k) { return r::batch_view<T>{gx[k].ptr, B, X.max_length, d, X.d_lengths.ptr}; };
  auto const GY = [&](int k) { return r::batch_view<T>{gy[k].ptr, B, Y.max_length, d, Y.d_lengths.ptr}; };
  REQUIRE(r::expert::values(nullptr, vb, exec, meas, X.device_view(), Y.device_view(), v[0].ptr) == cudaSuccess);
  REQUIRE(r::expert::values_and_grads(nullptr, tb, exec, meas, X.device_view(), Y.device_view(), t[0].ptr,
                                      GX(0), GY(0)) == cudaSuccess);
  device_buffer<char> wv(vb), wt(tb);
  auto const launch = [&](int k) {
    cudaError_t const a = r::expert::values(wv.ptr, vb, exec, meas, X.device_view(), Y.device_view(), v[k].ptr);
    cudaError_t const b = r::expert::values_and_grads(wt.ptr, tb, exec, meas, X.device_view(), Y.device_view(),
                                                      t[k].ptr, GX(k), GY(k));
    return a != cudaSuccess ? a : b;
  };
  REQUIRE(launch(0) == cudaSuccess);  // direct
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaError_t const captured = launch(1);
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  REQUIRE(captured == cudaSuccess);
  cudaGraphExec_t instance = nullptr;
  REQUIRE(cudaGraphInstantiate(&instance, graph, 0) == cudaSuccess);
  for (int replay = 0; replay < 2; ++replay) {
    INFO("replay " << replay);
    for (auto* b : {&v[1], &t[1], &gx[1], &gy[1]})  // poisoned (NaN) before each replay
      REQUIRE(cudaMemsetAsync(b->ptr, 0xff, b->size * sizeof(T), s) == cudaSuccess);
    REQUIRE(cudaGraphLaunch(instance, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(bitwise(v[1].host(), v[0].host()));
    CHECK(bitwise(t[1].host(), t[0].host()));
    CHECK(bitwise(gx[1].host(), gx[0].host()));
    CHECK(bitwise(gy[1].host(), gy[0].host()));
  }
  CHECK(cudaGraphExecDestroy(instance) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("cuda: an error an earlier call left pending is not reported as a call's own",
          "[cuda][wavefront]") {
  // the calls read their launches' status with cudaGetLastError: the caller's own cudaMalloc
  // that failed (and was handled) came back as cudaErrorMemoryAllocation from expert::values,
  // and as a cuda_error thrown by values(), with the right values written
  using T = float;
  r::index_t const B = 4, d = 2;
  batch<T> const X(B, 40, d, 61, true), Y(B, 33, d, 62, true);
  auto const meas = r::measures::soft_dtw<T>(T(0.1));
  auto const GX = [&](device_buffer<T>& g) { return r::batch_view<T>{g.ptr, B, X.max_length, d, X.d_lengths.ptr}; };
  auto const GY = [&](device_buffer<T>& g) { return r::batch_view<T>{g.ptr, B, Y.max_length, d, Y.d_lengths.ptr}; };
  device_buffer<T> want(B), got(B), pw(B * B), gx(X.data.size()), gy(Y.data.size()), e(B * X.max_length * Y.max_length);
  r::values(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(want.ptr, B));
  resilin_test::leave_pending_error();
  CHECK_NOTHROW(r::values(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(got.ptr, B)));
  CHECK(bitwise(got.host(), want.host()));
  resilin_test::leave_pending_error();
  CHECK_NOTHROW(r::pairwise(r::device, meas, X.device_view(), Y.device_view(), r::matrix_view<T>{pw.ptr, B, B}));
  resilin_test::leave_pending_error();
  CHECK_NOTHROW(r::values_and_grads(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(got.ptr, B),
                                    GX(gx), GY(gy)));
  resilin_test::leave_pending_error();
  CHECK_NOTHROW(r::pairwise_grads(r::device, meas, X.device_view(), Y.device_view(), GX(gx)));
  resilin_test::leave_pending_error();
  CHECK_NOTHROW(r::alignment_matrices(r::device, meas, X.device_view(), Y.device_view(),
                                      std::span<T>(got.ptr, B), e.ptr));
  std::size_t bytes = 0;
  REQUIRE(r::expert::values(nullptr, bytes, r::device, meas, X.device_view(), Y.device_view(), got.ptr) ==
          cudaSuccess);
  device_buffer<char> ws(bytes);
  resilin_test::leave_pending_error();
  CHECK(r::expert::values(ws.ptr, bytes, r::device, meas, X.device_view(), Y.device_view(), got.ptr) ==
        cudaSuccess);
  CHECK(bitwise(got.host(), want.host()));
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("cuda: every schedule gives the same bits (block or warp per pair)", "[cuda][wavefront]") {
  using T = double;
  r::index_t const B = 37, d = 2;  // 5 CTAs of 8 warps, the last one partly empty
  // X's 29 samples are the rows of the values: the warp schedule runs them by shuffles
  batch<T> const X(B, 29, d, 31, false), Y(B, 70, d, 32, false);
  auto const meas = r::measures::soft_dtw<T>(T(0.5), r::band_spec::window(0.5));
  std::vector<T> v[4], gx[4], gy[4], p[4];
  r::device_schedule const schedules[4] = {r::device_schedule::automatic,
                                           r::device_schedule::block_per_pair,
                                           r::device_schedule::warp_per_pair,
                                           r::device_schedule::tiled};
  for (int s = 0; s < 4; ++s) {
    auto const exec = r::device.with_schedule(schedules[s]);
    device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size()), dp(B * B);
    r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B),
                        r::batch_view<T>{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr},
                        r::batch_view<T>{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr});
    r::pairwise(exec, meas, X.device_view(), Y.device_view(), r::matrix_view<T>{dp.ptr, B, B});
    v[s] = dv.host();
    gx[s] = dgx.host();
    gy[s] = dgy.host();
    p[s] = dp.host();
  }
  for (int s = 1; s < 4; ++s) {
    CHECK(bitwise(v[s], v[0]));
    CHECK(bitwise(gx[s], gx[0]));
    CHECK(bitwise(gy[s], gy[0]));
    CHECK(bitwise(p[s], p[0]));
  }
  std::vector<T> host(B);
  resilin_test::ref_values(ref_measure{0.5, r::band_spec::window(0.5), false}, X.host_view(),
                           Y.host_view(), std::span<T>(host));
  CHECK(rel_err(v[2], host) <= 1e-12);
}

TEST_CASE("cuda: shuffle-warp training gives the bits of one block per pair (stencil 1 and 2)",
          "[cuda][wavefront]") {
  using T = double;
  r::index_t const B = 37, d = 1;  // 5 CTAs of 8 warps, the last one partly empty
  batch<T> const X(B, 29, d, 35, false), Y(B, 32, d, 36, false);  // both <= 32: the divergence too
  std::vector<T> up(B);
  for (r::index_t b = 0; b < B; ++b) up[static_cast<std::size_t>(b)] = T(0.5) + T(b) / T(8);
  device_buffer<T> const dup(up);
  auto check = [&](auto meas) {
    for (bool div : {false, true}) {
      meas.divergence = div;
      INFO("divergence " << div);
      std::vector<T> v[2], gx[2], gy[2];
      r::device_schedule const schedules[2] = {r::device_schedule::block_per_pair,
                                               r::device_schedule::warp_per_pair};
      for (int s = 0; s < 2; ++s) {
        device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size());
        r::values_and_grads(r::device.with_schedule(schedules[s]), meas, X.device_view(),
                            Y.device_view(), std::span<T>(dv.ptr, B),
                            r::batch_view<T>{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr},
                            r::batch_view<T>{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr},
                            std::span<T const>(dup.ptr, B));
        v[s] = dv.host();
        gx[s] = dgx.host();
        gy[s] = dgy.host();
      }
      CHECK(bitwise(v[1], v[0]));
      CHECK(bitwise(gx[1], gx[0]));
      CHECK(bitwise(gy[1], gy[0]));
    }
  };
  check(r::measures::soft_dtw<T>(T(0.5), r::band_spec::window(0.5)));
  check(r::measures::soft_msm<T>(T(1), T(0.5)));  // x_{i-1} in a cell's cost: gradient phases
}

TEST_CASE("cuda: the strip warp (values of 33 to 992 rows) gives the bits of one block per pair",
          "[cuda][wavefront][strip]") {
  // pairwise 24 x 24 = 576 jobs: automatic takes the strip warp on GPUs of up to 144 SMs; forced
  // with warp_per_pair. Univariate kernels (d = 1: every cost model's cells compiled with the
  // channel count a constant, which must not change nvcc's contractions) and the multichannel
  // one (d = 8, double: rows staged when they fit, read in place with the divergence). The
  // emulated device runs 2 pairs of at most 100 rows (the strip warp's shuffles and row
  // hand-over, forced by warp_per_pair): the full shapes are left to the GPU.
  auto check = [](auto meas, auto value, r::index_t n, r::index_t m, r::index_t d, std::uint64_t seed) {
    using T = decltype(value);
    r::index_t const B = emulated_device ? 2 : 24;
    if (emulated_device) {
      n = std::min<r::index_t>(n, 100);
      m = std::min<r::index_t>(m, 90);
    }
    batch<T> const X(B, n, d, seed, false), Y(B, m, d, seed + 1, false);
    INFO("n " << n << " m " << m << " d " << d << " divergence " << meas.divergence);
    check_value_schedules(meas, X, Y, {r::device_schedule::block_per_pair, r::device_schedule::automatic,
                                       r::device_schedule::warp_per_pair});
  };
  for (bool div : {false, true}) {
    auto soft = r::measures::soft_dtw<float>(0.5f);
    soft.divergence = div;
    check(soft, 0.0f, 395, 600, 1, 61);
    check(soft, 0.0f, 40, 33, 1, 62);
    auto hard = r::measures::dtw().with_band(r::band_spec::window(0.1));
    hard.divergence = div;
    check(hard, 0.0f, 992, 700, 1, 63);
    auto softd = r::measures::soft_dtw<double>(0.5, r::band_spec::radius(20));
    softd.divergence = div;
    check(softd, 0.0, 130, 400, 8, 64);
    auto msm = r::measures::soft_msm<double>(1.0, 0.5);
    msm.divergence = div;
    check(msm, 0.0, 100, 97, 1, 65);
    auto cdtw = r::measures::soft_cdtw<float>(0.5f, r::band_spec::window(0.2));
    cdtw.divergence = div;
    check(cdtw, 0.0f, 200, 150, 1, 66);
  }
}

TEST_CASE("cuda: the tiled wavefront gives the bits of one block per pair", "[cuda][wavefront][tiled]") {
  using T = float;
  r::index_t const B = 2, d = 3;
  batch<T> const X(B, emulated_device ? 700 : 3000, d, 61, false), Y(B, emulated_device ? 520 : 2500, d, 62, true);
  for (auto const& band : {r::band_spec{}, r::band_spec::window(0.1)}) {
    auto const meas = r::measures::soft_dtw_divergence<T>(T(0.5), band);
    auto const v = check_value_schedules(meas, X, Y, {r::device_schedule::block_per_pair, r::device_schedule::tiled});
    std::vector<T> host(B);
    resilin_test::ref_values(ref_measure{0.5, band, true}, X.host_view(), Y.host_view(), std::span<T>(host));
    CHECK(rel_err(v, host) <= 1e-5);
  }
}

TEST_CASE("cuda: tiled training gives the bits of one block per pair", "[cuda][wavefront][tiled]") {
  using T = float;
  r::index_t const B = 2, d = 3;
  batch<T> const X(B, 1500, d, 71, false), Y(B, 1300, d, 72, true);
  auto const meas = r::measures::soft_dtw_divergence<T>(T(0.5), r::band_spec::window(0.3));
  struct run { std::vector<T> v, gx, gy; std::size_t bytes = 0; };
  auto train = [&](r::device_schedule sch, r::training_store st) {
    auto const exec = r::device.with_schedule(sch).with_training_store(st);
    device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size());
    r::batch_view<T> const GX{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr};
    r::batch_view<T> const GY{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr};
    run o;
    REQUIRE(r::expert::values_and_grads(nullptr, o.bytes, exec, meas, X.device_view(),
                                        Y.device_view(), dv.ptr, GX, GY) == cudaSuccess);
    r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B), GX, GY);
    o.v = dv.host();
    o.gx = dgx.host();
    o.gy = dgy.host();
    return o;
  };
  auto const block = train(r::device_schedule::block_per_pair, r::training_store::whole_grid);
  auto const whole = train(r::device_schedule::tiled, r::training_store::whole_grid);
  auto const tiles = train(r::device_schedule::tiled, r::training_store::checkpointed);
  for (run const* t : {&whole, &tiles}) {
    CHECK(bitwise(t->v, block.v));
    CHECK(bitwise(t->gx, block.gx));
    CHECK(bitwise(t->gy, block.gy));
  }
  CHECK(tiles.bytes * 4 < whole.bytes);  // R borders only: 2 / 128 of the cells, plus scratch tiles
  // E (alignment matrices) bit for bit
  std::vector<T> e[2];
  r::device_schedule const schedules[2] = {r::device_schedule::block_per_pair, r::device_schedule::tiled};
  auto const soft = r::measures::soft_dtw<T>(T(0.5), r::band_spec::window(0.3));
  for (int k = 0; k < 2; ++k) {
    device_buffer<T> dv(B), de(static_cast<std::size_t>(B * X.max_length * Y.max_length));
    r::alignment_matrices(r::device.with_schedule(schedules[k]), soft, X.device_view(), Y.device_view(),
                          std::span<T>(dv.ptr, B), de.ptr);
    e[k] = de.host();
  }
  CHECK(bitwise(e[1], e[0]));
}

TEST_CASE("cuda: tiled soft-MSM training (stencil 2, two launches per tile diagonal)",
          "[cuda][wavefront][tiled]") {
  using T = double;
  r::index_t const B = 2, d = 1;
  batch<T> const X(B, 900, d, 91, false), Y(B, 800, d, 92, true);
  auto meas = r::measures::soft_msm<T>(T(0.5), T(1));
  meas.independent_channels = false;
  std::vector<T> v[2], gx[2], gy[2];
  r::device_schedule const schedules[2] = {r::device_schedule::block_per_pair, r::device_schedule::tiled};
  for (int k = 0; k < 2; ++k) {
    device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size());
    r::values_and_grads(r::device.with_schedule(schedules[k]), meas, X.device_view(), Y.device_view(),
                        std::span<T>(dv.ptr, B), r::batch_view<T>{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr},
                        r::batch_view<T>{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr});
    v[k] = dv.host();
    gx[k] = dgx.host();
    gy[k] = dgy.host();
  }
  CHECK(bitwise(v[1], v[0]));
  CHECK(rel_err(gx[1], gx[0]) <= 1e-12);  // the sums at tile borders in another order
  CHECK(rel_err(gy[1], gy[0]) <= 1e-12);
}

TEST_CASE("cuda: distance tiles (d = 64) give the bits of the per-cell distance", "[cuda][wavefront][tiled]") {
  using T = float;
  r::index_t const B = 2, d = 64;
  batch<T> const X(B, 700, d, 81, false), Y(B, 600, d, 82, true);
  auto const meas = r::measures::soft_dtw<T>(T(1));
  std::vector<T> v[2], gx[2], gy[2], values[2];
  r::device_schedule const schedules[2] = {r::device_schedule::block_per_pair, r::device_schedule::tiled};
  for (int k = 0; k < 2; ++k) {
    auto const exec = r::device.with_schedule(schedules[k]);
    device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size()), dval(B);
    r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B),
                        r::batch_view<T>{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr},
                        r::batch_view<T>{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr});
    r::values(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dval.ptr, B));
    v[k] = dv.host();
    gx[k] = dgx.host();
    gy[k] = dgy.host();
    values[k] = dval.host();
  }
  CHECK(bitwise(values[1], values[0]));  // the value path's orientation: X on the columns
  CHECK(bitwise(v[1], v[0]));
  CHECK(bitwise(gx[1], gx[0]));
  CHECK(bitwise(gy[1], gy[0]));
}

TEST_CASE("cuda: many pairs of many channels tile automatically, with the bits of one block per pair",
          "[cuda][wavefront][tiled]") {
  using T = double;
  // ragged, 64 to 200 samples: automatic is tiled (distance tiles)
  r::index_t const B = emulated_device ? 10 : 40, d = 32;
  batch<T> const X(B, 200, d, 83, false), Y(B, 150, d, 84, false);
  std::vector<r::index_t> xl = X.lengths, yl = Y.lengths;
  for (auto& l : xl) l = std::max<r::index_t>(l, 64);
  for (auto& l : yl) l = std::max<r::index_t>(l, 64);
  device_buffer<r::index_t> const dxl(xl), dyl(yl);
  r::batch_view<T const> const Xv{X.d_data.ptr, B, X.max_length, d, dxl.ptr};
  r::batch_view<T const> const Yv{Y.d_data.ptr, B, Y.max_length, d, dyl.ptr};
  auto meas = r::measures::soft_dtw<T>(T(0.5), r::band_spec::window(0.4));
  {  // the premise: on this GPU the automatic schedule tiles these calls (else the bits below
     // compare one untiled schedule with another)
    namespace dd = r::device_detail;
    namespace cd = r::cuda_detail;
    using Cost = decltype(meas.cost);
    int const sms = cd::automatic_multiprocessors(r::device);
    INFO("SMs " << sms);
    bool const tiles3 = cd::distance_tiles_available<T, Cost>(r::device, d, 3);
    bool const tiles7 = cd::distance_tiles_available<T, Cost>(r::device, d, 7);
    // pairwise: B x B value jobs
    CHECK(dd::value_plan::make(dd::job_layout::pairwise, B, B, X.max_length, Y.max_length, false, sizeof(T),
                               r::device_schedule::automatic, sms, tiles3, d)
              .tiled);
    // values_and_grads and alignment_matrices: B pairs; pairwise_grads: B x B pairs
    for (r::index_t pairs : {B, B * B})
      CHECK(dd::train_plan::make(pairs, X.max_length, Y.max_length, d, false, false, sizeof(T),
                                 r::device_schedule::automatic, r::training_store::automatic, sms, tiles7)
                .tiled);
  }
  std::vector<T> v[2], gx[2], gy[2], p[2], e[2], pg[2];
  r::device_schedule const schedules[2] = {r::device_schedule::automatic, r::device_schedule::block_per_pair};
  for (int k = 0; k < 2; ++k) {
    auto const exec = r::device.with_schedule(schedules[k]);
    device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size()), dp(B * B),
        de(B * X.max_length * Y.max_length), dpg(X.data.size());
    r::values_and_grads(exec, meas, Xv, Yv, std::span<T>(dv.ptr, B),
                        r::batch_view<T>{dgx.ptr, B, X.max_length, d, dxl.ptr},
                        r::batch_view<T>{dgy.ptr, B, Y.max_length, d, dyl.ptr});
    r::pairwise(exec, meas, Xv, Yv, r::matrix_view<T>{dp.ptr, B, B});
    r::pairwise_grads(exec, meas, Xv, Yv, r::batch_view<T>{dpg.ptr, B, X.max_length, d, dxl.ptr});
    r::alignment_matrices(exec, meas, Xv, Yv, std::span<T>(dv.ptr, B), de.ptr);
    v[k] = dv.host();
    gx[k] = dgx.host();
    gy[k] = dgy.host();
    p[k] = dp.host();
    e[k] = de.host();
    pg[k] = dpg.host();
  }
  CHECK(bitwise(v[0], v[1]));
  CHECK(bitwise(gx[0], gx[1]));
  CHECK(bitwise(gy[0], gy[1]));
  CHECK(bitwise(p[0], p[1]));
  CHECK(bitwise(e[0], e[1]));
  CHECK(bitwise(pg[0], pg[1]));
}

TEST_CASE("cuda: checkpointed training gives the bits of the whole grid in less memory",
          "[cuda][wavefront][checkpoint]") {
  using T = float;
  r::index_t const B = 3, d = 4;
  batch<T> const X(B, 700, d, 51, false), Y(B, 650, d, 52, false);
  auto const meas = r::measures::soft_dtw_divergence<T>(T(0.3), r::band_spec::window(0.3));
  // one CTA per pair (diagonal checkpoints, segments recomputed) and tiled (tile borders, tiles
  // recomputed; automatic for these 9 problems on a GPU with 36 or more SMs)
  for (auto schedule : {r::device_schedule::block_per_pair, r::device_schedule::tiled}) {
    INFO("schedule " << int(schedule));
    std::vector<T> v[2], gx[2], gy[2];
    std::size_t bytes[2] = {0, 0};
    r::training_store const stores[2] = {r::training_store::whole_grid, r::training_store::checkpointed};
    for (int k = 0; k < 2; ++k) {
      auto const exec = r::device.with_schedule(schedule).with_training_store(stores[k]);
      device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size());
      r::batch_view<T> const GX{dgx.ptr, B, X.max_length, d, X.d_lengths.ptr};
      r::batch_view<T> const GY{dgy.ptr, B, Y.max_length, d, Y.d_lengths.ptr};
      REQUIRE(r::expert::values_and_grads(nullptr, bytes[k], exec, meas, X.device_view(),
                                          Y.device_view(), dv.ptr, GX, GY) == cudaSuccess);
      r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B), GX, GY);
      v[k] = dv.host();
      gx[k] = dgx.host();
      gy[k] = dgy.host();
    }
    CHECK(bitwise(v[1], v[0]));
    CHECK(bitwise(gx[1], gx[0]));
    CHECK(bitwise(gy[1], gy[0]));
    // 3 pairs x 3 problems of ~700 x 700 against ~75 diagonals each, or tile borders and the
    // scratch tiles of the running tiles
    CHECK(bytes[1] * 3 < bytes[0]);
  }
}

TEST_CASE("cuda: checkpointed training at every remainder of the diagonals",
          "[cuda][wavefront][checkpoint]") {
  // The forward also stored the last segment's two checkpoint diagonals, which have no slot,
  // where the diagonals D = n + m - 1 left a remainder of 0 or k - 1 in segments of k: into the
  // next job's slots or past the workspace (a reviewer's emulated runs: the divergence's value
  // off by 0.83 at 5 x 3; writes outside the allocation at 64 x 32 in float).
  using T = double;
  auto const run = [](auto const& meas, r::index_t n, r::index_t m) {
    batch<T> const X(2, n, 1, 60 + static_cast<std::uint64_t>(n), true);
    batch<T> const Y(2, m, 1, 70 + static_cast<std::uint64_t>(m), true);
    for (auto schedule : {r::device_schedule::block_per_pair, r::device_schedule::warp_per_pair}) {
      std::vector<T> v[2], gx[2], gy[2];
      r::training_store const stores[2] = {r::training_store::whole_grid, r::training_store::checkpointed};
      for (int k = 0; k < 2; ++k) {
        auto const exec = r::device.with_schedule(schedule).with_training_store(stores[k]);
        device_buffer<T> dv(2), dgx(X.data.size()), dgy(Y.data.size());
        r::batch_view<T> const GX{dgx.ptr, 2, n, 1, X.d_lengths.ptr};
        r::batch_view<T> const GY{dgy.ptr, 2, m, 1, Y.d_lengths.ptr};
        r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, 2), GX, GY);
        v[k] = dv.host();
        gx[k] = dgx.host();
        gy[k] = dgy.host();
      }
      INFO("n " << n << ", m " << m << ", schedule " << int(schedule));
      CHECK(bitwise(v[1], v[0]));
      CHECK(bitwise(gx[1], gx[0]));
      CHECK(bitwise(gy[1], gy[0]));
    }
  };
  for (r::index_t n = 2; n <= 13; ++n)
    for (r::index_t m : {2, 3, 5, 8}) {
      run(r::measures::soft_dtw<T>(0.5), n, m);
      run(r::measures::soft_dtw_divergence<T>(0.5), n, m);
    }
}

TEST_CASE("cuda: the memory contract, measured by a counting allocator", "[cuda][wavefront][memory]") {
  using T = float;
  r::index_t const B = 4, n = 1024, m = 1500, d = 8;
  batch<T> const X(B, n, d, 31, true), Y(B, m, d, 32, true);
  counting_allocator counter;
  auto const exec = r::device.with_allocator(counter.handle());
  auto const block = exec.with_schedule(r::device_schedule::block_per_pair);
  auto const meas = r::measures::soft_dtw<T>(T(1));
  device_buffer<T> dv(B), dgx(X.data.size()), dgy(Y.data.size());
  // value only, one CTA per pair: O(min(n, m)) per pair, here entirely in shared memory
  r::values(block, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B));
  RESILIN_CUDA_TRY(cudaDeviceSynchronize());
  CHECK(counter.peak <= std::size_t(B) * 3 * std::size_t(std::min(n, m)) * sizeof(T));
  // long value: the rings go to the workspace, still O(min(n, m)) per pair
  counter.peak = 0;
  batch<T> const XL(2, 20000, 1, 33, true), YL(2, 30000, 1, 34, true);
  device_buffer<T> dvl(2);
  r::values(block, meas, XL.device_view(), YL.device_view(), std::span<T>(dvl.ptr, 2));
  RESILIN_CUDA_TRY(cudaDeviceSynchronize());
  CHECK(counter.peak <= 2 * 3 * 20000 * sizeof(T) + 4096);
  CHECK(counter.peak > 0);
  // tiled (automatic for a few long pairs): three diagonals of tile borders, 6 min(n, m) values
  // per pair (whole tiles of 128)
  counter.peak = 0;
  r::values(exec.with_schedule(r::device_schedule::tiled), meas, XL.device_view(), YL.device_view(),
            std::span<T>(dvl.ptr, 2));
  RESILIN_CUDA_TRY(cudaDeviceSynchronize());
  CHECK(counter.peak <= 2 * 6 * (20000 + 127) * sizeof(T) + 4096);
  // training: R only, one value per cell, and O(n) extra per pair
  counter.peak = 0;
  r::values_and_grads(exec, meas, X.device_view(), Y.device_view(), std::span<T>(dv.ptr, B),
                      r::batch_view<T>{dgx.ptr, B, n, d, nullptr},
                      r::batch_view<T>{dgy.ptr, B, m, d, nullptr});
  RESILIN_CUDA_TRY(cudaDeviceSynchronize());
  std::size_t const cells = std::size_t(B) * n * m * sizeof(T);
  std::size_t const inputs = (X.data.size() + Y.data.size()) * sizeof(T);
  CHECK(counter.peak >= cells);
  CHECK(double(counter.peak) <= 1.1 * double(cells + inputs) - double(inputs));
  CHECK(counter.current == 0);
}

TEST_CASE("cuda: a divergence pair with a length out of range gets NaN and no gradient at all",
          "[cuda][wavefront]") {
  // its self terms were checked on their own series: with X[1] out of range, (Y[1], Y[1]) added
  // -dS(y,y)/dy / 2 to GY[1]; pairwise_grads added an invalid pair's -dS(x,x)/dx / 2 to a finite GX
  using T = double;
  r::index_t const B = 2, L = 4;
  std::vector<T> const x = {0.1, -0.4, 0.7, 0.2, 0.5, 0.3, -0.2, 0.9};
  std::vector<T> const y = {0.3, 0.8, -0.5, 0.0, -0.6, 0.1, 0.4, 0.2};
  std::vector<r::index_t> const xl = {4, 0}, yl = {3, 4};
  device_buffer<T> dx(x), dy(y), out(B), gx(B * L), gy(B * L);
  device_buffer<r::index_t> dxl(xl), dyl(yl);
  r::batch_view<T const> const X{dx.ptr, B, L, 1, dxl.ptr}, Y{dy.ptr, B, L, 1, dyl.ptr};
  auto const m = r::measures::soft_dtw_divergence<T>(1.0);
  r::values_and_grads(r::device, m, X, Y, std::span<T>(out.ptr, B), r::batch_view<T>{gx.ptr, B, L, 1, dxl.ptr},
                      r::batch_view<T>{gy.ptr, B, L, 1, dyl.ptr});
  auto const v = out.host(), g = gy.host(), h = gx.host();
  CHECK(std::isnan(v[1]));
  for (r::index_t k = L; k < 2 * L; ++k) {
    CHECK(g[k] == 0);
    CHECK(h[k] == 0);
  }
  // the valid pair: the host's value and gradients
  std::vector<T> x0(x.begin(), x.begin() + 4), y0(y.begin(), y.begin() + 3), rgx(4), rgy(3);
  T const rv = r::value_and_grad(m, r::view(x0), r::view(y0), r::series_view<T>{rgx.data(), 4, 1},
                                 r::series_view<T>{rgy.data(), 3, 1});
  CHECK(v[0] == Approx(rv).epsilon(1e-12));
  for (int k = 0; k < 4; ++k) CHECK(h[k] == Approx(rgx[k]).epsilon(1e-12).margin(1e-14));
  for (int k = 0; k < 3; ++k) CHECK(g[k] == Approx(rgy[k]).epsilon(1e-12).margin(1e-14));
  // pairwise: X[0] against a valid Y[0] and an out-of-range Y[1] (9 > max_length): GX[0] is the
  // gradient of pair (0, 0) alone
  std::vector<r::index_t> const yl2 = {3, 9};
  device_buffer<r::index_t> dyl2(yl2);
  device_buffer<T> pg(L), pv(2);
  r::pairwise_grads(r::device, m, r::batch_view<T const>{dx.ptr, 1, L, 1, dxl.ptr},
                    r::batch_view<T const>{dy.ptr, 2, L, 1, dyl2.ptr}, r::batch_view<T>{pg.ptr, 1, L, 1, dxl.ptr},
                    r::matrix_view<T>{pv.ptr, 1, 2});
  auto const pgh = pg.host(), pvh = pv.host();
  CHECK(pvh[0] == Approx(rv).epsilon(1e-12));
  CHECK(std::isnan(pvh[1]));
  for (int k = 0; k < 4; ++k) CHECK(pgh[k] == Approx(rgx[k]).epsilon(1e-12).margin(1e-14));
}

TEST_CASE("cuda: outputs over a per-series lengths array are refused", "[cuda][wavefront]") {
  // the lengths were left out of the overlap rule: GX's zeroing cleared Y.lengths before the
  // kernels read them, and every value came out NaN
  using T = double;
  r::index_t const B = 3, L = 8;
  std::vector<T> x(B * L), y(B * L);
  for (r::index_t k = 0; k < B * L; ++k) x[k] = 0.1 * T(k % 7), y[k] = 0.05 * T(k % 5);
  std::vector<r::index_t> const len = {8, 5, 3};
  device_buffer<T> dx(x), dy(y), out(B), gy(B * L);
  device_buffer<r::index_t> xl(len);
  device_buffer<T> pack(B * L);  // GX, whose last three values hold Y.lengths
  auto* const yl = reinterpret_cast<r::index_t*>(pack.ptr + (B * L - 3));
  RESILIN_CUDA_TRY(cudaMemcpy(yl, len.data(), B * sizeof(r::index_t), cudaMemcpyHostToDevice));
  r::batch_view<T const> const X{dx.ptr, B, L, 1, xl.ptr}, Y{dy.ptr, B, L, 1, yl};
  auto const m = r::measures::soft_dtw<T>(1.0);
  CHECK_THROWS_WITH(r::values_and_grads(r::device, m, X, Y, std::span<T>(out.ptr, B),
                                        r::batch_view<T>{pack.ptr, B, L, 1, xl.ptr}, r::batch_view<T>{gy.ptr, B, L, 1, yl}),
                    Catch::Contains("GX overlaps the input Y.lengths"));
  auto* const out_on_lengths = reinterpret_cast<T*>(const_cast<r::index_t*>(xl.ptr));
  CHECK_THROWS_WITH(r::values(r::device, m, X, Y, std::span<T>(out_on_lengths, B)),
                    Catch::Contains("out overlaps the input X.lengths"));
}

TEST_CASE("cuda: bad input is rejected on the host", "[cuda][wavefront]") {
  using T = double;
  batch<T> const X(2, 10, 1, 41, true);
  device_buffer<T> out(2);
  auto const meas = r::measures::soft_dtw<T>(1.0);
  // host memory where device memory is needed (unless kernels may read it: HMM, ATS)
  if (!resilin_test::pageable_memory_access()) {
    CHECK_THROWS_AS(r::values(r::device, meas, X.host_view(), X.device_view(), std::span<T>(out.ptr, 2)),
                    r::invalid_argument);
    std::vector<T> host_out(2);
    CHECK_THROWS_AS(r::values(r::device, meas, X.device_view(), X.device_view(), std::span<T>(host_out)),
                    r::invalid_argument);
    r::batch_view<T const> host_lengths = X.device_view();
    host_lengths.lengths = X.lengths.data();
    CHECK_THROWS_AS(r::values(r::device, meas, host_lengths, X.device_view(), std::span<T>(out.ptr, 2)),
                    r::invalid_argument);
  }
  // gamma through the measure
  r::measure<r::dtw_cost<>, r::soft_min<T>> bad{{}, {-1.0}, {}, false};
  CHECK_THROWS_AS(r::values(r::device, bad, X.device_view(), X.device_view(), std::span<T>(out.ptr, 2)),
                  r::invalid_argument);
  // wrong sizes
  CHECK_THROWS_AS(r::values(r::device, meas, X.device_view(), X.device_view(), std::span<T>(out.ptr, 1)),
                  r::invalid_argument);
  // expert layer: size query, too small a workspace
  std::size_t bytes = 0;
  CHECK(r::expert::values(nullptr, bytes, r::device, meas, X.device_view(), X.device_view(), out.ptr) == cudaSuccess);
  std::size_t tbytes = 0;
  CHECK(r::expert::alignment_matrices(nullptr, tbytes, r::device, meas, X.device_view(), X.device_view(), out.ptr, out.ptr) == cudaSuccess);
  CHECK(tbytes >= std::size_t(2) * 10 * 10 * sizeof(T));
  device_buffer<unsigned char> ws(tbytes);
  std::size_t small = tbytes - 1;
  device_buffer<T> e(2 * 10 * 10);
  CHECK(r::expert::alignment_matrices(ws.ptr, small, r::device, meas, X.device_view(), X.device_view(), out.ptr, e.ptr) == cudaErrorInvalidValue);
  // a misaligned workspace (typed regions would fault on a GPU) is refused, whatever its size
  device_buffer<unsigned char> roomy(tbytes + 16);
  CHECK(r::expert::alignment_matrices(roomy.ptr + 8, tbytes, r::device, meas, X.device_view(), X.device_view(), out.ptr, e.ptr) == cudaErrorInvalidValue);
  CHECK(r::expert::alignment_matrices(roomy.ptr + 16, tbytes, r::device, meas, X.device_view(), X.device_view(), out.ptr, e.ptr) == cudaSuccess);
  CHECK(r::expert::alignment_matrices(ws.ptr, tbytes, r::device, meas, X.device_view(), X.device_view(), out.ptr, e.ptr) == cudaSuccess);
  RESILIN_CUDA_TRY(cudaDeviceSynchronize());
  // outputs over the inputs (the same address rule as the host's: refused, not computed wrong)
  T* const x_as_out = const_cast<T*>(X.device_view().data);
  CHECK_THROWS_AS(r::values(r::device, meas, X.device_view(), X.device_view(), std::span<T>(x_as_out, 2)),
                  r::invalid_argument);
  std::size_t vbytes = 0;
  CHECK(r::expert::values(nullptr, vbytes, r::device, meas, X.device_view(), X.device_view(), x_as_out) == cudaSuccess);
  device_buffer<unsigned char> vws(vbytes + 1);
  CHECK(r::expert::values(vws.ptr, vbytes, r::device, meas, X.device_view(), X.device_view(), x_as_out) ==
        cudaErrorInvalidValue);
  device_buffer<T> g(std::size_t(20));
  r::batch_view<T> const G{g.ptr, 2, 10, 1, X.device_view().lengths};
  r::batch_view<T> const G_on_x{x_as_out, 2, 10, 1, X.device_view().lengths};
  batch<T> const Y(2, 10, 1, 43, true);
  CHECK_THROWS_AS(r::values_and_grads(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(out.ptr, 2),
                                      G_on_x, G),
                  r::invalid_argument);
  CHECK_THROWS_AS(r::values_and_grads(r::device, meas, X.device_view(), Y.device_view(), std::span<T>(out.ptr, 2),
                                      G, G),
                  r::invalid_argument);
  // Y = X with one gradient buffer, which the host accepts: on the device cell (i, j) adds to
  // x_i while cell (j, i) of the same anti-diagonal adds to y_i, one word, unordered (a race that
  // the emulated device, whose threads switch only at barriers, cannot show)
  CHECK_THROWS_WITH(r::values_and_grads(r::device, meas, X.device_view(), X.device_view(),
                                        std::span<T>(out.ptr, 2), G, G),
                    Catch::Contains("GY is GX"));
  std::size_t gbytes = 0;
  CHECK(r::expert::values_and_grads(nullptr, gbytes, r::device, meas, X.device_view(), X.device_view(), out.ptr,
                                    G, G) == cudaSuccess);
  device_buffer<unsigned char> gws(gbytes);
  CHECK(r::expert::values_and_grads(gws.ptr, gbytes, r::device, meas, X.device_view(), X.device_view(), out.ptr,
                                    G, G) == cudaErrorInvalidValue);
}

// Soft-MSM on the host beside soft-DTW on the same shapes and data, in cells/s = B*n*m / s
// (issue 4, item 7: soft-MSM value+gradient should cost at most 3x soft-DTW's per cell).
// soft_msm_cost runs through its vectorised lane engine (backend/host/lane_cost_soft_msm.hpp).
// Shapes (B, n, m, d) of bm_soft_dtw.cpp. Several channels are one recursion on summed costs
// for both measures here (the same cell count); the published "independent" multivariate
// Soft-MSM runs d univariate recursions instead, d times the cells. gamma = 1, c = 1.
#include <random>
#include <span>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/resilin.hpp>
#include <resilin/cost/soft_msm.hpp>

namespace {

struct shape { long batch, n, m, d; };
constexpr shape shapes[] = {{512, 64, 64, 2}, {128, 256, 256, 1}, {16, 1024, 1024, 8}, {2, 4096, 4096, 1}};

template <class T>
struct data_set {
  std::vector<T> x, y, gx, gy, out;
  explicit data_set(shape s) {
    std::mt19937_64 gen(42);
    std::normal_distribution<double> normal;
    x.resize(static_cast<std::size_t>(s.batch * s.n * s.d));
    y.resize(static_cast<std::size_t>(s.batch * s.m * s.d));
    for (auto& v : x) v = static_cast<T>(normal(gen));
    for (auto& v : y) v = static_cast<T>(normal(gen));
    gx.resize(x.size());
    gy.resize(y.size());
    out.resize(static_cast<std::size_t>(s.batch));
  }
};

void set_counters(benchmark::State& state, shape s) {
  state.SetItemsProcessed(state.iterations() * s.batch * s.n * s.m);  // items/s = cells/s
  state.counters["B"] = static_cast<double>(s.batch);
  state.counters["n"] = static_cast<double>(s.n);
  state.counters["d"] = static_cast<double>(s.d);
}

/// Soft-MSM as measures::soft_msm(gamma, c) builds it, without the independent-channels flag.
template <class T>
resilin::measure<resilin::soft_msm_cost<T>, resilin::soft_min<T>> soft_msm(T gamma, T c) {
  return {{c, gamma, T(1e-9)}, {gamma}, {}, false};
}

template <class T, class Measure>
void run_value(benchmark::State& state, Measure const& measure) {
  shape const s = shapes[state.range(0)];
  int const threads = static_cast<int>(state.range(1));
  data_set<T> data(s);
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d);
  for (auto _ : state) {
    resilin::values(resilin::host.with_threads(threads), measure, X, Y, std::span<T>(data.out));
    benchmark::DoNotOptimize(data.out.data());
  }
  set_counters(state, s);
}

template <class T, class Measure>
void run_value_and_grad(benchmark::State& state, Measure const& measure) {
  shape const s = shapes[state.range(0)];
  int const threads = static_cast<int>(state.range(1));
  data_set<T> data(s);
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d);
  auto const GX = resilin::make_batch(data.gx, s.batch, s.n, s.d);
  auto const GY = resilin::make_batch(data.gy, s.batch, s.m, s.d);
  for (auto _ : state) {
    resilin::values_and_grads(resilin::host.with_threads(threads), measure, X, Y,
                              std::span<T>(data.out), GX, GY);
    benchmark::DoNotOptimize(data.gx.data());
  }
  set_counters(state, s);
}

template <class T>
void BM_soft_msm_value_host(benchmark::State& state) { run_value<T>(state, soft_msm(T(1), T(1))); }
template <class T>
void BM_soft_msm_value_and_grad_host(benchmark::State& state) {
  run_value_and_grad<T>(state, soft_msm(T(1), T(1)));
}
template <class T>
void BM_soft_dtw_value_host(benchmark::State& state) {
  run_value<T>(state, resilin::measures::soft_dtw(T(1)));
}
template <class T>
void BM_soft_dtw_value_and_grad_host(benchmark::State& state) {
  run_value_and_grad<T>(state, resilin::measures::soft_dtw(T(1)));
}

void host_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "threads"})->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (int s = 0; s < 4; ++s) b->Args({s, 1});
}

}  // namespace

BENCHMARK_TEMPLATE(BM_soft_msm_value_host, double)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_host, double)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_msm_value_and_grad_host, double)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grad_host, double)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_msm_value_host, float)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_host, float)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_msm_value_and_grad_host, float)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grad_host, float)->Apply(host_args);

BENCHMARK_MAIN();

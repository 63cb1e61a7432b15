// Soft-DTW on the host: resilin against the straightforward loop (one pair at a time, full
// table, std::exp / std::log per cell; tests/support/reference.hpp), in cells/s = B*n*m / s.
// Shapes (B, n, m, d) of issue 2. "threads:1" is the one-thread comparison the goals are
// stated for; "threads:0" uses every core.
#include <algorithm>
#include <random>
#include <span>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/resilin.hpp>
#include <support/reference.hpp>
#include "bench_common.hpp"

namespace {
using bench::data_set;
using bench::set_counters;
using bench::shape;
using bench::shapes;

template <class T>
void BM_soft_dtw_value_host(benchmark::State& state) {
  bench::run_value<T>(state, resilin::measures::soft_dtw(T(1)));
}

template <class T>
void BM_soft_dtw_value_and_grad_host(benchmark::State& state) {
  bench::run_value_and_grad<T>(state, resilin::measures::soft_dtw(T(1)));
}

// DILATE's temporal term (expected_penalties, the scalar second-order pass) beside the
// value and gradient above: Omega(i, j) = (i - j)^2 / n^2.
template <class T>
void BM_soft_dtw_expected_penalty_host(benchmark::State& state) {
  T const scale = T(1) / static_cast<T>(shapes[state.range(0)].n * shapes[state.range(0)].n);
  auto const omega = [&](resilin::index_t, resilin::index_t i, resilin::index_t j) {
    return static_cast<T>((i - j) * (i - j)) * scale;
  };
  bench::run_training<T>(state, [&](auto exec, auto X, auto Y, std::span<T> out, auto GX, auto GY) {
    resilin::expected_penalties(exec, resilin::measures::soft_dtw(T(1)), X, Y, omega, out, GX, GY);
  });
}

// The sharp soft-DTW (the expected cost of the soft alignment): its value alone (one scalar
// forward of R and its tangent) and with its gradient (sharp_values_and_grads, the same pass
// as expected_penalties along the step costs).
template <class T>
void BM_sharp_soft_dtw_value_host(benchmark::State& state) {
  shape const s = shapes[state.range(0)];
  data_set<T> data(s);
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d);
  for (auto _ : state) {
    resilin::sharp_values(resilin::host.with_threads(static_cast<int>(state.range(1))),
                          resilin::measures::soft_dtw(T(1)), X, Y, std::span<T>(data.out));
    benchmark::DoNotOptimize(data.out.data());
  }
  set_counters(state, s);
}

template <class T>
void BM_sharp_soft_dtw_value_and_grad_host(benchmark::State& state) {
  bench::run_training<T>(state, [&](auto exec, auto X, auto Y, std::span<T> out, auto GX, auto GY) {
    resilin::sharp_values_and_grads(exec, resilin::measures::soft_dtw(T(1)), X, Y, out, GX, GY);
  });
}

// pairwise_grads and sharp_pairwise_grads (the tool's grad, with and without --sharp) of the
// soft-DTW divergence: cells/s over the |A| |B| pairs, A and B the first 16 series of the
// shape's X and Y (the self terms S(x, x) and S(y, y) count as no cells of their own).
template <class T, bool Sharp>
void BM_soft_dtw_div_pairwise_grads_host(benchmark::State& state) {
  shape const s = shapes[state.range(0)];
  long const k = std::min<long>(16, s.batch);
  data_set<T> data(s);
  auto const A = resilin::make_batch(std::span<T const>(data.x).first(static_cast<std::size_t>(k * s.n * s.d)), k, s.n, s.d);
  auto const B = resilin::make_batch(std::span<T const>(data.y).first(static_cast<std::size_t>(k * s.m * s.d)), k, s.m, s.d);
  auto const G = resilin::make_batch(std::span<T>(data.gx).first(static_cast<std::size_t>(k * s.n * s.d)), k, s.n, s.d);
  auto const exec = resilin::host.with_threads(static_cast<int>(state.range(1)));
  auto const m = resilin::measures::soft_dtw_divergence(T(1));
  for (auto _ : state) {
    if constexpr (Sharp) resilin::sharp_pairwise_grads(exec, m, A, B, G);
    else resilin::pairwise_grads(exec, m, A, B, G);
    benchmark::DoNotOptimize(data.gx.data());
  }
  set_counters(state, s, k * k);
  state.counters["B"] = static_cast<double>(k);  // |A| = |B|
}

// The baseline runs pairs one at a time, so its cells/s does not depend on B: it runs on enough
// pairs for at least ~4M cells per iteration rather than on the whole batch.
long baseline_pairs(shape s) { return std::min<long>(s.batch, std::max<long>(1, (4L << 20) / (s.n * s.m))); }

template <class T>
void BM_soft_dtw_value_baseline(benchmark::State& state) {
  shape const s = shapes[state.range(0)];
  data_set<T> data(s);
  long const pairs = baseline_pairs(s);
  for (auto _ : state) {
    for (long b = 0; b < pairs; ++b)
      data.out[static_cast<std::size_t>(b)] = resilin_test::reference::soft_dtw_value(
          data.x.data() + b * s.n * s.d, data.y.data() + b * s.m * s.d, s.n, s.m, s.d, T(1));
    benchmark::DoNotOptimize(data.out.data());
  }
  set_counters(state, s, pairs);
}

template <class T>
void BM_soft_dtw_value_and_grad_baseline(benchmark::State& state) {
  shape const s = shapes[state.range(0)];
  data_set<T> data(s);
  long const pairs = baseline_pairs(s);
  for (auto _ : state) {
    for (long b = 0; b < pairs; ++b)
      data.out[static_cast<std::size_t>(b)] = resilin_test::reference::soft_dtw_value_and_grad(
          data.x.data() + b * s.n * s.d, data.y.data() + b * s.m * s.d, s.n, s.m, s.d, T(1),
          data.gx.data() + b * s.n * s.d, data.gy.data() + b * s.m * s.d);
    benchmark::DoNotOptimize(data.gx.data());
  }
  set_counters(state, s, pairs);
}

/// Short pairs, one thread (bench_common.hpp: run_short_pairs).
template <class T>
void BM_soft_dtw_short_pairs_host(benchmark::State& state) {
  bench::run_short_pairs<T>(state, resilin::measures::soft_dtw(T(1)));
}

/// Ragged pairs, one thread (bench_common.hpp: run_ragged_pairs): soft-DTW and DTW values.
template <class T>
void BM_soft_dtw_ragged_pairs_host(benchmark::State& state) {
  bench::run_ragged_pairs<T>(state, resilin::measures::soft_dtw(T(1)));
}
template <class T>
void BM_dtw_ragged_pairs_host(benchmark::State& state) {
  bench::run_ragged_pairs<T>(state, resilin::measures::dtw());
}
/// Ragged pairs' values and gradients, one thread (soft-DTW's ragged training groups).
template <class T>
void BM_soft_dtw_ragged_training_host(benchmark::State& state) {
  bench::run_ragged_pairs<T>(state, resilin::measures::soft_dtw(T(1)), true);
}

/// pairwise_grads of 64 x 64 short series, one thread (bench_common.hpp: run_pairwise_grads).
template <class T>
void BM_soft_dtw_pairwise_grads_host(benchmark::State& state) {
  bench::run_pairwise_grads<T>(state, resilin::measures::soft_dtw(T(1)));
}

void host_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "threads"})->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (int s = 0; s < 4; ++s) {
    b->Args({s, 1});
    b->Args({s, 0});
  }
}
void penalty_args(benchmark::internal::Benchmark* b) {  // the first two shapes, one thread (second order)
  b->ArgNames({"shape", "threads"})->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (int s = 0; s < 2; ++s) b->Args({s, 1});
}
void baseline_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape"})->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (int s = 0; s < 4; ++s) b->Args({s});
}

}  // namespace

BENCHMARK_TEMPLATE(BM_soft_dtw_value_host, double)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_host, float)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grad_host, double)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grad_host, float)->Apply(host_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_short_pairs_host, double)->Apply(bench::short_pair_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_short_pairs_host, float)->Apply(bench::short_pair_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_ragged_pairs_host, double)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_ragged_pairs_host, float)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_dtw_ragged_pairs_host, double)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_ragged_training_host, double)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_ragged_training_host, float)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_pairwise_grads_host, double)->Apply(bench::pairwise_grads_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_pairwise_grads_host, float)->Apply(bench::pairwise_grads_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_expected_penalty_host, double)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_expected_penalty_host, float)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_sharp_soft_dtw_value_host, double)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_sharp_soft_dtw_value_host, float)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_sharp_soft_dtw_value_and_grad_host, double)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_sharp_soft_dtw_value_and_grad_host, float)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_div_pairwise_grads_host, double, false)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_div_pairwise_grads_host, double, true)->Apply(penalty_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_baseline, double)->Apply(baseline_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_baseline, float)->Apply(baseline_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grad_baseline, double)->Apply(baseline_args);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grad_baseline, float)->Apply(baseline_args);

BENCHMARK_MAIN();

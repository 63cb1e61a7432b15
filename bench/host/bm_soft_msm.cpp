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
#include "bench_common.hpp"

namespace {
using bench::run_value;
using bench::run_value_and_grad;

/// Soft-MSM as measures::soft_msm(gamma, c) builds it, without the independent-channels flag.
template <class T>
resilin::measure<resilin::soft_msm_cost<T>, resilin::soft_min<T>> soft_msm(T gamma, T c) {
  return {{c, gamma, T(1e-9)}, {gamma}, {}, false};
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

/// Short pairs, one thread (bench_common.hpp: run_short_pairs), beside soft-DTW's in bm_soft_dtw.
template <class T>
void BM_soft_msm_short_pairs_host(benchmark::State& state) {
  bench::run_short_pairs<T>(state, soft_msm(T(1), T(1)));
}

/// The published multivariate Soft-MSM (measures::soft_msm: independent channels), d = 3: three
/// one-channel recursions per pair (cells/s counts the pairs' n x n cells once).
template <class T>
void BM_soft_msm_independent_short_pairs_host(benchmark::State& state) {
  bench::run_short_pairs<T>(state, resilin::measures::soft_msm(T(1), T(1)), 3);
}

/// Ragged pairs, one thread (bench_common.hpp: run_ragged_pairs): values.
template <class T>
void BM_soft_msm_ragged_pairs_host(benchmark::State& state) {
  bench::run_ragged_pairs<T>(state, soft_msm(T(1), T(1)));
}
/// Their values and gradients (ragged training groups).
template <class T>
void BM_soft_msm_ragged_training_host(benchmark::State& state) {
  bench::run_ragged_pairs<T>(state, soft_msm(T(1), T(1)), true);
}

/// pairwise_grads of 64 x 64 short series, one thread (bench_common.hpp: run_pairwise_grads).
template <class T>
void BM_soft_msm_pairwise_grads_host(benchmark::State& state) {
  bench::run_pairwise_grads<T>(state, soft_msm(T(1), T(1)));
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

BENCHMARK_TEMPLATE(BM_soft_msm_short_pairs_host, double)->Apply(bench::short_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_short_pairs_host, float)->Apply(bench::short_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_independent_short_pairs_host, double)->Apply(bench::short_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_independent_short_pairs_host, float)->Apply(bench::short_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_ragged_pairs_host, double)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_ragged_pairs_host, float)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_ragged_training_host, double)->Apply(bench::ragged_pair_args);
BENCHMARK_TEMPLATE(BM_soft_msm_ragged_training_host, float)->Apply(bench::ragged_pair_args);

BENCHMARK_TEMPLATE(BM_soft_msm_pairwise_grads_host, double)->Apply(bench::pairwise_grads_args);
BENCHMARK_TEMPLATE(BM_soft_msm_pairwise_grads_host, float)->Apply(bench::pairwise_grads_args);

BENCHMARK_MAIN();

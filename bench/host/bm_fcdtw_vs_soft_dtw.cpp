// FastCDTW against soft-DTW on the same pairs, one thread (issue 5 item 5): which one gives a
// pair's distance (and its gradients with respect to both series) sooner, by length.
// FastCDTW fits one warp per pair by 300 Adam steps (fit_options defaults), each O(K + n + m);
// soft-DTW runs the n x m recursion once (gamma = 1). Equal lengths n = m from 64 to 8192,
// univariate standard-normal samples, B pairs with B * n about 2^14 (at least 2). Counters:
// pairs/s (items/s) and, for both, n * m / time as "cells/s" so that the two read on one
// scale.
#include <algorithm>
#include <random>
#include <span>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/fcdtw/fcdtw.hpp>
#include <resilin/resilin.hpp>

namespace {
namespace fc = resilin::fcdtw;
using resilin::index_t;

template <class T>
struct equal_length_pairs {
  index_t batch, n;
  std::vector<T> x, y, gx, gy, out;
  explicit equal_length_pairs(index_t length)
      : batch(std::max<index_t>(2, (index_t{1} << 14) / length)), n(length) {
    std::mt19937_64 gen(7);
    std::normal_distribution<double> normal;
    x.resize(static_cast<std::size_t>(batch * n));
    y.resize(x.size());
    for (auto& e : x) e = static_cast<T>(normal(gen));
    for (auto& e : y) e = static_cast<T>(normal(gen));
    gx.resize(x.size());
    gy.resize(y.size());
    out.resize(static_cast<std::size_t>(batch));
  }
  resilin::batch_view<T const> X() const { return {x.data(), batch, n, 1}; }
  resilin::batch_view<T const> Y() const { return {y.data(), batch, n, 1}; }
  resilin::batch_view<T> GX() { return {gx.data(), batch, n, 1}; }
  resilin::batch_view<T> GY() { return {gy.data(), batch, n, 1}; }
};

template <class T>
void set_counters(benchmark::State& state, equal_length_pairs<T> const& p) {
  auto const pairs = static_cast<double>(state.iterations() * p.batch);
  state.SetItemsProcessed(static_cast<std::int64_t>(pairs));
  state.counters["n"] = static_cast<double>(p.n);
  state.counters["B"] = static_cast<double>(p.batch);
  state.counters["cells/s"] = benchmark::Counter(pairs * static_cast<double>(p.n) * static_cast<double>(p.n),
                                                 benchmark::Counter::kIsRate);
}

fc::fit_options one_thread() {
  fc::fit_options o;
  o.threads = 1;
  return o;
}

template <class T>
void BM_fast_cdtw_distance(benchmark::State& state) {
  equal_length_pairs<T> p(state.range(0));
  for (auto _ : state) {
    fc::distances(one_thread(), p.X(), p.Y(), std::span<T>(p.out));
    benchmark::DoNotOptimize(p.out.data());
  }
  set_counters(state, p);
}

template <class T>
void BM_fast_cdtw_distance_and_grads(benchmark::State& state) {
  equal_length_pairs<T> p(state.range(0));
  for (auto _ : state) {
    fc::distances_and_grads(one_thread(), p.X(), p.Y(), std::span<T>(p.out), p.GX(), p.GY());
    benchmark::DoNotOptimize(p.gx.data());
  }
  set_counters(state, p);
}

template <class T>
void BM_soft_dtw_value(benchmark::State& state) {
  equal_length_pairs<T> p(state.range(0));
  auto const m = resilin::measures::soft_dtw(T(1));
  for (auto _ : state) {
    resilin::values(resilin::host.with_threads(1), m, p.X(), p.Y(), std::span<T>(p.out));
    benchmark::DoNotOptimize(p.out.data());
  }
  set_counters(state, p);
}

template <class T>
void BM_soft_dtw_value_and_grads(benchmark::State& state) {
  equal_length_pairs<T> p(state.range(0));
  auto const m = resilin::measures::soft_dtw(T(1));
  for (auto _ : state) {
    resilin::values_and_grads(resilin::host.with_threads(1), m, p.X(), p.Y(), std::span<T>(p.out),
                              p.GX(), p.GY());
    benchmark::DoNotOptimize(p.gx.data());
  }
  set_counters(state, p);
}

void lengths(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n"});
  for (index_t n = 64; n <= 8192; n *= 2) b->Arg(n);
  b->Unit(benchmark::kMillisecond);
}
}  // namespace

BENCHMARK_TEMPLATE(BM_fast_cdtw_distance, double)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_soft_dtw_value, double)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_fast_cdtw_distance_and_grads, double)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grads, double)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_fast_cdtw_distance, float)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_soft_dtw_value, float)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_fast_cdtw_distance_and_grads, float)->Apply(lengths);
BENCHMARK_TEMPLATE(BM_soft_dtw_value_and_grads, float)->Apply(lengths);
BENCHMARK_MAIN();

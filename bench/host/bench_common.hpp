#pragma once
// What the host benchmarks share: the shapes (B, n, m, d) of issue 2, seeded data, the cells/s
// counters, and the two timed loops (values; values_and_grads) for any measure, each after one
// untimed call (the steady state of a loop that calls them again and again).
#include <algorithm>
#include <random>
#include <span>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/resilin.hpp>

namespace bench {

struct shape { long batch, n, m, d; };
inline constexpr shape shapes[] = {{512, 64, 64, 2}, {128, 256, 256, 1}, {16, 1024, 1024, 8}, {2, 4096, 4096, 1}};

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

/// items/s = cells/s over `pairs` pairs of the shape (default: the whole batch).
inline void set_counters(benchmark::State& state, shape s, long pairs = -1) {
  state.SetItemsProcessed(state.iterations() * (pairs < 0 ? s.batch : pairs) * s.n * s.m);
  state.counters["B"] = static_cast<double>(s.batch);
  state.counters["n"] = static_cast<double>(s.n);
  state.counters["d"] = static_cast<double>(s.d);
}

template <class T, class Measure>
void run_value(benchmark::State& state, Measure const& measure) {
  shape const s = shapes[state.range(0)];
  int const threads = static_cast<int>(state.range(1));
  data_set<T> data(s);
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d);
  resilin::values(resilin::host.with_threads(threads), measure, X, Y, std::span<T>(data.out));  // warm-up
  for (auto _ : state) {
    resilin::values(resilin::host.with_threads(threads), measure, X, Y, std::span<T>(data.out));
    benchmark::DoNotOptimize(data.out.data());
  }
  set_counters(state, s);
}

/// The timed loop of a training call train(exec, X, Y, out, GX, GY) on the shape's batch.
template <class T, class Train>
void run_training(benchmark::State& state, Train&& train) {
  shape const s = shapes[state.range(0)];
  int const threads = static_cast<int>(state.range(1));
  data_set<T> data(s);
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d);
  auto const GX = resilin::make_batch(data.gx, s.batch, s.n, s.d);
  auto const GY = resilin::make_batch(data.gy, s.batch, s.m, s.d);
  // One call before the timed loop: the first touch of a large table's fresh memory costs a
  // one-time 0.3 s per 135 MB on the virtual machines here (the hypervisor backs the pages), and
  // the long shapes run a single timed iteration, which it would dominate.
  train(resilin::host.with_threads(threads), X, Y, std::span<T>(data.out), GX, GY);
  for (auto _ : state) {
    train(resilin::host.with_threads(threads), X, Y, std::span<T>(data.out), GX, GY);
    benchmark::DoNotOptimize(data.gx.data());
  }
  set_counters(state, s);
}

template <class T, class Measure>
void run_value_and_grad(benchmark::State& state, Measure const& measure) {
  run_training<T>(state, [&](auto exec, auto X, auto Y, std::span<T> out, auto GX, auto GY) {
    resilin::values_and_grads(exec, measure, X, Y, out, GX, GY);
  });
}

/// Short pairs, one thread: values (range(1) = 0) or values+gradients (1) of B pairs of n x n
/// (n = range(0), d channels), about 2^18 cells in all (at least 64 pairs), where the batches'
/// lock-step groups run and, past their sizes, the strips.
template <class T, class Measure>
void run_short_pairs(benchmark::State& state, Measure const& measure, long d = 1) {
  long const n = state.range(0);
  bool const grad = state.range(1) != 0;
  shape const s{std::max(64L, (1L << 18) / (n * n)), n, n, d};
  data_set<T> data(s);
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d);
  auto const GX = resilin::make_batch(data.gx, s.batch, s.n, s.d);
  auto const GY = resilin::make_batch(data.gy, s.batch, s.m, s.d);
  auto const exec = resilin::host.with_threads(1);
  auto const run = [&] {
    if (grad) resilin::values_and_grads(exec, measure, X, Y, std::span<T>(data.out), GX, GY);
    else resilin::values(exec, measure, X, Y, std::span<T>(data.out));
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(data.out.data());
  }
  set_counters(state, s);
}

/// Ragged pairs, one thread: values (grad: values and gradients) of B pairs whose x and y
/// lengths are drawn uniformly from [n/2, n] (n = range(0), d = 1; few pairs share a shape),
/// about 2^18 cells in all (at least 64 pairs). items/s counts each pair's own cells.
template <class T, class Measure>
void run_ragged_pairs(benchmark::State& state, Measure const& measure, bool grad = false) {
  long const n = state.range(0);
  shape const s{std::max(64L, (1L << 18) / (n * n * 9 / 16)), n, n, 1};
  data_set<T> data(s);
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<resilin::index_t> length(n / 2, n);
  std::vector<resilin::index_t> lx(static_cast<std::size_t>(s.batch)), ly(lx.size());
  double cells = 0;
  for (std::size_t b = 0; b < lx.size(); ++b) {
    lx[b] = length(gen);
    ly[b] = length(gen);
    cells += static_cast<double>(lx[b] * ly[b]);
  }
  auto const X = resilin::make_batch(data.x, s.batch, s.n, s.d, std::span<resilin::index_t const>(lx));
  auto const Y = resilin::make_batch(data.y, s.batch, s.m, s.d, std::span<resilin::index_t const>(ly));
  auto const GX = resilin::make_batch(data.gx, s.batch, s.n, s.d, std::span<resilin::index_t const>(lx));
  auto const GY = resilin::make_batch(data.gy, s.batch, s.m, s.d, std::span<resilin::index_t const>(ly));
  auto const exec = resilin::host.with_threads(1);
  auto const run = [&] {
    if (grad) resilin::values_and_grads(exec, measure, X, Y, std::span<T>(data.out), GX, GY);
    else resilin::values(exec, measure, X, Y, std::span<T>(data.out));
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(data.out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(static_cast<double>(state.iterations()) * cells));
  state.counters["B"] = static_cast<double>(s.batch);
}

/// pairwise_grads, one thread: the gradient of sum_ab M(X[a], Y[b]) with respect to X, for
/// |X| = |Y| = 64 series of length n = range(0) (d = 1), 64^2 pairs: a loss over every pair
/// of two sets of short series, whose pairs train in lock-step groups. items/s counts cells.
template <class T, class Measure>
void run_pairwise_grads(benchmark::State& state, Measure const& measure) {
  long const n = state.range(0);
  shape const s{64, n, n, 1};
  data_set<T> data(s);
  auto const X = resilin::make_batch(std::span<T const>(data.x), s.batch, s.n, s.d);
  auto const Y = resilin::make_batch(std::span<T const>(data.y), s.batch, s.m, s.d);
  auto const GX = resilin::make_batch(data.gx, s.batch, s.n, s.d);
  auto const exec = resilin::host.with_threads(1);
  resilin::pairwise_grads(exec, measure, X, Y, GX);
  for (auto _ : state) {
    resilin::pairwise_grads(exec, measure, X, Y, GX);
    benchmark::DoNotOptimize(data.gx.data());
  }
  set_counters(state, s, s.batch * s.batch);
}

inline void pairwise_grads_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n"})->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (long n : {16, 32, 64, 128}) b->Args({n});
}

inline void ragged_pair_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n"})->Unit(benchmark::kMicrosecond)->MinTime(0.3);
  for (long n : {16, 64, 128, 256, 512}) b->Args({n});
}

inline void short_pair_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "grad"})->Unit(benchmark::kMicrosecond)->MinTime(0.3);
  for (long n : {8, 32, 64, 128, 256})
    for (long g : {0, 1}) b->Args({n, g});
}

}  // namespace bench

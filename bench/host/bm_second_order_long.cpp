// The second-order pass on one long pair (soft-DTW, gamma = 1, no band, N(0, 1) inputs): DILATE's
// temporal term (expected_penalty, Omega(i, j) = (i - j)^2 / max(n, m)^2) and the sharp soft-DTW
// with its gradient (sharp_value_and_grad), in cells/s = n*m / s, with the process's peak
// resident set (getrusage) as a counter. Beyond 256 MiB of R and its tangent the pass works in
// segments of about sqrt(n) rows of the longer series (backend/host/tangent.hpp); the unequal
// shapes (256 x 262144 and its transpose) show that the rows run along the longer one either
// way. The peak is the process's since it started: run one benchmark per process
// (--benchmark_filter=<one name>/<shape>/), as bench/host/run_second_order_long.sh does.
#include <sys/resource.h>
#include <algorithm>
#include <random>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/resilin.hpp>

namespace {

struct long_pair {
  std::vector<double> x, y, gx, gy;
  long_pair(long n, long m)
      : x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(m)), gx(x.size()), gy(y.size()) {
    std::mt19937_64 gen(42);
    std::normal_distribution<double> normal;
    for (auto& v : x) v = normal(gen);
    for (auto& v : y) v = normal(gen);
  }
};

void set_counters(benchmark::State& state, long n, long m) {
  state.SetItemsProcessed(state.iterations() * n * m);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_RSS_MB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

void BM_expected_penalty_long(benchmark::State& state) {
  long const n = state.range(0), m = state.range(1);
  long_pair p(n, m);
  double const longer = static_cast<double>(std::max(n, m));
  double const scale = 1.0 / (longer * longer);
  auto const omega = [scale](resilin::index_t i, resilin::index_t j) {
    return static_cast<double>((i - j) * (i - j)) * scale;
  };
  for (auto _ : state) {
    double const l = resilin::expected_penalty(resilin::measures::soft_dtw(1.0), resilin::view(p.x),
                                               resilin::view(p.y), omega, resilin::view(p.gx),
                                               resilin::view(p.gy));
    benchmark::DoNotOptimize(l);
  }
  set_counters(state, n, m);
}

void BM_sharp_value_and_grad_long(benchmark::State& state) {
  long const n = state.range(0), m = state.range(1);
  long_pair p(n, m);
  for (auto _ : state) {
    double const v = resilin::sharp_value_and_grad(resilin::measures::soft_dtw(1.0), resilin::view(p.x),
                                                   resilin::view(p.y), resilin::view(p.gx),
                                                   resilin::view(p.gy));
    benchmark::DoNotOptimize(v);
  }
  set_counters(state, n, m);
}

void long_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "m"})->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(2);
  for (long n : {2048, 4096, 8192, 16384}) b->Args({n, n});
  b->Args({256, 262144});
  b->Args({262144, 256});
}

}  // namespace

BENCHMARK(BM_expected_penalty_long)->Apply(long_args);
BENCHMARK(BM_sharp_value_and_grad_long)->Apply(long_args);

BENCHMARK_MAIN();

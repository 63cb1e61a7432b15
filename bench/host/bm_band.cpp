// One long pair in a Sakoe-Chiba band on the host, one thread: value() and value_and_grad() in
// ns per in-band cell (the counter "ns_per_cell"), for the radii where the strips of 16-64 rows
// cross the band's diagonal with few busy lanes, and the memory the training keeps. Also float
// soft-DTW on a long z-normalised pair at gamma = 0.1, where the exponential domain's exactness
// test decides between it and the log domain. Each timed call follows one untimed call.
#include <cmath>
#include <random>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/resilin.hpp>

namespace {

/// A z-normalised random walk (the shape of real series).
template <class T>
std::vector<T> random_walk(long n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<double> w(static_cast<std::size_t>(n));
  double s = 0, sum = 0, sq = 0;
  for (auto& v : w) sum += (v = s += normal(gen));
  double const mean = sum / static_cast<double>(n);
  for (double v : w) sq += (v - mean) * (v - mean);
  double const sd = std::sqrt(sq / static_cast<double>(n));
  std::vector<T> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out[i] = static_cast<T>((w[i] - mean) / sd);
  return out;
}

template <class T, class Measure>
void run(benchmark::State& state, Measure const& m, long n, long radius, bool grad) {
  auto const x = random_walk<T>(n, 1), y = random_walk<T>(n, 2);
  std::vector<T> gx(x.size()), gy(y.size());
  auto const once = [&] {
    if (grad) return resilin::value_and_grad(m, resilin::view(x), resilin::view(y), resilin::view(gx), resilin::view(gy));
    return resilin::value(m, resilin::view(x), resilin::view(y));
  };
  benchmark::DoNotOptimize(once());
  for (auto _ : state) benchmark::DoNotOptimize(once());
  double cells = 0;
  auto const band = m.band.geometry(n, n);
  for (long i = 0; i < n; ++i) cells += static_cast<double>(band.row(i).hi - band.row(i).lo + 1);
  state.counters["radius"] = static_cast<double>(radius);
  state.counters["ns_per_cell"] = benchmark::Counter(cells * 1e-9 * static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

resilin::band_spec band_of(long radius) { return radius < 0 ? resilin::band_spec{} : resilin::band_spec::radius(radius); }

template <class T>
void BM_band_soft_dtw(benchmark::State& state) {
  long const r = state.range(0);
  run<T>(state, resilin::measures::soft_dtw<T>(T(1), band_of(r)), 100000, r, state.range(1) != 0);
}
void BM_band_dtw(benchmark::State& state) {
  long const r = state.range(0);
  run<double>(state, resilin::measures::dtw(band_of(r)), 100000, r, state.range(1) != 0);
}
void BM_band_soft_msm(benchmark::State& state) {
  long const r = state.range(0);
  run<double>(state, resilin::measures::soft_msm(1.0, 1.0, band_of(r)), 20000, r, state.range(1) != 0);
}
// n = m = 10^4, no band or radius 10, gamma = 0.1: float's exponential domain or its log domain
void BM_long_float_soft_dtw(benchmark::State& state) {
  long const r = state.range(0);
  run<float>(state, resilin::measures::soft_dtw<float>(0.1f, band_of(r)), 10000, r, state.range(1) != 0);
}

void radii(benchmark::internal::Benchmark* b) {
  b->ArgNames({"radius", "grad"})->Unit(benchmark::kMillisecond)->MinTime(0.2);
  for (long r : {1, 4, 16, 64})
    for (long g : {0, 1}) b->Args({r, g});
}
void long_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"radius", "grad"})->Unit(benchmark::kMillisecond)->MinTime(0.2);
  for (long r : {-1, 10})
    for (long g : {0, 1}) b->Args({r, g});
}

}  // namespace

BENCHMARK_TEMPLATE(BM_band_soft_dtw, double)->Apply(radii);
BENCHMARK_TEMPLATE(BM_band_soft_dtw, float)->Apply(radii);
BENCHMARK(BM_band_dtw)->Apply(radii);
BENCHMARK(BM_band_soft_msm)->Apply(radii);
BENCHMARK(BM_long_float_soft_dtw)->Apply(long_args);

BENCHMARK_MAIN();

// MSM and grid CDTW on the host beside soft-MSM and soft-DTW, one thread, in cells/s on the
// shapes (B, n, m, d) of issue 2 (the first two: 512 x 64 x 64 x 2 and 128 x 256 x 256 x 1):
// values and values_and_grads of each cost model's lane engine (backend/host/lane_cost_*.hpp).
// Several channels are aligned jointly here (the measures' independent-channels flag off), so
// that the engines' channel sums are what is timed.
#include <benchmark/benchmark.h>
#include <resilin/resilin.hpp>
#include "bench_common.hpp"

namespace {
using bench::run_value;
using bench::run_value_and_grad;

template <class M>
M joint(M m) {
  m.independent_channels = false;
  return m;
}

#define RESILIN_COST_MODEL_BENCH(name, expr)                                                    \
  void BM_##name##_value(benchmark::State& state) { run_value<double>(state, joint(expr)); } \
  void BM_##name##_value_and_grad(benchmark::State& state) { run_value_and_grad<double>(state, joint(expr)); }

RESILIN_COST_MODEL_BENCH(msm, resilin::measures::msm(1.0))
RESILIN_COST_MODEL_BENCH(cdtw, resilin::measures::cdtw())
RESILIN_COST_MODEL_BENCH(soft_cdtw, resilin::measures::soft_cdtw(1.0))
RESILIN_COST_MODEL_BENCH(soft_msm, resilin::measures::soft_msm(1.0, 1.0))
RESILIN_COST_MODEL_BENCH(soft_dtw, resilin::measures::soft_dtw(1.0))

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "threads"})->Unit(benchmark::kMillisecond)->MinTime(0.3);
  for (int s = 0; s < 2; ++s) b->Args({s, 1});
}

}  // namespace

BENCHMARK(BM_msm_value)->Apply(shapes);
BENCHMARK(BM_msm_value_and_grad)->Apply(shapes);
BENCHMARK(BM_cdtw_value)->Apply(shapes);
BENCHMARK(BM_cdtw_value_and_grad)->Apply(shapes);
BENCHMARK(BM_soft_cdtw_value)->Apply(shapes);
BENCHMARK(BM_soft_cdtw_value_and_grad)->Apply(shapes);
BENCHMARK(BM_soft_msm_value)->Apply(shapes);
BENCHMARK(BM_soft_msm_value_and_grad)->Apply(shapes);
BENCHMARK(BM_soft_dtw_value)->Apply(shapes);
BENCHMARK(BM_soft_dtw_value_and_grad)->Apply(shapes);

BENCHMARK_MAIN();

// What the pieces of a host cell cost: throughput of the pack exp, log, sqrt, division and
// multiply-add, and of Soft-MSM's gate on two packs at once (packs.hpp), in packs per second,
// over 8 independent packs per iteration (enough to fill the pipelines; the recursions have
// 4 vectors per step). For choosing what to make cheaper in a cell: a change that moves work
// from one unit to another (the divider to the FMA ports) pays only if that unit is the bound.
#include <benchmark/benchmark.h>
#include <resilin/backend/host/packs.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/cost/soft_msm.hpp>

namespace {
namespace simd = resilin::simd;
constexpr int independent = 8;

/// Runs `step` on `independent` packs per iteration, `repeat` times, and reports packs/s.
template <class T, class Init, class Step>
void run(benchmark::State& state, Init init, Step step, int repeat = 1) {
  using V = simd::pack<T>;
  V v[independent];
  for (int k = 0; k < independent; ++k) v[k] = V(init(k));
  for (auto _ : state) {
    for (int r = 0; r < repeat; ++r)
      for (int k = 0; k < independent; ++k) v[k] = step(v[k]);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations() * independent * repeat);
}

// each step maps the packs back into the function's domain, so the chain stays in range
template <class T>
void BM_exp(benchmark::State& s) {
  run<T>(s, [](int k) { return T(-0.5) - T(0.1) * T(k); },
         [](simd::pack<T> x) { return simd::exp(x) - T(1.5); });
}
template <class T>
void BM_log(benchmark::State& s) {
  run<T>(s, [](int k) { return T(1.1) + T(0.1) * T(k); },
         [](simd::pack<T> x) { return simd::log(x) + T(1.5); });
}
template <class T>
void BM_sqrt(benchmark::State& s) {
  run<T>(s, [](int k) { return T(1.1) + T(0.1) * T(k); },
         [](simd::pack<T> x) { return simd::sqrt(x) + T(0.5); });
}
template <class T>
void BM_division(benchmark::State& s) {
  run<T>(s, [](int k) { return T(1.1) + T(0.1) * T(k); },
         [](simd::pack<T> x) { return simd::pack<T>(T(1.7)) / x; });
}
template <class T>
void BM_multiply_add(benchmark::State& s) {
  run<T>(s, [](int k) { return T(1.1) + T(0.1) * T(k); },
         [](simd::pack<T> x) { return x * T(0.999) + T(0.001); }, 8);
}
/// Soft-MSM's gated transition (value only, finite inner soft-min), on two packs at once as
/// the lane engine evaluates the up and left transitions; packs/s counts both.
template <class T>
void BM_soft_msm_gate(benchmark::State& state) {
  using P2 = simd::packs<T, 2>;
  P2 a[independent / 2], b[independent / 2], sm[independent / 2];
  for (int k = 0; k < independent / 2; ++k) {
    a[k] = P2(T(0.05) + T(0.1) * T(k));
    b[k] = P2(T(-0.3) + T(0.02) * T(k));
    sm[k] = P2(T(0.7));
  }
  for (auto _ : state) {
    for (int k = 0; k < independent / 2; ++k)
      sm[k] = resilin::detail::gated_transition<P2, T, true>(a[k], b[k], sm[k], P2(T(0)), T(1), T(1e-9),
                                                             nullptr) * T(0.5);
    benchmark::DoNotOptimize(sm);
  }
  state.SetItemsProcessed(state.iterations() * independent);
}
}  // namespace

BENCHMARK_TEMPLATE(BM_exp, double);
BENCHMARK_TEMPLATE(BM_log, double);
BENCHMARK_TEMPLATE(BM_sqrt, double);
BENCHMARK_TEMPLATE(BM_division, double);
BENCHMARK_TEMPLATE(BM_multiply_add, double);
BENCHMARK_TEMPLATE(BM_soft_msm_gate, double);
BENCHMARK_TEMPLATE(BM_exp, float);
BENCHMARK_TEMPLATE(BM_log, float);
BENCHMARK_TEMPLATE(BM_sqrt, float);
BENCHMARK_TEMPLATE(BM_division, float);
BENCHMARK_TEMPLATE(BM_multiply_add, float);
BENCHMARK_TEMPLATE(BM_soft_msm_gate, float);

BENCHMARK_MAIN();

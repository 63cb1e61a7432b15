// FastCDTW on the host: the closed-form objective F(phi; x, y) (value; value and all
// gradients) and the full 300-step Adam fit, one thread, in pairs/s (items/s). Shapes
// (B, n = m, d): (1024, 128, 1) and (16, 4096, 1); warps with K = m - 1 from random logits.
#include <algorithm>
#include <random>
#include <span>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/fcdtw/fcdtw.hpp>

namespace {
namespace fc = resilin::fcdtw;
using resilin::index_t;

struct fcdtw_shape { index_t batch, n, d; };
constexpr fcdtw_shape fcdtw_shapes[] = {{1024, 128, 1}, {16, 4096, 1}};

template <class T>
struct fcdtw_data {
  fcdtw_shape s;
  std::vector<T> x, y, v, dv, gx, gy;
  explicit fcdtw_data(fcdtw_shape sh) : s(sh) {
    std::mt19937_64 gen(42);
    std::normal_distribution<double> normal;
    x.resize(static_cast<std::size_t>(s.batch * s.n * s.d));
    y.resize(x.size());
    for (auto& e : x) e = static_cast<T>(normal(gen));
    for (auto& e : y) e = static_cast<T>(normal(gen));
    index_t const K = s.n - 1;
    std::vector<T> r(static_cast<std::size_t>(K));
    for (auto& e : r) e = static_cast<T>(0.5 * normal(gen));
    v.resize(static_cast<std::size_t>(K + 1));
    fc::warp_from_logits(fc::warp_map::softplus_cumsum, r.data(), K, v.data());
    dv.resize(v.size());
    gx.resize(static_cast<std::size_t>(s.n * s.d));
    gy.resize(gx.size());
  }
  fc::interpolant<T> xi(index_t b) const {
    return fc::uniform_interpolant(resilin::series_view<T const>{x.data() + b * s.n * s.d, s.n, s.d});
  }
  fc::interpolant<T> yi(index_t b) const {
    return fc::uniform_interpolant(resilin::series_view<T const>{y.data() + b * s.n * s.d, s.n, s.d});
  }
  fc::warp_view<T> phi() const { return fc::uniform_warp(v.data(), s.n - 1); }
};

void set_pair_counters(benchmark::State& state, fcdtw_shape s) {
  state.SetItemsProcessed(state.iterations() * s.batch);  // items/s = pairs/s
  state.counters["B"] = static_cast<double>(s.batch);
  state.counters["n"] = static_cast<double>(s.n);
  state.counters["d"] = static_cast<double>(s.d);
}

template <class T>
void BM_fcdtw_value_host(benchmark::State& state) {
  fcdtw_data<T> const data(fcdtw_shapes[state.range(0)]);
  for (auto _ : state) {
    T sum = T(0);
    for (index_t b = 0; b < data.s.batch; ++b) sum += fc::value(data.xi(b), data.yi(b), data.phi());
    benchmark::DoNotOptimize(sum);
  }
  set_pair_counters(state, data.s);
}

template <class T>
void BM_fcdtw_value_and_grad_host(benchmark::State& state) {
  fcdtw_data<T> data(fcdtw_shapes[state.range(0)]);
  for (auto _ : state) {
    T sum = T(0);
    for (index_t b = 0; b < data.s.batch; ++b) {
      std::fill(data.dv.begin(), data.dv.end(), T(0));
      std::fill(data.gx.begin(), data.gx.end(), T(0));
      std::fill(data.gy.begin(), data.gy.end(), T(0));
      fc::objective_grads<T> const g{data.dv.data(), {data.gx.data(), data.s.n, data.s.d},
                                     {data.gy.data(), data.s.n, data.s.d}};
      sum += fc::value_and_grad(data.xi(b), data.yi(b), data.phi(), g);
    }
    benchmark::DoNotOptimize(sum);
    benchmark::DoNotOptimize(data.gx.data());
  }
  set_pair_counters(state, data.s);
}

// The 300-step fit on the first 64 pairs of the (1024, 128) shape, one thread.
template <class T>
void BM_fcdtw_fit_host(benchmark::State& state) {
  fcdtw_shape const s{64, 128, 1};
  fcdtw_data<T> const data(s);
  fc::fit_options o;
  o.threads = 1;
  std::vector<T> out(static_cast<std::size_t>(s.batch));
  resilin::batch_view<T const> const X{data.x.data(), s.batch, s.n, s.d};
  resilin::batch_view<T const> const Y{data.y.data(), s.batch, s.n, s.d};
  for (auto _ : state) {
    fc::distances(o, X, Y, std::span<T>(out));
    benchmark::DoNotOptimize(out.data());
  }
  set_pair_counters(state, s);
}

void shape_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape"});
  for (int k = 0; k < 2; ++k) b->Arg(k);
  b->Unit(benchmark::kMillisecond);
}
}  // namespace

BENCHMARK_TEMPLATE(BM_fcdtw_value_host, float)->Apply(shape_args);
BENCHMARK_TEMPLATE(BM_fcdtw_value_host, double)->Apply(shape_args);
BENCHMARK_TEMPLATE(BM_fcdtw_value_and_grad_host, float)->Apply(shape_args);
BENCHMARK_TEMPLATE(BM_fcdtw_value_and_grad_host, double)->Apply(shape_args);
BENCHMARK_TEMPLATE(BM_fcdtw_fit_host, float)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_fcdtw_fit_host, double)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();

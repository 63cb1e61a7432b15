// Exact 1-NN search with hard DTW: nearest_neighbors (LB_Keogh pruning) against the argmin of
// pairwise() (every pair), on one thread. Items are pairs (query x reference); the counter
// "computed" is the fraction of pairs whose DTW the search evaluated.
//   data 0: Cylinder-Bell-Funnel, 300 references (100 per class), 300 queries, length 128
//   data 1: random walks (Gaussian steps), 300 references, 100 queries, length 256
//   band 0: a 10 % window (the UCR archive's usual learned window); band 1: full DTW
#include <algorithm>
#include <random>
#include <span>
#include <vector>
#include <benchmark/benchmark.h>
#include <resilin/apps/synthetic.hpp>
#include <resilin/resilin.hpp>
#include <resilin/search/nearest.hpp>

namespace r = resilin;

namespace {

struct problem {
  r::dataset<double> refs, queries;
};

r::dataset<double> random_walks(r::index_t count, r::index_t length, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> step;
  r::dataset<double> out;
  std::vector<double> s(static_cast<std::size_t>(length));
  for (r::index_t k = 0; k < count; ++k) {
    double v = 0;
    for (auto& x : s) x = (v += step(gen));
    out.push_back("0", std::span<double const>(s));
  }
  return out;
}

problem const& data(long which) {
  static problem const cbf{r::make_cbf<double>({.per_class = 100, .length = 128, .seed = 1}),
                           r::make_cbf<double>({.per_class = 100, .length = 128, .seed = 2})};
  static problem const walks{random_walks(300, 256, 3), random_walks(100, 256, 4)};
  return which == 0 ? cbf : walks;
}

r::band_spec band_of(long which) { return which == 0 ? r::band_spec::window(0.1) : r::band_spec::none(); }

void set_counters(benchmark::State& state, problem const& p, double computed) {
  state.SetItemsProcessed(state.iterations() * p.queries.size() * p.refs.size());
  state.counters["computed"] = computed;
  state.counters["length"] = static_cast<double>(p.refs.max_length);
}

void BM_nearest_pruned(benchmark::State& state) {
  auto const& p = data(state.range(0));
  auto const m = r::measures::dtw(band_of(state.range(1)));
  r::search_stats st;
  for (auto _ : state) {
    auto found = r::nearest_neighbors(r::host.with_threads(1), m, p.queries.view(), p.refs.view(), &st);
    benchmark::DoNotOptimize(found.data());
  }
  set_counters(state, p, static_cast<double>(st.computed) / static_cast<double>(st.pairs));
}

void BM_nearest_all_pairs(benchmark::State& state) {
  auto const& p = data(state.range(0));
  auto const m = r::measures::dtw(band_of(state.range(1)));
  std::vector<double> d(static_cast<std::size_t>(p.queries.size() * p.refs.size()));
  std::vector<r::index_t> best(static_cast<std::size_t>(p.queries.size()));
  for (auto _ : state) {
    r::pairwise(r::host.with_threads(1), m, p.queries.view(), p.refs.view(),
                r::matrix_view<double>{d.data(), p.queries.size(), p.refs.size()});
    for (r::index_t a = 0; a < p.queries.size(); ++a) {
      auto const row = d.begin() + a * p.refs.size();
      best[static_cast<std::size_t>(a)] = std::min_element(row, row + p.refs.size()) - row;
    }
    benchmark::DoNotOptimize(best.data());
  }
  set_counters(state, p, 1.0);
}

}  // namespace

BENCHMARK(BM_nearest_pruned)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_nearest_all_pairs)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

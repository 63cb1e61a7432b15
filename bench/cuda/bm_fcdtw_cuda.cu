// FastCDTW closed form on the GPU (spec/cdtw.md B.4.2): F and F with all gradients (dv, dx, dy)
// for a batch of (x, y, phi) pairs, float, one channel, random series in [-1, 1] and random
// monotone PL warps with K = n - 1 segments. Two shapes, one per layout:
//   P100000x128   100000 pairs, n = m = 128, thread_per_pair (1-NN cdist scale)
//   P16x4096      16 pairs, n = m = 4096, block_per_pair (long series)
// and the 300-step fit (fit_distances) of 32768 pairs of n = m = 128, one thread per pair, and
// of 16 pairs of n = m = 4096 in both layouts (one block per pair is the layout for few long pairs),
// and the FastCDTW barycentre (learn::fcdtw_barycenter, 3 rounds of 300-step fits) of 256 series
// of n = 128 with its warp fits on the GPU (learn/cuda.cuh) and on every host core (wall time;
// "M pairs/s" counts fits: series x rounds; checked: the GPU's loss against the host's, 1e-3).
// Reported: ms, M pairs/s and G pieces/s, where pieces = the sweep's pieces of positive length
// summed over the pairs (counted once on the host with the same sweep). Time from CUDA events
// around the enqueued work (UseManualTime); buffers and workspace are allocated once outside the
// timed region. Before timing, the GPU values of the first pairs are checked against the host
// closed form (relative 1e-4); a mismatch prints FAILED and makes the program exit 1.
//
//   bm_fcdtw_cuda [google benchmark flags] [--summary=FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include "support/cuda_bench.cuh"
#include <resilin/fcdtw/cuda/fcdtw.cuh>
#ifdef RESILIN_BENCH_LEARN
#include <resilin/learn/cuda.cuh>
#endif

namespace r = resilin;
namespace fc = resilin::fcdtw;
using r::index_t;

namespace {

struct config {
  std::string id;
  index_t pairs, length;  // n = m = length, knots = length (K = length - 1)
  fc::pair_layout layout;
  bool grads;
};

struct row {
  std::string name;
  double ms = 0, mpairs = 0, gpieces = 0;
  bool verified = false;
};
std::vector<row> g_rows;  // the benchmark executable's summary (not library state)
bool g_failed = false;
resilin_bench::summary_file g_summary;

template <class T>
struct dev {
  T* p = nullptr;
  explicit dev(std::size_t count) { RESILIN_CUDA_TRY(cudaMalloc(&p, (count ? count : 1) * sizeof(T))); }
  explicit dev(std::vector<T> const& h) : dev(h.size()) {
    RESILIN_CUDA_TRY(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~dev() { if (p) (void)cudaFree(p); }
  dev(dev const&) = delete;
  dev& operator=(dev const&) = delete;
};

/// Counts the pieces of a sweep (on the host; RESILIN_HD because the sweep is).
struct piece_counter {
  std::uint64_t count = 0;
  RESILIN_HD void operator()(fc::detail::piece<float> const&) noexcept { ++count; }
};

/// The host side of a shape: series, warps and the piece count (deterministic LCG data).
struct host_problem {
  index_t pairs, length;
  std::vector<float> x, y, v;
  std::uint64_t pieces = 0;

  host_problem(index_t pairs_, index_t length_) : pairs(pairs_), length(length_) {
    std::size_t const series = static_cast<std::size_t>(pairs) * static_cast<std::size_t>(length);
    std::uint32_t s = 12345u + static_cast<std::uint32_t>(length);
    auto uniform = [&s] {  // in [-1, 1)
      s = s * 1664525u + 1013904223u;
      return static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 2.f - 1.f;
    };
    x.resize(series);
    y.resize(series);
    v.resize(series);  // knots = length per pair
    for (auto& a : x) a = uniform();
    for (auto& a : y) a = uniform();
    std::vector<float> logits(static_cast<std::size_t>(length - 1));
    for (index_t p = 0; p < pairs; ++p) {
      for (auto& a : logits) a = 2.f * uniform();
      fc::warp_from_logits(fc::warp_map::softplus_cumsum, logits.data(), length - 1, v.data() + p * length);
      piece_counter count;
      fc::detail::for_each_piece(hx(p), hy(p), hv(p), count);
      pieces += count.count;
    }
  }
  fc::interpolant<float> hx(index_t p) const {
    return fc::uniform_interpolant(r::series_view<float const>{x.data() + p * length, length, 1});
  }
  fc::interpolant<float> hy(index_t p) const {
    return fc::uniform_interpolant(r::series_view<float const>{y.data() + p * length, length, 1});
  }
  fc::warp_view<float> hv(index_t p) const { return fc::uniform_warp(v.data() + p * length, length - 1); }
};

host_problem const& problem(index_t pairs, index_t length) {
  static std::vector<std::unique_ptr<host_problem>> cache;  // one per shape, built on first use
  for (auto const& h : cache)
    if (h->pairs == pairs && h->length == length) return *h;
  cache.push_back(std::make_unique<host_problem>(pairs, length));
  return *cache.back();
}

/// Whether the GPU's first values agree with the host's within tol (relative, at least 1); the
/// first disagreement is printed, and any marks the run FAILED.
bool agrees_with_host(benchmark::State& state, config const& c, std::vector<float> const& got,
                      std::vector<float> const& want, float tol, char const* failure) {
  bool ok = true;
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (!(std::abs(got[p] - want[p]) <= tol * std::max(1.f, std::abs(want[p])))) {
      if (ok)
        std::fprintf(stderr, "\n*** FAILED: fcdtw %s pair %zu: gpu %.9g host %.9g ***\n\n", c.id.c_str(), p,
                     static_cast<double>(got[p]), static_cast<double>(want[p]));
      ok = false;
    }
  }
  if (!ok) {
    g_failed = true;
    state.SkipWithError(failure);
  }
  return ok;
}

/// Times `launch` and records the row: pairs/s and `pieces` (per launch) per second.
template <class Launch>
void time_and_record(benchmark::State& state, config const& c, cudaStream_t s, Launch&& launch,
                     double pieces, bool ok) {
  double const ms = resilin_bench::timed_iterations(state, s, launch);
  double const mpairs = double(c.pairs) / (ms * 1e-3) / 1e6;
  double const gpieces = pieces / (ms * 1e-3) / 1e9;
  state.SetItemsProcessed(static_cast<std::int64_t>(c.pairs) * static_cast<std::int64_t>(state.iterations()));
  state.counters["Mpairs_per_s"] = mpairs;
  state.counters["Gpieces_per_s"] = gpieces;
  row rw{c.id, ms, mpairs, gpieces, ok};
  resilin_bench::keep_row(g_rows, rw);
  g_summary.update();
}

void run(benchmark::State& state, config const& c) {
  host_problem const& h = problem(c.pairs, c.length);
  cudaStream_t s = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreate(&s));
  auto const exec = r::device.on(s);
  dev<float> x(h.x), y(h.y), v(h.v), out(static_cast<std::size_t>(c.pairs));
  std::size_t const series = h.x.size();
  std::unique_ptr<dev<float>> dv, dx, dy;
  fc::pair_grads<float> g{};
  if (c.grads) {
    dv = std::make_unique<dev<float>>(series);
    dx = std::make_unique<dev<float>>(series);
    dy = std::make_unique<dev<float>>(series);
    g = {dv->p, dx->p, dy->p};
  }
  fc::pair_batch<float> b;
  b.x = {x.p, c.pairs, c.length, 1, nullptr};
  b.y = {y.p, c.pairs, c.length, 1, nullptr};
  b.warps = v.p;
  b.knots = c.length;
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(c.grads ? fc::expert::values_and_grads<float>(nullptr, bytes, exec, b, out.p, g, c.layout)
                           : fc::expert::values<float>(nullptr, bytes, exec, b, out.p, c.layout));
  dev<unsigned char> ws(bytes);  // non-null even for 0 bytes: "run", not "size query"
  auto launch = [&] {
    return c.grads ? fc::expert::values_and_grads<float>(ws.p, bytes, exec, b, out.p, g, c.layout)
                   : fc::expert::values<float>(ws.p, bytes, exec, b, out.p, c.layout);
  };
  RESILIN_CUDA_TRY(cudaMemset(out.p, 0xFF, static_cast<std::size_t>(c.pairs) * sizeof(float)));  // NaN poison
  RESILIN_CUDA_TRY(launch());  // warm-up and the values checked below
  RESILIN_CUDA_TRY(cudaStreamSynchronize(s));

  // check the first pairs against the host closed form
  index_t const checked = std::min<index_t>(c.pairs, 256);
  std::vector<float> got(static_cast<std::size_t>(checked));
  RESILIN_CUDA_TRY(cudaMemcpy(got.data(), out.p, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> want(got.size());
  for (index_t p = 0; p < checked; ++p) want[static_cast<std::size_t>(p)] = fc::value(h.hx(p), h.hy(p), h.hv(p));
  bool const ok = agrees_with_host(state, c, got, want, 1e-4f, "FAILED: GPU value differs from the host closed form");
  state.counters["pieces_per_pair"] = double(h.pieces) / double(c.pairs);
  time_and_record(state, c, s, launch, double(h.pieces), ok);
  (void)cudaStreamDestroy(s);
}

/// The 300-step fit (fit_distances: fit_options defaults) in c.layout, on `pairs` pairs of
/// the shape's series; the first 8 distances checked against the host fit (1e-3 relative: 300
/// float steps with the device's exp and log1p). Pieces/s counts the pieces of the warps of the
/// shape's table once per step (an estimate: the fitted warps have their own pieces).
void run_fit(benchmark::State& state, config const& c) {
  host_problem const& h = problem(c.pairs, c.length);
  cudaStream_t s = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreate(&s));
  auto const exec = r::device.on(s);
  dev<float> x(h.x), y(h.y), out(static_cast<std::size_t>(c.pairs));
  r::batch_view<float const> const X{x.p, c.pairs, c.length, 1, nullptr}, Y{y.p, c.pairs, c.length, 1, nullptr};
  fc::fit_options const o;
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(fc::expert::fit_distances<float>(nullptr, bytes, exec, o, X, Y, out.p, nullptr, nullptr, c.layout));
  dev<unsigned char> ws(bytes);
  auto launch = [&] {
    return fc::expert::fit_distances<float>(ws.p, bytes, exec, o, X, Y, out.p, nullptr, nullptr, c.layout);
  };
  RESILIN_CUDA_TRY(launch());
  RESILIN_CUDA_TRY(cudaStreamSynchronize(s));
  index_t const checked = std::min<index_t>(c.pairs, 8);
  std::vector<float> got(static_cast<std::size_t>(checked)), want(got.size());
  RESILIN_CUDA_TRY(cudaMemcpy(got.data(), out.p, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  fc::distances(o, r::batch_view<float const>{h.x.data(), checked, c.length, 1, nullptr},
                r::batch_view<float const>{h.y.data(), checked, c.length, 1, nullptr}, std::span<float>(want));
  bool const ok = agrees_with_host(state, c, got, want, 1e-3f, "FAILED: GPU fit differs from the host fit");
  time_and_record(state, c, s, launch, double(h.pieces) * double(o.steps), ok);
  (void)cudaStreamDestroy(s);
}

#ifdef RESILIN_BENCH_LEARN
/// The barycentre of c.pairs series of n = c.length (the shape's x), 3 rounds, on the GPU
/// (c.id ends in "gpu") or the host's threads; wall time per barycentre, as the user sees it.
void run_barycenter(benchmark::State& state, config const& c) {
  host_problem const& h = problem(c.pairs, c.length);
  r::batch_view<float const> const series{h.x.data(), c.pairs, c.length, 1, nullptr};
  fc::fit_options const fo;
  r::learn::barycenter_options opt;
  opt.max_iter = 3;
  opt.tolerance = 0;
  opt.threads = 0;
  bool const gpu = c.id.ends_with("gpu");
  auto const once = [&] {
    return gpu ? r::learn::fcdtw_barycenter(r::device, fo, series, {}, opt)
               : r::learn::fcdtw_barycenter(fo, series, {}, opt);
  };
  auto const first = once();  // warm-up, and the check against the host
  bool ok = true;
  double const host_loss = gpu ? r::learn::fcdtw_barycenter(fo, series, {}, opt).loss : first.loss;
  if (!(std::abs(first.loss - host_loss) <= 1e-3 * std::max(1.0, std::abs(host_loss)))) {
    std::fprintf(stderr, "\n*** FAILED: fcdtw %s: gpu loss %.9g host %.9g ***\n\n", c.id.c_str(),
                 first.loss, host_loss);
    g_failed = true;
    ok = false;
    state.SkipWithError("FAILED: GPU barycentre differs from the host's");
  }
  double total_ms = 0;
  for (auto _ : state) {
    auto const t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(once());
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total_ms += s * 1e3;
    state.SetIterationTime(s);
  }
  if (state.iterations() == 0) {  // skipped (FAILED): a row that says so, no rates
    resilin_bench::keep_row(g_rows, row{c.id, 0.0, 0.0, 0.0, false});
    g_summary.update();
    return;
  }
  double const ms = total_ms / static_cast<double>(state.iterations());
  double const fits = double(c.pairs) * double(first.iterations);
  state.counters["fits_per_s"] = fits / (ms * 1e-3);
  resilin_bench::keep_row(g_rows, row{c.id, ms, fits / (ms * 1e-3) / 1e6, 0.0, ok});
  g_summary.update();
}
#endif

std::vector<config> configs() {
  std::vector<config> v;
  for (bool grads : {false, true}) {
    char const* what = grads ? "/value+grad" : "/value";
    v.push_back({std::string("P100000x128/thread_per_pair") + what, 100000, 128, fc::pair_layout::thread_per_pair, grads});
    v.push_back({std::string("P16x4096/block_per_pair") + what, 16, 4096, fc::pair_layout::block_per_pair, grads});
  }
  return v;
}

std::string summary_text() {
  std::string const gpu = resilin_bench::device_name();
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line,
                "FastCDTW closed form and fit on %s: float, d = 1, K = n - 1 warp segments, manual time (CUDA "
                "events); values checked against the host: %s\n\n",
                gpu.c_str(), g_failed ? "FAILED" : "ok");
  text += line;
  text += "| config | ms | M pairs/s | G pieces/s | checked |\n|---|---:|---:|---:|---|\n";
  for (auto const& rw : g_rows) {
    char pieces[32] = "-";  // the barycentre rows count fits, not pieces
    if (rw.gpieces > 0) std::snprintf(pieces, sizeof pieces, "%.3f", rw.gpieces);
    std::snprintf(line, sizeof line, "| fcdtw/%s | %.3f | %.4g | %s | %s |\n", rw.name.c_str(), rw.ms, rw.mpairs,
                  pieces, rw.verified ? "yes" : "FAILED");
    text += line;
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int const rc = resilin_bench::run_main(argc, argv, g_summary, &summary_text, [] {
    for (auto const& c : configs()) resilin_bench::register_timed("fcdtw/" + c.id, run, c);
    config const fits[] = {
        {"P32768x128/fit300/thread_per_pair", 32768, 128, fc::pair_layout::thread_per_pair, false},
        {"P16x4096/fit300/block_per_pair", 16, 4096, fc::pair_layout::block_per_pair, false},
        {"P16x4096/fit300/thread_per_pair", 16, 4096, fc::pair_layout::thread_per_pair, false}};
    for (auto const& fit : fits) resilin_bench::register_timed("fcdtw/" + fit.id, run_fit, fit);
#ifdef RESILIN_BENCH_LEARN
    for (char const* where : {"host", "gpu"}) {
      config const bary{std::string("barycenter/N256x128/rounds3/") + where, 256, 128,
                        fc::pair_layout::automatic, false};
      resilin_bench::register_timed("fcdtw/" + bary.id, run_barycenter, bary)->Iterations(3);
    }
#endif
  });
  return rc != 0 ? rc : (g_failed ? 1 : 0);
}

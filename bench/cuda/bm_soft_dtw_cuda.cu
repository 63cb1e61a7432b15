// Google Benchmark suite of the CUDA backend: the configurations M1-M3, B1, F1, L1, S1 and H1
// of spec/softdtw.md section 5 (and FC1, FastCDTW's fit shape), plus the other cost models through the same recursion kernels
// (soft-MSM, grid soft-CDTW: rows C1/*), and the job schedules on short series (W1/*: one CTA
// or one warp per pair), long pairs per CTA or tiled (T1/*), and training with R whole or
// checkpointed, per CTA or tiled (CP1/*), and many pairs of 64 channels, automatic (tiled with
// distance tiles) or one CTA per pair (D1/*), and values of medium series in large batches by
// the strip warp or one CTA per pair (H1/512x*, M3/block|strip). Time is measured with CUDA
// events around the enqueued work (UseManualTime), the workspace comes from the expert layer
// and is allocated once outside the timed region. Reported per run: G cells/s (cells = sum over pairs of n * m,
// B*N*M here) and peak device memory = inputs + outputs (+ gradients) + workspace, in MB.
//
//   bm_soft_dtw_cuda [google benchmark flags] [--summary=FILE]
// writes a markdown table (and the headline line of the issue) to FILE and stdout at the end.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include <benchmark/benchmark.h>
#include "support/cuda_bench.cuh"
#include <resilin/cuda.cuh>

namespace r = resilin;

namespace {

enum class mode { value, train };
/// The measure a row runs: soft-DTW (hard DTW when gamma = 0), soft-MSM (c = 1) or grid soft-CDTW.
enum class cost { dtw, soft_msm, soft_cdtw };

struct config {
  std::string id;
  r::index_t batch, n, m, d;
  double gamma;  // 0: hard DTW
  mode what;
  cost model = cost::dtw;
  r::device_schedule schedule = r::device_schedule::automatic;
  r::training_store storage = r::training_store::automatic;
};

struct row {
  std::string name;
  double ms = 0, gcells = 0, peak_mb = 0;
  double base_mb = 0;   // training: inputs + one value per cell (the memory goal's unit)
  double grads_mb = 0;  // training: the gradient outputs (part of peak_mb)
};
std::vector<row> g_rows;  // the benchmark executable's summary (not library state)
resilin_bench::summary_file g_summary;

template <class T>
struct dev {
  T* p = nullptr;
  std::size_t bytes = 0;
  explicit dev(std::size_t count) : bytes(count * sizeof(T)) {
    if (count) RESILIN_CUDA_TRY(cudaMalloc(&p, bytes));
  }
  ~dev() { if (p) (void)cudaFree(p); }
  dev(dev const&) = delete;
  dev& operator=(dev const&) = delete;
};

void fill(float* p, std::size_t count, unsigned seed) {
  std::vector<float> h(count);
  unsigned s = seed * 2654435761u + 1;
  for (auto& v : h) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 2.f - 1.f;
  }
  RESILIN_CUDA_TRY(cudaMemcpy(p, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
}

template <class M>
void run(benchmark::State& state, config const& c, M const& meas) {
  using T = float;
  cudaStream_t s = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreate(&s));
  auto const exec = r::device.on(s).with_schedule(c.schedule).with_training_store(c.storage);
  std::size_t const xs = std::size_t(c.batch * c.n * c.d), ys = std::size_t(c.batch * c.m * c.d);
  dev<T> x(xs), y(ys), out(std::size_t(c.batch));
  fill(x.p, xs, 1);
  fill(y.p, ys, 2);
  r::batch_view<T const> const X{x.p, c.batch, c.n, c.d, nullptr}, Y{y.p, c.batch, c.m, c.d, nullptr};
  std::size_t peak = x.bytes + y.bytes + out.bytes;
  std::size_t bytes = 0;
  std::unique_ptr<dev<T>> gx, gy;
  if (c.what == mode::value) {
    RESILIN_CUDA_TRY(r::expert::values(nullptr, bytes, exec, meas, X, Y, out.p));
  } else {
    gx = std::make_unique<dev<T>>(xs);
    gy = std::make_unique<dev<T>>(ys);
    peak += gx->bytes + gy->bytes;
    RESILIN_CUDA_TRY(r::expert::values_and_grads(nullptr, bytes, exec, meas, X, Y, out.p,
                                                 r::batch_view<T>{gx->p, c.batch, c.n, c.d, nullptr},
                                                 r::batch_view<T>{gy->p, c.batch, c.m, c.d, nullptr}));
  }
  dev<unsigned char> ws(bytes);
  peak += bytes;
  auto launch = [&] {
    if (c.what == mode::value)
      return r::expert::values(ws.p, bytes, exec, meas, X, Y, out.p);
    return r::expert::values_and_grads(ws.p, bytes, exec, meas, X, Y, out.p,
                                       r::batch_view<T>{gx->p, c.batch, c.n, c.d, nullptr},
                                       r::batch_view<T>{gy->p, c.batch, c.m, c.d, nullptr});
  };
  double const ms = resilin_bench::timed_iterations(state, s, launch);
  double const cells = double(c.batch) * double(c.n) * double(c.m);
  state.SetItemsProcessed(static_cast<int64_t>(cells * double(state.iterations())));
  state.counters["Gcells_per_s"] = cells / (ms * 1e-3) / 1e9;
  state.counters["peak_MB"] = double(peak) / 1e6;
  row rw{c.id, ms, cells / (ms * 1e-3) / 1e9, double(peak) / 1e6};
  if (c.what == mode::train) {
    rw.base_mb = (double(x.bytes + y.bytes) + cells * sizeof(T)) / 1e6;
    rw.grads_mb = double(gx->bytes + gy->bytes) / 1e6;
  }
  resilin_bench::keep_row(g_rows, rw);
  g_summary.update();
  (void)cudaStreamDestroy(s);
}

void run_config(benchmark::State& state, config c) {
  auto const gamma = static_cast<float>(c.gamma);
  if (c.model == cost::soft_msm) run(state, c, r::measures::soft_msm<float>(gamma));
  else if (c.model == cost::soft_cdtw) run(state, c, r::measures::soft_cdtw<float>(gamma));
  else if (c.gamma > 0) run(state, c, r::measures::soft_dtw<float>(gamma));
  else run(state, c, r::measures::dtw());
}

std::vector<config> configs() {
  std::vector<config> v;
  auto both = [&](std::string id, r::index_t b, r::index_t n, r::index_t m, r::index_t d, double g) {
    v.push_back({id + "/fwd", b, n, m, d, g, mode::value});
    v.push_back({id + "/fwd+bwd", b, n, m, d, g, mode::train});
  };
  // headline first: soft-DTW fwd+bwd B=32 n=m=1024 d=64 float (automatic: tiled on a GPU of
  // 128 SMs or more), then the same by one CTA per pair
  v.push_back({"headline/fwd+bwd", 32, 1024, 1024, 64, 1.0, mode::train});
  v.push_back({"headline/block/fwd+bwd", 32, 1024, 1024, 64, 1.0, mode::train, cost::dtw,
               r::device_schedule::block_per_pair});
  both("M1", 128, 17, 15, 2, 1.0);
  both("M2", 512, 64, 64, 2, 1.0);
  both("M3", 512, 256, 256, 2, 1.0);
  for (r::index_t b : {16, 32})
    for (r::index_t n : {128, 512, 1024, 2048})
      for (r::index_t d : {1, 64})
        v.push_back({"B1/" + std::to_string(b) + "x" + std::to_string(n) + "x" + std::to_string(d) +
                         "/fwd+bwd", b, n, n, d, 1.0, mode::train});
  for (r::index_t n : {256, 512, 1024, 2048, 4096})
    both("F1/16x" + std::to_string(n) + "x64", 16, n, n, 64, 1.0);
  for (r::index_t d : {1, 16, 128}) both("F1/16x512x" + std::to_string(d), 16, 512, 512, d, 1.0);
  both("L1", 1, 5000, 5000, 2, 1.0);
  both("S1", 2, 128, 128, 3, 0.01);
  // FC1: the shape of bm_fcdtw_cuda's 300-step FastCDTW fit (32768 pairs, n = m = 128, d = 1),
  // so that the two read side by side (16384 cells per pair)
  both("FC1/32768x128x1", 32768, 128, 128, 1, 1.0);
  // H1 (cuDTW-Ada: N = 65536 pairs of 395 x 4437, hard DTW, 1-D, forward); 8192 pairs here to
  // keep the whole check under 8 minutes; cells/s is the comparable number.
  v.push_back({"H1/8192x395x4437/dtw_fwd", 8192, 395, 4437, 1, 0.0, mode::value});
  // C1: the other cost models through the same kernels, B=32, n=m=1024, d=1, gamma 1.
  for (auto [name, model] : {std::pair{"soft_msm", cost::soft_msm}, std::pair{"soft_cdtw", cost::soft_cdtw}}) {
    v.push_back({std::string("C1/") + name + "/32x1024x1/fwd", 32, 1024, 1024, 1, 1.0, mode::value, model});
    v.push_back({std::string("C1/") + name + "/32x1024x1/fwd+bwd", 32, 1024, 1024, 1, 1.0, mode::train, model});
  }
  // W1: short series in large batches, one CTA per pair against one warp per pair.
  for (auto [b, n] : {std::pair<r::index_t, r::index_t>{8192, 32}, {2048, 128}})
    for (auto [name, sched] : {std::pair{"block", r::device_schedule::block_per_pair},
                               std::pair{"warp", r::device_schedule::warp_per_pair}})
      for (mode w : {mode::value, mode::train})
        v.push_back({"W1/" + std::to_string(b) + "x" + std::to_string(n) + "x2/" + name +
                         (w == mode::value ? "/fwd" : "/fwd+bwd"),
                     b, n, n, 2, 1.0, w, cost::dtw, sched});
  // T1: two long pairs, one CTA per pair against the tiled wavefront, values and training.
  for (auto [name, sched] : {std::pair{"block", r::device_schedule::block_per_pair},
                             std::pair{"tiled", r::device_schedule::tiled}})
    for (mode w : {mode::value, mode::train})
      v.push_back({std::string("T1/2x8192x2/") + name + (w == mode::value ? "/fwd" : "/fwd+bwd"),
                   2, 8192, 8192, 2, 1.0, w, cost::dtw, sched});
  // D1: many pairs of many channels; automatic (tiled: distance tiles in shared memory) against
  // one CTA per pair (per-cell distances), values and training.
  for (auto [name, sched] : {std::pair{"auto", r::device_schedule::automatic},
                             std::pair{"block", r::device_schedule::block_per_pair}})
    for (mode w : {mode::value, mode::train})
      v.push_back({std::string("D1/512x256x64/") + name + (w == mode::value ? "/fwd" : "/fwd+bwd"),
                   512, 256, 256, 64, 1.0, w, cost::dtw, sched});
  // CP1: training with R stored whole against the checkpointed modes (peak memory and time):
  // one CTA per pair (diagonal checkpoints) and tiled (tile borders).
  for (auto [name, store, sched] :
       {std::tuple{"whole", r::training_store::whole_grid, r::device_schedule::block_per_pair},
        std::tuple{"checkpointed", r::training_store::checkpointed, r::device_schedule::block_per_pair},
        std::tuple{"tiled-checkpointed", r::training_store::checkpointed, r::device_schedule::tiled}})
    v.push_back({std::string("CP1/4x8192x16/") + name + "/fwd+bwd", 4, 8192, 8192, 16, 1.0,
                 mode::train, cost::dtw, sched, store});
  // H1 and M3 values by the strip warp (a strip of rows per lane) against one CTA per pair
  // (last: the goals' rows above come first should gpu_check's time cap stop the run).
  for (auto [name, sched] : {std::pair{"block", r::device_schedule::block_per_pair},
                             std::pair{"strip", r::device_schedule::warp_per_pair}}) {
    v.push_back({std::string("H1/512x395x4437/") + name + "/dtw_fwd", 512, 395, 4437, 1, 0.0,
                 mode::value, cost::dtw, sched});
    v.push_back({std::string("M3/") + name + "/fwd", 512, 256, 256, 2, 1.0, mode::value, cost::dtw, sched});
  }
  return v;
}

std::string summary_text() {
  std::string const gpu = resilin_bench::device_name();
  std::string text;
  char line[512];
  for (auto const& rw : g_rows)
    if (rw.name == "headline/fwd+bwd") {  // one line: headline/block/ is the untiled schedule's row
      std::snprintf(line, sizeof line,
                    "headline: soft-dtw fwd+bwd B=32 n=m=1024 d=64 float: %.2f G cells/s, peak "
                    "memory %.0f MB\n",
                    rw.gcells, rw.peak_mb);
      text += line;
    }
  std::snprintf(line, sizeof line, "\nGPU: %s; float, gamma 1 unless noted, no band, manual time (CUDA events)\n\n", gpu.c_str());
  text += line;
  text += "Training rows: peak memory over inputs + one value per cell, with and without the "
          "gradient outputs (the memory goal: <= 1.1).\n\n";
  text += "| config | ms | G cells/s | peak MB | peak / (inputs + cells) | the same, gradients aside |\n"
          "|---|---:|---:|---:|---:|---:|\n";
  for (auto const& rw : g_rows) {
    if (rw.base_mb > 0)
      std::snprintf(line, sizeof line, "| %s | %.3f | %.2f | %.1f | %.4f | %.4f |\n", rw.name.c_str(), rw.ms,
                    rw.gcells, rw.peak_mb, rw.peak_mb / rw.base_mb, (rw.peak_mb - rw.grads_mb) / rw.base_mb);
    else
      std::snprintf(line, sizeof line, "| %s | %.3f | %.2f | %.1f | - | - |\n", rw.name.c_str(), rw.ms,
                    rw.gcells, rw.peak_mb);
    text += line;
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  return resilin_bench::run_main(argc, argv, g_summary, &summary_text, [] {
    for (auto const& c : configs()) resilin_bench::register_timed(c.id, run_config, c);
  });
}

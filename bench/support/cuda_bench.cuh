#pragma once
// What the CUDA benchmarks share: the --summary=FILE flag, the no-GPU exit (77), CUDA-event
// timing of enqueued work per iteration (manual time), the rows table and the summary file.
// Depends on the CUDA runtime, Google Benchmark and backend/cuda/device_status.hpp only (lct's
// benchmark includes no alignment headers).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <resilin/backend/cuda/device_status.hpp>

namespace resilin_bench {

/// Exits with a message on a CUDA error (a benchmark cannot continue after one).
inline void cuda_check(cudaError_t e, char const* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

/// The benchmark's own flags split from Google Benchmark's.
struct cuda_bench_args {
  std::string summary;       // --summary=FILE: where the markdown summary goes
  std::vector<char*> argv;   // the rest, for benchmark::Initialize
  int argc = 0;
};

inline cuda_bench_args parse_args(int argc, char** argv) {
  cuda_bench_args a;
  for (int k = 0; k < argc; ++k) {
    if (std::strncmp(argv[k], "--summary=", 10) == 0) a.summary = argv[k] + 10;
    else a.argv.push_back(argv[k]);
  }
  a.argc = static_cast<int>(a.argv.size());
  return a;
}

/// Registers a benchmark timed with CUDA events (manual time), reported in ms, >= 0.05 s each.
template <class... Args>
benchmark::internal::Benchmark* register_timed(std::string const& name, Args&&... args) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(0.05);
}

/// Runs the registered benchmarks with Google Benchmark's flags from the command line.
inline void run_registered(cuda_bench_args& a) {
  benchmark::Initialize(&a.argc, a.argv.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}

/// Whether a CUDA device can be used; prints why not.
inline bool have_device() {
  std::string const why = resilin::cuda_unavailable_reason();
  if (!why.empty()) {
    std::printf("no CUDA device (%s): benchmarks skipped\n", why.c_str());
    return false;
  }
  return true;
}

inline std::string device_name() {
  cudaDeviceProp prop{};
  (void)cudaGetDeviceProperties(&prop, 0);
  return prop.name;
}

/// Runs launch() (returning cudaError_t) once to warm up, then once per iteration between two
/// events on stream s; sets the iteration time and returns the mean in milliseconds.
template <class Launch>
double timed_iterations(benchmark::State& state, cudaStream_t s, Launch&& launch) {
  cuda_check(launch(), "warm-up launch");
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  cudaEvent_t start, stop;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  double total_ms = 0;
  for (auto _ : state) {
    cuda_check(cudaEventRecord(start, s), "cudaEventRecord");
    cuda_check(launch(), "launch");
    cuda_check(cudaEventRecord(stop, s), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    total_ms += ms;
    state.SetIterationTime(ms / 1e3);
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  return state.iterations() ? total_ms / static_cast<double>(state.iterations()) : 0.0;
}

/// Keeps one row per name (Google Benchmark may run a case more than once: the last run wins).
template <class Row>
void keep_row(std::vector<Row>& rows, Row const& row) {
  for (auto& e : rows)
    if (e.name == row.name) {
      e = row;
      return;
    }
  rows.push_back(row);
}

/// A benchmark executable's markdown summary, rebuilt by `text` from its rows: written to `path`
/// (when given) after every row, so that a run cut short (scripts/gpu_check.sh caps each
/// benchmark's time) still leaves the rows it measured, and printed at the end.
struct summary_file {
  std::string path;
  std::string (*text)() = nullptr;

  /// Writes the summary to a temporary file renamed over `path`: a run killed mid-write leaves
  /// the previous complete summary.
  void update() const {
    if (path.empty() || !text) return;
    std::string const part = path + ".part";
    bool written = false;
    if (std::FILE* f = std::fopen(part.c_str(), "w")) {
      written = std::fputs(text().c_str(), f) >= 0;
      written = std::fclose(f) == 0 && written;
    }
    if (!written || std::rename(part.c_str(), path.c_str()) != 0)
      std::fprintf(stderr, "cannot write the summary to %s\n", path.c_str());
  }
  void publish() const {
    if (text) std::fputs(text().c_str(), stdout);
    update();
  }
};

/// The main of a CUDA benchmark executable: 77 (skipped) without a usable device; else registers
/// the benchmarks (register_all()), runs them with the command line's Google Benchmark flags
/// while `summary` keeps --summary's file up to date, prints the summary and returns 0.
template <class Register>
int run_main(int argc, char** argv, summary_file& summary, std::string (*text)(), Register&& register_all) {
  auto args = parse_args(argc, argv);
  if (!have_device()) return 77;
  summary = {args.summary, text};
  register_all();
  run_registered(args);
  summary.publish();
  return 0;
}

}  // namespace resilin_bench

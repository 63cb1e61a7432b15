// lct on the GPU: device encode and decode throughput (spec/lct.md §3.6-3.7) on N(0, 0.02)
// weights: bf16 (256 Mi elements), fp16 and fp32 (512 MiB each). Rate = uncompressed bytes
// per second (GB = 1e9 B), time from CUDA events around the enqueued work (UseManualTime);
// buffers and workspaces are allocated once outside the timed region.
//
// Before timing, once per dtype: the device encoder's output (key_ref, chunk table, raw planes,
// code stream) must equal the host encoder's bytes, and the device decoder must reproduce the
// input bit for bit. A mismatch prints FAILED and makes the program exit 1.
//
//   bm_lct_cuda [google benchmark flags] [--summary=FILE]
// writes a markdown table (rates against the goals) to FILE and stdout at the end.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include "support/cuda_bench.cuh"
#include <cuda_fp16.h>

#include <resilin/lct/lct.cuh>

namespace lct = resilin::lct;
namespace cc = resilin::lct::cuda_codec;

namespace {

constexpr double decode_goal_gbps = 1000, encode_goal_gbps = 500;

template <class T>
struct dev {
  T* p = nullptr;
  explicit dev(std::size_t count) { RESILIN_LCT_CUDA_TRY(cudaMalloc(&p, (count ? count : 1) * sizeof(T))); }
  ~dev() { if (p) (void)cudaFree(p); }
  dev(dev const&) = delete;
  dev& operator=(dev const&) = delete;
};

template <class T>
std::vector<T> to_host(T const* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) RESILIN_LCT_CUDA_TRY(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/// Bit patterns of n N(0, 0.02) values of type t, little endian, rounded to nearest even.
/// Fixed blocks with their own seeds, so the bytes do not depend on the thread count.
std::vector<std::uint8_t> gaussian_weights(lct::dtype t, std::uint64_t n) {
  unsigned const eb = lct::element_bytes(t);
  std::vector<std::uint8_t> out(n * eb);
  constexpr std::uint64_t block = std::uint64_t{1} << 20;
  std::uint64_t const blocks = (n + block - 1) / block;
  auto fill = [&](std::uint64_t b) {
    std::uint64_t s = 0x9E3779B97F4A7C15ull * (b + 1);
    auto next = [&] {  // splitmix64, top 53 bits as a double in (0, 1)
      std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
    };
    std::uint64_t const end = std::min(n, (b + 1) * block);
    for (std::uint64_t i = b * block; i < end; i += 2) {
      double const r = 0.02 * std::sqrt(-2 * std::log(next())), a = 6.283185307179586 * next();
      float const v[2] = {static_cast<float>(r * std::cos(a)), static_cast<float>(r * std::sin(a))};
      for (unsigned k = 0; k < 2 && i + k < end; ++k) {
        std::uint8_t* dst = out.data() + (i + k) * eb;
        std::uint32_t u;
        std::memcpy(&u, &v[k], 4);
        if (t == lct::dtype::fp32) {
          std::memcpy(dst, &u, 4);
        } else if (t == lct::dtype::bf16) {
          auto const h = static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);  // finite: RNE
          std::memcpy(dst, &h, 2);
        } else {
          __half const h = __float2half_rn(v[k]);
          std::memcpy(dst, &h, 2);
        }
      }
    }
  };
  unsigned const workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] { for (std::uint64_t b = w; b < blocks; b += workers) fill(b); });
  for (auto& th : pool) th.join();
  return out;
}

/// One dtype's input, host reference encoding, device buffers and workspaces; verified once.
struct codec_case {
  lct::dtype type;
  std::uint64_t n;
  std::size_t bytes;
  lct::encoded_tensor host;
  std::uint64_t C;
  std::unique_ptr<dev<std::uint8_t>> in, raw, enc_ws, dec_ws, out;
  std::unique_ptr<dev<std::uint32_t>> offsets, bits, stream, key_ref;
  std::size_t enc_ws_bytes = 0;
  cc::device_stream ds{};
  std::string failure;  // empty: verified
  double ratio = 0;

  codec_case(lct::dtype t, std::uint64_t count) : type(t), n(count), bytes(count * lct::element_bytes(t)) {
    std::vector<std::uint8_t> const x = gaussian_weights(t, n);
    lct::encode(t, x.data(), n, nullptr, host);
    ratio = static_cast<double>(bytes) / static_cast<double>(lct::container_size(host));
    C = lct::chunk_count(n, lct::default_chunk_log2);
    in = std::make_unique<dev<std::uint8_t>>(bytes);
    raw = std::make_unique<dev<std::uint8_t>>(host.raw.size());
    out = std::make_unique<dev<std::uint8_t>>(bytes);
    offsets = std::make_unique<dev<std::uint32_t>>(C + 1);
    bits = std::make_unique<dev<std::uint32_t>>(C);
    stream = std::make_unique<dev<std::uint32_t>>(cc::max_stream_words(t, n, lct::default_chunk_log2));
    key_ref = std::make_unique<dev<std::uint32_t>>(1);
    enc_ws_bytes = cc::encode_workspace_bytes(t, n);
    enc_ws = std::make_unique<dev<std::uint8_t>>(enc_ws_bytes);
    dec_ws = std::make_unique<dev<std::uint8_t>>(cc::decode_workspace_bytes());
    RESILIN_LCT_CUDA_TRY(cudaMemcpy(in->p, x.data(), bytes, cudaMemcpyHostToDevice));
    ds.type = t;
    ds.count = n;
    ds.chunk_log2 = lct::default_chunk_log2;
    ds.key_ref = host.key_ref;
    ds.lengths = host.book.lengths();
    ds.raw = raw->p;
    ds.offsets = offsets->p;
    ds.bits = bits->p;
    ds.stream = stream->p;
    ds.stream_words = host.stream.size() / 4;
    verify(x);
  }

  cudaError_t encode(cudaStream_t s) const {
    cc::device_encode_output const o{raw->p, offsets->p, bits->p, stream->p, key_ref->p, nullptr};
    return cc::encode(type, in->p, n, host.book.lengths(), lct::default_chunk_log2, o, enc_ws->p, enc_ws_bytes, s);
  }
  cudaError_t decode(cudaStream_t s) const {
    return cc::decode(ds, out->p, dec_ws->p, cc::decode_workspace_bytes(), s);
  }

  /// lct's promise: the device stream is the host encoder's, byte for byte, and decodes back
  /// to the input bit for bit. Decoding reads the device-encoded stream.
  void verify(std::vector<std::uint8_t> const& x) {
    RESILIN_LCT_CUDA_TRY(cudaMemset(out->p, 0xA5, bytes));  // poison: unwritten output shows
    RESILIN_LCT_CUDA_TRY(encode(nullptr));
    RESILIN_LCT_CUDA_TRY(cudaDeviceSynchronize());
    std::string what;
    if (to_host(key_ref->p, 1)[0] != host.key_ref) what += " key_ref";
    if (to_host(offsets->p, C + 1) != host.offsets) what += " offsets";
    if (to_host(bits->p, C) != host.bits) what += " chunk-bits";
    if (to_host(raw->p, host.raw.size()) != host.raw) what += " raw-planes";
    if (what.empty()) {  // offsets equal: the stream has the host's length
      auto const words = to_host(stream->p, host.stream.size() / 4);
      if (std::memcmp(words.data(), host.stream.data(), host.stream.size()) != 0) what += " code-stream";
    }
    if (!what.empty()) what = "device encode != host encode:" + what;
    RESILIN_LCT_CUDA_TRY(decode(nullptr));
    std::uint32_t err = 1;
    RESILIN_LCT_CUDA_TRY(cc::read_decode_error(dec_ws->p, &err));
    if (err != 0) what += (what.empty() ? "" : "; ") + std::string("device decode reported a corrupt chunk");
    else if (to_host(out->p, bytes) != x) what += (what.empty() ? "" : "; ") + std::string("device decode != input");
    failure = what;
    if (!failure.empty())
      std::fprintf(stderr, "\n*** FAILED: lct %s n=%llu: %s ***\n\n", std::string(lct::name(type)).c_str(),
                   static_cast<unsigned long long>(n), failure.c_str());
  }
};

struct row {
  std::string name;
  double ms = 0, gbps = 0, goal = 0, ratio = 0;
  bool verified = false;
};
std::vector<row> g_rows;                                        // the executable's summary
std::map<lct::dtype, std::unique_ptr<codec_case>> g_cases;      // built on first use
resilin_bench::summary_file g_summary;

codec_case& case_of(lct::dtype t, std::uint64_t n) {
  auto& c = g_cases[t];
  if (!c) c = std::make_unique<codec_case>(t, n);
  return *c;
}

void run(benchmark::State& state, lct::dtype t, std::uint64_t n, bool decode) {
  codec_case& c = case_of(t, n);
  cudaStream_t s = nullptr;
  RESILIN_LCT_CUDA_TRY(cudaStreamCreate(&s));
  auto launch = [&] { return decode ? c.decode(s) : c.encode(s); };
  double const ms = resilin_bench::timed_iterations(state, s, launch);
  state.SetBytesProcessed(static_cast<std::int64_t>(c.bytes) * static_cast<std::int64_t>(state.iterations()));
  double const gbps = static_cast<double>(c.bytes) / (ms * 1e-3) / 1e9;
  double const goal = decode ? decode_goal_gbps : encode_goal_gbps;
  state.counters["GB_per_s"] = gbps;
  state.counters["goal_GB_per_s"] = goal;
  state.counters["ratio"] = c.ratio;
  if (!c.failure.empty()) state.SkipWithError(("FAILED verification: " + c.failure).c_str());
  std::string const name = std::string(lct::name(t)) + "/" + std::to_string(n >> 20) + "Mi/" + (decode ? "decode" : "encode");
  row rw{name, ms, gbps, goal, c.ratio, c.failure.empty()};
  resilin_bench::keep_row(g_rows, rw);
  g_summary.update();
  (void)cudaStreamDestroy(s);
}

bool verified() {
  bool all = true;
  for (auto const& [t, c] : g_cases) all = all && c->failure.empty();
  return all;
}

std::string summary_text() {
  bool const all_verified = verified();
  std::string const gpu = resilin_bench::device_name();
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line,
                "lct on %s: N(0, 0.02) weights, GB/s of uncompressed bytes, manual time (CUDA events); "
                "device stream == host bytes and bit-exact round trip: %s\n\n",
                gpu.c_str(), all_verified ? "verified" : "FAILED");
  text += line;
  text += "| config | ms | GB/s | goal GB/s | ratio | verified |\n|---|---:|---:|---:|---:|---|\n";
  for (auto const& rw : g_rows) {
    std::snprintf(line, sizeof line, "| %s | %.3f | %.1f | >= %.0f | %.4f | %s |\n", rw.name.c_str(), rw.ms,
                  rw.gbps, rw.goal, rw.ratio, rw.verified ? "yes" : "FAILED");
    text += line;
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int const rc = resilin_bench::run_main(argc, argv, g_summary, &summary_text, [] {
    struct sized { lct::dtype t; std::uint64_t n; };
    sized const sizes[] = {{lct::dtype::bf16, std::uint64_t{256} << 20},   // 512 MiB
                          {lct::dtype::fp16, std::uint64_t{256} << 20},   // 512 MiB
                          {lct::dtype::fp32, std::uint64_t{128} << 20}};  // 512 MiB
    for (auto const& sz : sizes)
      for (bool decode : {false, true}) {
        std::string const name = "lct_cuda/" + std::string(lct::name(sz.t)) + "/" + (decode ? "decode" : "encode");
        resilin_bench::register_timed(name, run, sz.t, sz.n, decode);
      }
  });
  if (rc != 0) return rc;
  bool const all_verified = verified();
  g_cases.clear();  // free device memory while the context is alive
  if (!all_verified) std::puts("\n*** FAILED: lct device codec verification (see above) ***");
  return all_verified ? 0 : 1;
}

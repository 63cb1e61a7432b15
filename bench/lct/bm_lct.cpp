// lct host codec vs zstd on the same bytes (bf16 Gaussian weights, byte-grouped as ZipNN does:
// an exponent plane and a sign|mantissa plane). Metric: bytes/s of bf16 input; counter
// "ratio" = original bytes / compressed bytes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <resilin/lct/lct.hpp>

#if RESILIN_BENCH_HAS_ZSTD
#  include <zstd.h>
#endif

namespace lct = resilin::lct;

namespace {

std::vector<std::uint16_t> const& weights(std::size_t n) {
  static std::vector<std::uint16_t> w;
  if (w.size() != n) {
    std::mt19937_64 rng(42);
    std::normal_distribution<float> nd(0.0f, 0.02f);
    w.resize(n);
    for (auto& v : w) {
      float const f = nd(rng);
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      v = static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);   // round to nearest even
    }
  }
  return w;
}

void BM_lct_encode_host(benchmark::State& st) {
  auto const& x = weights(static_cast<std::size_t>(st.range(0)));
  lct::encode_options opt;
  opt.max_threads = static_cast<unsigned>(st.range(1));
  lct::encoded_tensor out;
  lct::encode_scratch scratch;
  for (auto _ : st) {
    lct::encode(lct::dtype::bf16, x.data(), x.size(), nullptr, out, opt, &scratch);
    benchmark::DoNotOptimize(out.stream.data());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * x.size() * 2));
  st.counters["ratio"] = static_cast<double>(x.size() * 2) / static_cast<double>(lct::container_size(out));
  st.counters["bound"] = lct::ratio_bound(lct::dtype::bf16, lct::entropy_bits(out.exponents));
}

void BM_lct_decode_host(benchmark::State& st) {
  auto const& x = weights(static_cast<std::size_t>(st.range(0)));
  lct::encoded_tensor enc;
  lct::encode(lct::dtype::bf16, x.data(), x.size(), nullptr, enc);
  std::vector<std::uint16_t> y(x.size());
  lct::decode_options opt;
  opt.max_threads = static_cast<unsigned>(st.range(1));
  for (auto _ : st) {
    lct::decode(enc.view(), y.data(), y.size() * 2, opt);
    benchmark::DoNotOptimize(y.data());
  }
  if (y != x) st.SkipWithError("round trip mismatch");
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * x.size() * 2));
  st.counters["ratio"] = static_cast<double>(x.size() * 2) / static_cast<double>(lct::container_size(enc));
}

#if RESILIN_BENCH_HAS_ZSTD
// ZipNN-style byte grouping: plane 0 = exponent bytes, plane 1 = sign|mantissa bytes.
std::vector<std::uint8_t> grouped(std::vector<std::uint16_t> const& x) {
  std::vector<std::uint8_t> g(2 * x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    g[i] = static_cast<std::uint8_t>(x[i] >> 7);
    g[x.size() + i] = lct::raw_bf16(x[i]);
  }
  return g;
}

void BM_lct_encode_zstd(benchmark::State& st) {
  auto const g = grouped(weights(static_cast<std::size_t>(st.range(0))));
  int const level = static_cast<int>(st.range(1));
  std::vector<std::uint8_t> c(ZSTD_compressBound(g.size()));
  std::size_t size = 0;
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  for (auto _ : st) {
    size = ZSTD_compressCCtx(ctx, c.data(), c.size(), g.data(), g.size(), level);
    benchmark::DoNotOptimize(c.data());
  }
  ZSTD_freeCCtx(ctx);
  if (ZSTD_isError(size)) st.SkipWithError("zstd failed");
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * g.size()));
  st.counters["ratio"] = static_cast<double>(g.size()) / static_cast<double>(size);
}

void BM_lct_decode_zstd(benchmark::State& st) {
  auto const g = grouped(weights(static_cast<std::size_t>(st.range(0))));
  int const level = static_cast<int>(st.range(1));
  std::vector<std::uint8_t> c(ZSTD_compressBound(g.size())), d(g.size());
  std::size_t const size = ZSTD_compress(c.data(), c.size(), g.data(), g.size(), level);
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  std::size_t r = 0;
  for (auto _ : st) {
    r = ZSTD_decompressDCtx(ctx, d.data(), d.size(), c.data(), size);
    benchmark::DoNotOptimize(d.data());
  }
  ZSTD_freeDCtx(ctx);
  if (ZSTD_isError(r) || d != g) st.SkipWithError("zstd round trip failed");
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * g.size()));
  st.counters["ratio"] = static_cast<double>(g.size()) / static_cast<double>(size);
}
#endif

}  // namespace

// n = elements; second argument: threads (host) or zstd level
BENCHMARK(BM_lct_encode_host)->ArgNames({"n", "threads"})->Args({1 << 23, 1})->Args({1 << 23, 2})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_lct_decode_host)->ArgNames({"n", "threads"})->Args({1 << 23, 1})->Args({1 << 23, 2})->Unit(benchmark::kMillisecond);
#if RESILIN_BENCH_HAS_ZSTD
BENCHMARK(BM_lct_encode_zstd)->ArgNames({"n", "level"})->Args({1 << 23, 1})->Args({1 << 23, 3})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_lct_decode_zstd)->ArgNames({"n", "level"})->Args({1 << 23, 1})->Args({1 << 23, 3})->Unit(benchmark::kMillisecond);
#endif

BENCHMARK_MAIN();

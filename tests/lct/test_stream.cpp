// The encoder's stream against an independent, code-by-code reference writer: code bits, the
// gap of every 128-bit window, the raw-chunk choice, the region sizes. A round trip cannot see a
// wrong gap (the host decoder does not read them; the GPU decoder starts its threads from them),
// so this is what checks the gap bookkeeping of the encoder's fast paths. Built twice: as is, and
// with BMI2 (test_lct_stream_bmi2), where the PEXT pair-table paths are taken.
#include <support/catch.hpp>

#include <cstdint>
#include <vector>

#include "test_util.hpp"

using namespace lct_test;

namespace {

/// MSB-first bit sink over bytes.
struct bit_sink {
  std::vector<std::uint8_t> bytes;
  std::uint64_t bits = 0;
  void put(std::uint32_t value, unsigned len) {
    for (unsigned k = len; k-- > 0;) {
      if (bits % 8 == 0) bytes.push_back(0);
      if ((value >> k) & 1u) bytes.back() |= static_cast<std::uint8_t>(0x80u >> (bits % 8));
      ++bits;
    }
  }
  void pad_to_word() {
    while (bytes.size() % 4) bytes.push_back(0);
  }
};

struct reference_stream {
  std::vector<std::uint8_t> stream;
  std::vector<std::uint32_t> bits;
  std::vector<std::uint32_t> offsets;
};

std::uint32_t element_bits(lct::dtype t, std::uint8_t const* p) {
  std::uint32_t u = 0;
  for (unsigned b = 0; b < lct::element_bytes(t); ++b) u |= std::uint32_t{p[b]} << (8 * b);
  return u;
}

/// The format of format.hpp written one code at a time from the encoder's book and key.
reference_stream reference(lct::dtype t, std::uint8_t const* data, std::uint64_t n, lct::encoded_tensor const& e) {
  auto const& cl = e.book.lengths();
  std::uint32_t codes[257] = {};
  lct::canonical_codes(cl, codes);
  unsigned const b = lct::exponent_bits(t);
  unsigned const mask = (1u << b) - 1u;
  reference_stream r;
  std::uint64_t const C = lct::chunk_count(n, e.chunk_log2);
  std::uint64_t const K = std::uint64_t{1} << e.chunk_log2;
  r.offsets.push_back(0);
  for (std::uint64_t c = 0; c < C; ++c) {
    std::uint32_t const cnt = lct::chunk_elements(n, e.chunk_log2, c);
    bit_sink coded;
    std::vector<unsigned> gaps{0};
    for (std::uint32_t i = 0; i < cnt; ++i) {
      unsigned const x = lct::exponent_of(t, element_bits(t, data + (c * K + i) * lct::element_bytes(t)));
      unsigned const key = (x - e.key_ref) & mask;
      if (cl.len[key]) {
        coded.put(codes[key], cl.len[key]);
      } else {
        coded.put(codes[cl.n_keys], cl.len[cl.n_keys]);
        coded.put(x, b);
      }
      // a code ending at or past a window boundary: the next code starts there
      if (coded.bits >= 128 * gaps.size()) gaps.push_back(static_cast<unsigned>(coded.bits - 128 * gaps.size()));
    }
    std::uint32_t const code_bits = static_cast<std::uint32_t>(coded.bits);
    // a last code ending exactly on a boundary opens no window
    REQUIRE(gaps.size() - lct::window_count(code_bits) <= 1);
    gaps.resize(lct::window_count(code_bits));
    bit_sink region;
    if (lct::prefer_raw(code_bits, cnt, b)) {
      for (std::uint32_t i = 0; i < cnt; ++i)
        region.put(lct::exponent_of(t, element_bits(t, data + (c * K + i) * lct::element_bytes(t))), b);
      region.pad_to_word();
      r.bits.push_back(cnt * b | lct::raw_chunk_flag);
    } else {
      region = coded;
      region.pad_to_word();
      bit_sink g;
      for (unsigned v : gaps) g.put(v, lct::gap_field_bits);
      g.pad_to_word();
      region.bytes.insert(region.bytes.end(), g.bytes.begin(), g.bytes.end());
      r.bits.push_back(code_bits);
    }
    r.stream.insert(r.stream.end(), region.bytes.begin(), region.bytes.end());
    r.offsets.push_back(static_cast<std::uint32_t>(r.stream.size() / 4));
  }
  return r;
}

bool bmi2_unusable() {
#if RESILIN_LCT_HAS_BMI2 && (defined(__GNUC__) || defined(__clang__))
  if (!__builtin_cpu_supports("bmi2")) {
    WARN("this CPU has no BMI2: the BMI2 build of the stream test is skipped");
    return true;
  }
#endif
  return false;
}

void check_stream(lct::dtype t, std::vector<std::uint8_t> const& bytes, lct::codebook const* book = nullptr,
                  unsigned threads = 1, unsigned chunk_log2 = lct::default_chunk_log2) {
  std::uint64_t const n = bytes.size() / lct::element_bytes(t);
  lct::encode_options opt;
  opt.max_threads = threads;
  opt.chunk_log2 = chunk_log2;
  lct::encoded_tensor e;
  lct::encode(t, bytes.data(), n, book, e, opt);
  auto const r = reference(t, bytes.data(), n, e);
  INFO(lct::name(t) << ", " << n << " elements, " << threads << " threads, chunks of 2^" << chunk_log2);
  REQUIRE(e.bits == r.bits);
  REQUIRE(e.offsets == r.offsets);
  REQUIRE(e.stream.size() == r.stream.size());
  std::size_t first_difference = 0;
  while (first_difference < r.stream.size() && e.stream[first_difference] == r.stream[first_difference])
    ++first_difference;
  CHECK(first_difference == r.stream.size());
}

}  // namespace

TEST_CASE("stream: fresh books on Gaussian weights, every code path and chunk size", "[lct][stream]") {
  if (bmi2_unusable()) return;
  // >= 2^18 elements: the pair-table encoder (with PEXT); fewer: the per-exponent table
  for (std::size_t n : {std::size_t{1} << 19, std::size_t{(1 << 18) + 4093}, std::size_t{30011}, std::size_t{77}}) {
    auto g = gaussian_bf16(n, 0.02f, 21);
    for (unsigned threads : {1u, 2u}) check_stream(lct::dtype::bf16, as_bytes(g), nullptr, threads);
  }
  auto g = gaussian_bf16((1 << 18) + 1000, 1.0f, 22);
  check_stream(lct::dtype::bf16, as_bytes(g), nullptr, 1, lct::min_chunk_log2);
  check_stream(lct::dtype::bf16, as_bytes(g), nullptr, 1, lct::max_chunk_log2);
  // fp32 (pairs too) and fp16 (never pairs) with a Gaussian-like spread of exponents
  auto const h32 = gaussian_bf16((1 << 18) + 333, 0.1f, 23);
  std::vector<std::uint32_t> f32(h32.size());
  for (std::size_t i = 0; i < h32.size(); ++i) f32[i] = std::uint32_t{h32[i]} << 16 | (h32[i] * 40503u & 0xFFFFu);
  check_stream(lct::dtype::fp32, as_bytes(f32));
  auto const h16 = gaussian_bf16(100003, 0.1f, 24);
  std::vector<std::uint16_t> f16(h16.size());
  for (std::size_t i = 0; i < h16.size(); ++i) {
    unsigned const v = h16[i];
    f16[i] = static_cast<std::uint16_t>((v & 0x8000u) | ((v * 7u) & 0x3FFu) | (((v >> 7) & 15u) + 4u) << 10);
  }
  check_stream(lct::dtype::fp16, as_bytes(f16));
}

TEST_CASE("stream: escapes, long codes and raw chunks", "[lct][stream]") {
  if (bmi2_unusable()) return;
  // a narrow book on a wide tensor: many 20-bit escape symbols (the two-code groups)
  auto narrow = gaussian_bf16(50000, 0.02f, 25);
  auto book = lct::codebook::from_sample(lct::dtype::bf16, narrow.data(), narrow.size());
  auto wide = gaussian_bf16((1 << 18) + 77, 30.0f, 26);
  check_stream(lct::dtype::bf16, as_bytes(wide), &book);
  // a few escapes among common codes: long and short codes mixed in one group
  auto mixed = gaussian_bf16((1 << 18) + 5, 0.02f, 27);
  for (std::size_t i = 0; i < mixed.size(); i += 61) mixed[i] = static_cast<std::uint16_t>(0x7F80u | (i & 0x807Fu));
  check_stream(lct::dtype::bf16, as_bytes(mixed), &book);
  check_stream(lct::dtype::bf16, as_bytes(mixed), nullptr);
  // random bit patterns: chunks fall back to raw exponents
  for (auto t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32})
    check_stream(t, random_bytes(lct::element_bytes(t) * 40009, 28));
}

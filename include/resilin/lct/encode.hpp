#pragma once
// Host encoder: histogram pass (modal exponent, refresh statistics), then chunks encoded in
// parallel with a table lookup per element and a 64-bit bit buffer; byte-identical to the
// CUDA encoder.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <resilin/lct/bytes.hpp>
#include <resilin/lct/codebook.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/encoded.hpp>
#include <resilin/lct/error.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/histogram.hpp>
#include <resilin/lct/parallel.hpp>
#include <resilin/lct/tables.hpp>

namespace resilin::lct {

struct encode_options {
  unsigned max_threads = 0;                  ///< 0: std::thread::hardware_concurrency()
  unsigned chunk_log2 = default_chunk_log2;  ///< K = 2^chunk_log2 elements per chunk
};

/// Per-worker buffers kept between encodes (owned by compressed_tensor or the caller).
struct encode_scratch {
  std::vector<std::vector<std::uint8_t>> regions;
  std::vector<std::uint32_t> sizes;
  std::vector<histogram> hists;
};

namespace detail {

/// Appends codes MSB first. Stores are 8 bytes wide, so the target needs 8 bytes of slack.
struct bit_writer {
  std::uint8_t* p;
  std::uint64_t acc = 0;
  unsigned pending = 0;   // bits in acc not yet committed to whole bytes (< 8 after flush)
  void put(std::uint32_t entry) noexcept {   // entry = code << 5 | length
    unsigned const l = entry & 31u;
    acc = (acc << l) | (entry >> 5);
    pending += l;
  }
  void flush() noexcept {
    store_be64(p, (acc << (63 - pending)) << 1);
    p += pending >> 3;
    pending &= 7;
  }
};

template <dtype T>
inline std::uint32_t exponent_at(void const* data, std::uint64_t i) noexcept {
  if constexpr (T == dtype::fp32) {
    std::uint32_t u; std::memcpy(&u, static_cast<std::uint8_t const*>(data) + 4 * i, 4);
    return (u >> 23) & 0xFFu;
  } else {
    std::uint16_t u; std::memcpy(&u, static_cast<std::uint8_t const*>(data) + 2 * i, 2);
    return (u >> exponent_shift(T)) & (alphabet_size(T) - 1u);
  }
}

/// Writes the codes of `count` elements starting at `data` to `out` (zero padded to a word) and
/// the gap of every 128-bit window to `gaps`; returns the number of code bits.
template <dtype T>
std::uint32_t write_codes(void const* data, std::uint32_t count, std::uint32_t const* table, std::uint8_t* out,
                          std::uint8_t* gaps) noexcept {
  bit_writer w{out};
  std::uint64_t bitpos = 0, boundary = window_bits;
  std::uint8_t* g = gaps;
  *g++ = 0;
  auto one = [&](std::uint64_t i) {
    std::uint32_t const t = table[exponent_at<T>(data, i)];
    w.put(t);
    bitpos += t & 31u;
    if (bitpos >= boundary) { *g++ = static_cast<std::uint8_t>(bitpos - boundary); boundary += window_bits; }
  };
  std::uint32_t i = 0;
  for (; i + 2 <= count; i += 2) { one(i); one(i + 1); w.flush(); }
  if (i < count) { one(i); w.flush(); }
  // the last store wrote zeros after the final bit: word padding is already zero
  std::uint32_t const code_bits = static_cast<std::uint32_t>(bitpos);
  std::uint32_t const code_bytes = static_cast<std::uint32_t>(div_up(code_bits, 8));
  std::uint32_t const word_bytes = static_cast<std::uint32_t>(4 * div_up(code_bits, 32));
  for (std::uint32_t b = code_bytes; b < word_bytes; ++b) out[b] = 0;   // (count == 0 only)
  return code_bits;
}

/// Packs `n` 5-bit gap fields MSB first at `out`, zero padded to a word; returns the words.
inline std::uint32_t write_gaps(std::uint8_t const* gaps, std::uint32_t n, std::uint8_t* out) noexcept {
  bit_writer w{out};
  for (std::uint32_t j = 0; j < n; ++j) { w.put(std::uint32_t{gaps[j]} << 5 | gap_field_bits); w.flush(); }
  std::uint32_t const words = static_cast<std::uint32_t>(div_up(std::uint64_t{n} * gap_field_bits, 32));
  std::uint32_t const used = static_cast<std::uint32_t>(div_up(std::uint64_t{n} * gap_field_bits, 8));
  for (std::uint32_t b = used; b < 4 * words; ++b) out[b] = 0;
  return words;
}

/// Encodes one chunk into `out` (capacity: max_region_words * 4 + 8 bytes); returns bits[c].
template <dtype T>
std::uint32_t encode_chunk(void const* data, std::uint32_t count, std::uint32_t const* table,
                           std::uint32_t const* raw_table, std::uint8_t* out, std::uint8_t* gaps,
                           std::uint32_t& region_words) noexcept {
  unsigned const b = exponent_bits(T);
  std::uint32_t const code_bits = write_codes<T>(data, count, table, out, gaps);
  if (prefer_raw(code_bits, count, b)) {
    std::uint32_t const raw_bits = write_codes<T>(data, count, raw_table, out, gaps);
    region_words = raw_region_words(count, b);
    return raw_bits | raw_chunk_flag;
  }
  std::uint32_t const code_words = static_cast<std::uint32_t>(div_up(code_bits, 32));
  region_words = code_words + write_gaps(gaps, window_count(code_bits), out + 4 * code_words);
  return code_bits;
}

/// Splits elements [begin, begin + count) into the raw planes.
template <dtype T>
void split_raw(void const* data, std::uint64_t n, std::uint64_t begin, std::uint64_t count, std::uint8_t* raw) noexcept {
  raw_planes const p = planes_of(T, raw, n);
  if constexpr (T == dtype::bf16) {
    std::uint16_t const* x = static_cast<std::uint16_t const*>(data) + begin;
    std::uint8_t* r = p.p8 + begin;
    for (std::uint64_t i = 0; i < count; ++i) r[i] = raw_bf16(x[i]);
  } else if constexpr (T == dtype::fp16) {
    std::uint16_t const* x = static_cast<std::uint16_t const*>(data) + begin;
    std::uint8_t* r = p.p8 + begin;
    for (std::uint64_t i = 0; i < count; ++i) r[i] = static_cast<std::uint8_t>(x[i]);
    // begin is a multiple of 8 (chunk starts); the last group may be partial
    for (std::uint64_t g = 0; g < div_up(count, 8); ++g) {
      std::uint32_t v = 0;
      for (unsigned k = 0; k < 8 && 8 * g + k < count; ++k) v |= f3_fp16(x[8 * g + k]) << (3 * k);
      std::uint8_t* q = p.p3 + (begin / 8 + g) * 3;
      q[0] = static_cast<std::uint8_t>(v); q[1] = static_cast<std::uint8_t>(v >> 8); q[2] = static_cast<std::uint8_t>(v >> 16);
    }
  } else {
    std::uint32_t const* x = static_cast<std::uint32_t const*>(data) + begin;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint32_t const u = x[i];
      p.p16[2 * (begin + i)] = static_cast<std::uint8_t>(u);
      p.p16[2 * (begin + i) + 1] = static_cast<std::uint8_t>(u >> 8);
      p.p8[begin + i] = hi_fp32(u);
    }
  }
}

template <dtype T>
void encode_typed(void const* data, std::uint64_t n, codebook const* given, encoded_tensor& out,
                  encode_options const& opt, encode_scratch& s) {
  unsigned const lg = opt.chunk_log2;
  std::uint64_t const K = std::uint64_t{1} << lg;
  std::uint64_t const C = chunk_count(n, lg);
  unsigned const workers = worker_count(C, opt.max_threads, 4);
  unsigned const nk = alphabet_size(T);

  // pass 1: histogram (free statistics for refresh) and the modal exponent
  s.hists.assign(workers, histogram{});
  parallel_for(C, workers, [&](unsigned w, std::uint64_t c0, std::uint64_t c1) {
    std::uint64_t const b = c0 * K, e = std::min(n, c1 * K);
    if (e > b) accumulate_histogram(T, static_cast<std::uint8_t const*>(data) + b * element_bytes(T), e - b, s.hists[w]);
  });
  out.exponents = histogram{};
  for (auto const& h : s.hists) for (unsigned x = 0; x < 256; ++x) out.exponents[x] += h[x];
  out.type = T;
  out.count = n;
  out.chunk_log2 = lg;
  out.key_ref = modal_exponent(out.exponents, nk);
  out.book = given ? *given : codebook::build(T, key_histogram(out.exponents, out.key_ref, nk));

  std::uint32_t codes[257] = {};
  std::uint32_t table[256] = {}, raw_table[256] = {};
  canonical_codes(out.book.lengths(), codes);
  build_encode_table(out.book.lengths(), out.key_ref, codes, table);
  build_raw_table(exponent_bits(T), raw_table);

  // pass 2: raw planes and chunk regions, one contiguous range of chunks per worker
  out.raw.resize(raw_plane_bytes(T, n));
  out.bits.resize(C);
  s.sizes.resize(C);
  s.regions.resize(std::max<std::size_t>(s.regions.size(), workers));
  std::uint64_t const cap = 4ull * max_region_words(static_cast<std::uint32_t>(K), exponent_bits(T)) + 16;
  parallel_for(C, workers, [&](unsigned w, std::uint64_t c0, std::uint64_t c1) {
    auto& buf = s.regions[w];
    std::vector<std::uint8_t> gaps(window_count(static_cast<std::uint32_t>(K) * max_symbol_bits(exponent_bits(T))) + 2);
    std::size_t used = 0;
    for (std::uint64_t c = c0; c < c1; ++c) {
      if (buf.size() < used + cap) buf.resize(std::max<std::size_t>(used + cap, buf.size() * 3 / 2));
      std::uint32_t const cnt = chunk_elements(n, lg, c);
      void const* src = static_cast<std::uint8_t const*>(data) + c * K * element_bytes(T);
      split_raw<T>(data, n, c * K, cnt, out.raw.data());
      std::uint32_t words = 0;
      out.bits[c] = encode_chunk<T>(src, cnt, table, raw_table, buf.data() + used, gaps.data(), words);
      s.sizes[c] = words;
      used += 4ull * words;
    }
  });
  out.offsets.resize(C + 1);
  std::uint64_t off = 0;
  for (std::uint64_t c = 0; c < C; ++c) {
    out.offsets[c] = static_cast<std::uint32_t>(off);
    off += s.sizes[c];
    if (off > 0xFFFFFFFFull) RESILIN_LCT_THROW(invalid_argument("encode: tensor too large for 32-bit word offsets"));
  }
  out.offsets[C] = static_cast<std::uint32_t>(off);
  out.stream.resize(4 * off);
  parallel_for(C, workers, [&](unsigned w, std::uint64_t c0, std::uint64_t c1) {
    if (c1 > c0)
      std::memcpy(out.stream.data() + 4ull * out.offsets[c0], s.regions[w].data(),
                  4ull * (out.offsets[c1] - out.offsets[c0]));
  });
}

}  // namespace detail

/// Encodes n elements (their bit patterns, little endian) of type t into `out`, reusing its
/// buffers. With `book == nullptr` (or an empty book) a fresh book is built from this tensor's
/// histogram; otherwise `book` is used as is and out-of-book exponents escape.
inline void encode(dtype t, void const* data, std::uint64_t n, codebook const* book, encoded_tensor& out,
                   encode_options const& opt = {}, encode_scratch* scratch = nullptr) {
  if (!is_valid(t)) RESILIN_LCT_THROW(invalid_argument("encode: invalid dtype"));
  if (n > 0 && data == nullptr) RESILIN_LCT_THROW(invalid_argument("encode: null data with n > 0"));
  if (opt.chunk_log2 < min_chunk_log2 || opt.chunk_log2 > max_chunk_log2)
    RESILIN_LCT_THROW(invalid_argument("encode: chunk_log2 " + std::to_string(opt.chunk_log2) + " outside [" +
                                       std::to_string(min_chunk_log2) + ", " + std::to_string(max_chunk_log2) + "]"));
  if (book && !book->empty() && book->type() != t)
    RESILIN_LCT_THROW(invalid_argument("encode: codebook is for " + std::string(name(book->type())) + ", data is " +
                                       std::string(name(t))));
  if (book && book->empty()) book = nullptr;
  encode_scratch local;
  encode_scratch& s = scratch ? *scratch : local;
  switch (t) {
    case dtype::bf16: detail::encode_typed<dtype::bf16>(data, n, book, out, opt, s); break;
    case dtype::fp16: detail::encode_typed<dtype::fp16>(data, n, book, out, opt, s); break;
    case dtype::fp32: detail::encode_typed<dtype::fp32>(data, n, book, out, opt, s); break;
  }
}

/// Convenience: bf16 / fp16 bit patterns.
inline encoded_tensor encode(dtype t, std::span<std::uint16_t const> bits, codebook const* book = nullptr,
                             encode_options const& opt = {}) {
  if (t == dtype::fp32) RESILIN_LCT_THROW(invalid_argument("encode: fp32 data given as 16-bit words"));
  encoded_tensor out;
  encode(t, bits.data(), bits.size(), book, out, opt);
  return out;
}
/// Convenience: fp32 values (bit patterns are preserved exactly).
inline encoded_tensor encode(std::span<float const> values, codebook const* book = nullptr, encode_options const& opt = {}) {
  encoded_tensor out;
  encode(dtype::fp32, values.data(), values.size(), book, out, opt);
  return out;
}

}  // namespace resilin::lct

#pragma once
// Host encoder: histogram pass (modal exponent, refresh statistics), then chunks encoded in
// parallel: the codes of 16 elements (from a pair table indexed by two exponents gathered with
// PEXT where that is fast) or of 4 (from the per-exponent table) are combined off the critical
// path and appended to a 64-bit accumulator with one unaligned store, while the next chunk is
// prefetched; byte-identical to the CUDA encoder (tests/lct/test_stream.cpp checks the stream
// against a code-by-code reference writer).
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
  /// K = 2^chunk_log2 elements per chunk, in [min_chunk_log2, max_chunk_log2] = [10, 16]; the
  /// CUDA decoder takes chunks up to 2^13 (cuda_codec::max_device_chunk_log2, its shared memory)
  /// and refuses larger ones, so streams meant for a GPU keep the default 13 or less.
  unsigned chunk_log2 = default_chunk_log2;
};

/// Per-worker buffers kept between encodes (owned by compressed_tensor or the caller).
struct encode_scratch {
  std::vector<std::vector<std::uint8_t>> regions;   ///< workers 1.. (worker 0 writes the stream itself)
  std::vector<std::uint32_t> sizes;
  std::vector<histogram> hists;
  std::vector<std::uint32_t> pair_counts;   ///< per-worker pair-histogram tables
  std::vector<std::uint32_t> pair_codes;    ///< codes of exponent pairs (encoder fast path)
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

/// Host form of the encoder table, indexed by the element's bits above the exponent shift
/// (sign included, so no mask is needed): entry = code << 6 | length. With the length in the
/// low 6 bits an entry is itself a shift count, and entries can be summed to add lengths.
inline constexpr unsigned host_table_size = 512;
struct host_encode_table {
  std::uint32_t entry[host_table_size];
  unsigned max_len = 0;   ///< longest code of any exponent that occurs (selects the group size)
  /// Optional pair table indexed by e0 | e1 << exponent_bits (two adjacent elements' exponents,
  /// gathered with one PEXT): the two codes concatenated, code << 6 | length. Only the entries
  /// of exponents that occur are filled; set when max_len <= max_pair_code_length.
  std::uint32_t const* pairs = nullptr;
};
/// The pair path needs a fast PEXT and little-endian element order within a 64-bit load.
inline constexpr bool little_endian_pext = fast_pext && std::endian::native == std::endian::little;
inline constexpr unsigned max_pair_code_length = 13;   ///< 2 * 13 code bits + 6 length bits fit a uint32
inline constexpr std::uint64_t pair_table_min_elements = std::uint64_t{1} << 18;

/// Fills the pair entries of the exponents that occur; `pairs` holds 2^(2 * exponent_bits) entries.
template <dtype T>
void build_pair_table(host_encode_table& h, histogram const& present, std::uint32_t* pairs) noexcept {
  constexpr unsigned b = exponent_bits(T);
  unsigned const nk = alphabet_size(T);
  for (unsigned e1 = 0; e1 < nk; ++e1) {
    if (!present[e1]) continue;
    std::uint32_t const t1 = h.entry[e1];
    for (unsigned e0 = 0; e0 < nk; ++e0) {
      if (!present[e0]) continue;
      std::uint32_t const t0 = h.entry[e0];
      pairs[e0 | e1 << b] = ((t0 >> 6) << (t1 & 63u) | (t1 >> 6)) << 6 | ((t0 & 63u) + (t1 & 63u));
    }
  }
  h.pairs = pairs;
}

/// PEXT mask gathering the exponents of the two elements in the low 2 * element_bytes bytes.
template <dtype T>
constexpr std::uint64_t pair_mask() noexcept {
  constexpr unsigned bits = 8 * element_bytes(T);
  constexpr std::uint64_t one = ((std::uint64_t{1} << exponent_bits(T)) - 1u) << exponent_shift(T);
  return one | one << bits;
}

/// Converts a device-format table (code << 5 | length); `present[e]` marks exponents that occur.
template <dtype T>
void build_host_table(std::uint32_t const* table, histogram const& present, host_encode_table& h) noexcept {
  unsigned const nk = alphabet_size(T);
  h.max_len = 0;
  for (unsigned i = 0; i < host_table_size; ++i) {
    std::uint32_t const t = table[i & (nk - 1u)];
    h.entry[i] = (t >> 5) << 6 | (t & 31u);
  }
  for (unsigned e = 0; e < nk; ++e)
    if (present[e]) h.max_len = std::max(h.max_len, table[e] & 31u);
}

template <dtype T>
RESILIN_LCT_INLINE std::uint32_t table_index(void const* data, std::uint64_t i) noexcept {
  if constexpr (T == dtype::fp32) {
    std::uint32_t u; std::memcpy(&u, static_cast<std::uint8_t const*>(data) + 4 * i, 4);
    return u >> 23;
  } else {
    std::uint16_t u; std::memcpy(&u, static_cast<std::uint8_t const*>(data) + 2 * i, 2);
    return static_cast<std::uint32_t>(u >> exponent_shift(T));
  }
}

/// Table indices of elements [i, i + G): one 64-bit load per four 16-bit or two 32-bit elements.
template <dtype T, unsigned G>
RESILIN_LCT_INLINE void table_indices(void const* data, std::uint32_t i, std::uint32_t* idx) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr unsigned bits = 8 * element_bytes(T);
    constexpr unsigned shift = exponent_shift(T);
    constexpr std::uint64_t mask = (std::uint64_t{1} << (bits - shift)) - 1u;
    constexpr unsigned per_load = 64 / bits;
    static_assert(G % per_load == 0 || per_load % G == 0);
    std::uint8_t const* p = static_cast<std::uint8_t const*>(data) + std::uint64_t{i} * element_bytes(T);
    if constexpr (G >= per_load) {
      for (unsigned j = 0; j < G / per_load; ++j) {
        std::uint64_t x;
        std::memcpy(&x, p + 8 * j, 8);
        for (unsigned k = 0; k < per_load; ++k) {
          unsigned const at = bits * k + shift;
          if (at + (bits - shift) >= 64) {
            idx[j * per_load + k] = static_cast<std::uint32_t>(x >> at);
          } else {
#if RESILIN_LCT_HAS_BMI
            idx[j * per_load + k] = static_cast<std::uint32_t>(_bextr_u64(x, at, bits - shift));   // one op
#else
            idx[j * per_load + k] = static_cast<std::uint32_t>((x >> at) & mask);
#endif
          }
        }
      }
    } else {   // G = 2 elements of 16 bits
      std::uint32_t x;
      std::memcpy(&x, p, 4);
      idx[0] = (x >> shift) & static_cast<std::uint32_t>(mask);
      idx[1] = x >> (16 + shift);
    }
  } else {
    for (unsigned k = 0; k < G; ++k) idx[k] = table_index<T>(data, i + k);
  }
}

/// Offset from `boundary` of the first code of elements [i, i + min(G, avail)) that ends at or
/// after it, the codes starting at bit `before`. Branch free: which code crosses is data, not a
/// pattern (the ends increase, so the first is the least of those at or after the boundary).
template <dtype T, unsigned G>
RESILIN_LCT_INLINE std::uint8_t gap_in_group(void const* data, std::uint32_t i, std::uint32_t avail,
                                             std::uint32_t const* table, std::uint64_t before,
                                             std::uint64_t boundary) noexcept {
  std::uint32_t const n = avail < G ? avail : G;
  std::uint64_t e = before, first = ~std::uint64_t{0};
  for (std::uint32_t k = 0; k < n; ++k) {
    e += table[table_index<T>(data, i + k)] & 63u;
    first = std::min(first, e >= boundary ? e : ~std::uint64_t{0});
  }
  return static_cast<std::uint8_t>(first - boundary);
}

/// gap_in_group for the pair-table path: walks the group two codes at a time (one pair-table
/// entry each) and resolves the pair that reaches the boundary with one single-code length, so
/// a 16-code group costs a few lookups, not sixteen.
template <dtype T, unsigned G>
RESILIN_LCT_INLINE std::uint8_t gap_in_group_pairs(void const* data, std::uint32_t i, std::uint32_t avail,
                                                   std::uint32_t const* table, std::uint32_t const* pairs,
                                                   std::uint64_t before, std::uint64_t boundary) noexcept {
  std::uint32_t const n = avail < G ? avail : G;
  std::uint64_t pos = before;
  std::uint32_t k = 0;
#if RESILIN_LCT_HAS_BMI2
  std::uint8_t const* p = static_cast<std::uint8_t const*>(data) + std::uint64_t{i} * element_bytes(T);
  for (; k + 2 <= n; k += 2) {
    std::uint64_t x = 0;
    std::memcpy(&x, p + std::uint64_t{k} * element_bytes(T), 2 * element_bytes(T));
    std::uint64_t const end = pos + (pairs[_pext_u64(x, pair_mask<T>())] & 63u);
    if (end >= boundary) {
      std::uint64_t const mid = pos + (table[table_index<T>(data, i + k)] & 63u);
      return static_cast<std::uint8_t>((mid >= boundary ? mid : end) - boundary);
    }
    pos = end;
  }
#else
  (void)pairs;
#endif
  for (; k < n; ++k) {
    pos += table[table_index<T>(data, i + k)] & 63u;
    if (pos >= boundary) break;
  }
  return static_cast<std::uint8_t>(pos - boundary);
}

/// The group of codes that starts last in a window (so crosses into the next one), per window:
/// bit position where the group starts << 32 | its first element (one store per group).
using group_mark = std::uint64_t;

/// Writes the codes of `count` elements starting at `data` to `out` (zero padded to a word) and
/// the gap of every 128-bit window to `gaps`; returns the number of code bits. Without Pairs, G
/// (2 or 4) codes are combined off the critical path and appended with one shift, so
/// G * max_len + 7 must fit in 64 bits. Every group ends with an 8-byte store at out + bitpos / 8 holding the bits not yet
/// in whole bytes at its top: the bit_writer's layout with its byte pointer and pending count
/// derived from bitpos. Gaps: a group spans at most one window boundary (at most 4 * 20 bits,
/// or 57 bits, < 128), so the last group starting in window j is the one that crosses into
/// window j + 1; recording every group at marks[start / 128] (overwriting) finds those without
/// a data-dependent branch, and their gaps are worked out after the loop. `marks` holds
/// window_count(count * 20) + 1 entries.
/// With Pairs (G = 16), codes come from the pair table two at a time (codes <= 13 bits), and the
/// 16 codes of a step are appended at once when they fit 57 bits (the usual case for weights,
/// about 2.6 bits a code: a branch almost never taken the other way), else as four groups of 4.
/// `ahead` (valid for `count` elements) is fetched into the cache meanwhile: the next chunk, so
/// that its first pass does not wait on memory while this loop, which is bound by its
/// instructions, leaves the memory idle.
template <dtype T, unsigned G, bool Pairs = false>
std::uint32_t write_codes(void const* data, std::uint32_t count, std::uint32_t const* table, std::uint8_t* out,
                          std::uint8_t* gaps, group_mark* marks, std::uint32_t const* pairs,
                          std::uint8_t const* ahead) noexcept {
  static_assert(Pairs ? G == 16 : (G == 2 || G == 4));
  static_assert(window_bits == 128);
  (void)pairs;   // only read by the PEXT path
  std::uint64_t acc = 0, bitpos = 0;
  auto append = [&](std::uint64_t code, unsigned len) {   // len <= 57
    std::uint64_t const before = bitpos;
    bitpos += len;
    acc = (acc << len) | code;
    unsigned const pending = static_cast<unsigned>(before & 7u) + len;   // 1 .. 64
    store_be64(out + (before >> 3), acc << ((64 - pending) & 63u));
  };
  auto append_group = [&](std::uint64_t code, unsigned len, std::uint32_t first) {
    marks[bitpos >> 7] = bitpos << 32 | first;
    append(code, len);
  };
  std::uint32_t i = 0;
  std::uint32_t const groups_end = count - count % G;
  for (; i < groups_end; i += G) {
    if constexpr (Pairs) {
#if RESILIN_LCT_HAS_BMI2
      // four codes (<= 52 bits) from two pair-table entries: code << 6 | length each
      auto quad = [&](std::uint8_t const* p, std::uint64_t& code) -> std::uint32_t {
        std::uint64_t x, y;
        std::memcpy(&x, p, 8);
        if constexpr (element_bytes(T) == 4) std::memcpy(&y, p + 8, 8); else y = x >> 32;
        std::uint32_t const p01 = pairs[_pext_u64(x, pair_mask<T>())];
        std::uint32_t const p23 = pairs[_pext_u64(y, pair_mask<T>())];
        code = (std::uint64_t{p01 >> 6} << (p23 & 63u)) | (p23 >> 6);
        return (p01 + p23) & 63u;
      };
      std::uint8_t const* p = static_cast<std::uint8_t const*>(data) + std::uint64_t{i} * element_bytes(T);
      std::uint64_t c[4];
      std::uint32_t l[4];
      for (unsigned q = 0; q < 4; ++q) l[q] = quad(p + 4 * q * element_bytes(T), c[q]);
      std::uint32_t const l23 = l[2] + l[3], total = l[0] + l[1] + l23;
      if (total <= 57) [[likely]] {
        // shifts masked: only here are the sums known to be < 64
        std::uint64_t const c01 = (c[0] << (l[1] & 63u)) | c[1];
        std::uint64_t const c23 = (c[2] << (l[3] & 63u)) | c[3];
        append_group((c01 << (l23 & 63u)) | c23, total, i);
      } else {
        for (unsigned q = 0; q < 4; ++q) append_group(c[q], l[q], i + 4 * q);
      }
#endif
    } else {
      std::uint64_t code;
      std::uint32_t sum;   // low 6 bits: total length (no carry: G * 20 < 64)
      std::uint32_t t[G];
      table_indices<T, G>(data, i, t);
      for (unsigned k = 0; k < G; ++k) t[k] = table[t[k]];
      if constexpr (G == 4) {
        std::uint64_t const c01 = (std::uint64_t{t[0] >> 6} << (t[1] & 63u)) | (t[1] >> 6);
        std::uint64_t const c23 = (std::uint64_t{t[2] >> 6} << (t[3] & 63u)) | (t[3] >> 6);
        std::uint32_t const s23 = t[2] + t[3];
        code = (c01 << (s23 & 63u)) | c23;
        sum = t[0] + t[1] + s23;
      } else {
        code = (std::uint64_t{t[0] >> 6} << (t[1] & 63u)) | (t[1] >> 6);
        sum = t[0] + t[1];
      }
      append_group(code, sum & 63u, i);
    }
    if ((i * element_bytes(T)) % 64 == 0) prefetch(ahead + std::uint64_t{i} * element_bytes(T));   // once a line
  }
  std::uint8_t* g = gaps;
  *g++ = 0;
  std::uint64_t const crossed = bitpos >> 7;
  for (std::uint64_t j = 0; j < crossed; ++j) {
    std::uint32_t const first = static_cast<std::uint32_t>(marks[j]);
    if constexpr (Pairs)
      *g++ = gap_in_group_pairs<T, G>(data, first, count - first, table, pairs, marks[j] >> 32, window_bits * (j + 1));
    else
      *g++ = gap_in_group<T, G>(data, first, count - first, table, marks[j] >> 32, window_bits * (j + 1));
  }
  std::uint64_t boundary = window_bits * (crossed + 1);
  for (; i < count; ++i) {
    std::uint32_t const t = table[table_index<T>(data, i)];
    append(t >> 6, t & 63u);
    if (bitpos >= boundary) { *g++ = static_cast<std::uint8_t>(bitpos - boundary); boundary += window_bits; }
  }
  // the last store zeroed the rest of the final byte; the word padding may lie beyond it
  std::uint32_t const code_bits = static_cast<std::uint32_t>(bitpos);
  std::uint32_t const code_bytes = static_cast<std::uint32_t>(div_up(code_bits, 8));
  std::uint32_t const word_bytes = static_cast<std::uint32_t>(4 * div_up(code_bits, 32));
  for (std::uint32_t b = code_bytes; b < word_bytes; ++b) out[b] = 0;
  return code_bits;
}

template <dtype T>
std::uint32_t write_codes(void const* data, std::uint32_t count, host_encode_table const& table, std::uint8_t* out,
                          std::uint8_t* gaps, group_mark* marks, std::uint8_t const* ahead) noexcept {
  if constexpr (little_endian_pext)
    if (table.pairs) return write_codes<T, 16, true>(data, count, table.entry, out, gaps, marks, table.pairs, ahead);
  return 4 * table.max_len + 7 <= 64 ? write_codes<T, 4>(data, count, table.entry, out, gaps, marks, nullptr, ahead)
                                     : write_codes<T, 2>(data, count, table.entry, out, gaps, marks, nullptr, ahead);
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
std::uint32_t encode_chunk(void const* data, std::uint32_t count, host_encode_table const& table,
                           host_encode_table const& raw_table, std::uint8_t* out, std::uint8_t* gaps, group_mark* marks,
                           std::uint32_t& region_words, std::uint8_t const* ahead) noexcept {
  unsigned const b = exponent_bits(T);
  std::uint32_t const code_bits = write_codes<T>(data, count, table, out, gaps, marks, ahead);
  if (prefer_raw(code_bits, count, b)) {
    std::uint32_t const raw_bits = write_codes<T>(data, count, raw_table, out, gaps, marks, ahead);
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
  constexpr bool pairs_ok = fast_pext && T != dtype::fp16;
  bool const use_pairs = pairs_ok && n / workers >= pair_histogram_min_elements;
  if (use_pairs) s.pair_counts.resize(workers * pair_table_entries);
  parallel_for(C, workers, [&](unsigned w, std::uint64_t c0, std::uint64_t c1) {
    std::uint64_t const b = c0 * K, e = std::min(n, c1 * K);
    void const* src = static_cast<std::uint8_t const*>(data) + b * element_bytes(T);
    if (e <= b) return;
    if (use_pairs) {
      accumulate_histogram_pairs(T, src, e - b, s.hists[w], s.pair_counts.data() + w * pair_table_entries);
    } else {
      accumulate_histogram(T, src, e - b, s.hists[w]);
    }
  });
  out.exponents = histogram{};
  for (auto const& h : s.hists) for (unsigned x = 0; x < 256; ++x) out.exponents[x] += h[x];
  out.type = T;
  out.count = n;
  out.shape.clear();  // a reused object's shape was the previous tensor's
  out.chunk_log2 = lg;
  out.key_ref = modal_exponent(out.exponents, nk);
  out.book = given ? *given : codebook::build(T, key_histogram(out.exponents, out.key_ref, nk));

  std::uint32_t codes[257] = {};
  std::uint32_t table[256] = {}, raw_table[256] = {};
  canonical_codes(out.book.lengths(), codes);
  build_encode_table(out.book.lengths(), out.key_ref, codes, table);
  build_raw_table(exponent_bits(T), raw_table);
  host_encode_table host, host_raw;
  build_host_table<T>(table, out.exponents, host);
  build_host_table<T>(raw_table, out.exponents, host_raw);
  if (little_endian_pext && host.max_len <= max_pair_code_length && n >= pair_table_min_elements) {
    s.pair_codes.resize(std::size_t{1} << (2 * exponent_bits(T)));
    build_pair_table<T>(host, out.exponents, s.pair_codes.data());
  }

  // pass 2: raw planes and chunk regions, one contiguous range of chunks per worker. Worker 0's
  // range starts the stream, so it writes there directly; the others are copied after it.
  out.raw.resize(raw_plane_bytes(T, n));
  out.bits.resize(C);
  s.sizes.resize(C);
  s.regions.resize(std::max<std::size_t>(s.regions.size(), workers));
  std::uint64_t const cap = 4ull * max_region_words(static_cast<std::uint32_t>(K), exponent_bits(T)) + 16;
  parallel_for(C, workers, [&](unsigned w, std::uint64_t c0, std::uint64_t c1) {
    auto& buf = w == 0 ? out.stream : s.regions[w];
    std::size_t const windows = window_count(static_cast<std::uint32_t>(K) * max_symbol_bits(exponent_bits(T))) + 2;
    std::vector<std::uint8_t> gaps(windows);
    std::vector<group_mark> marks(windows);
    std::size_t used = 0;
    for (std::uint64_t c = c0; c < c1; ++c) {
      if (buf.size() < used + cap) buf.resize(used + cap);   // kept between encodes: rarely grows
      std::uint32_t const cnt = chunk_elements(n, lg, c);
      void const* src = static_cast<std::uint8_t const*>(data) + c * K * element_bytes(T);
      split_raw<T>(data, n, c * K, cnt, out.raw.data());
      std::uint32_t words = 0;
      // the next chunk (when it is as long as this one) is fetched while this one is coded
      std::uint8_t const* ahead = static_cast<std::uint8_t const*>(src);
      if (c + 1 < c1 && chunk_elements(n, lg, c + 1) == cnt) ahead += cnt * element_bytes(T);
      out.bits[c] = encode_chunk<T>(src, cnt, host, host_raw, buf.data() + used, gaps.data(), marks.data(), words, ahead);
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
    if (w > 0 && c1 > c0)
      std::memcpy(out.stream.data() + 4ull * out.offsets[c0], s.regions[w].data(),
                  4ull * (out.offsets[c1] - out.offsets[c0]));
  });
}

}  // namespace detail

/// Encodes n elements (their bit patterns, little endian; data aligned to the element size) of
/// type t into `out`, reusing its buffers. With `book == nullptr` (or an empty book) a fresh book is built from this tensor's
/// histogram; otherwise `book` is used as is and out-of-book exponents escape. A refusal of the
/// arguments (dtype, data, alignment, chunk_log2, the book's dtype) leaves `out` as it was; a
/// failure while encoding (out of memory, a tensor too large) leaves it empty (count 0, no book),
/// never half written.
inline void encode(dtype t, void const* data, std::uint64_t n, codebook const* book, encoded_tensor& out,
                   encode_options const& opt = {}, encode_scratch* scratch = nullptr) {
  if (!is_valid(t)) RESILIN_LCT_THROW(invalid_argument(invalid_dtype_message("encode", t)));
  if (n > 0 && data == nullptr) RESILIN_LCT_THROW(invalid_argument("encode: null data with n > 0"));
  if (n > 0 && !is_aligned_for(t, data))
    RESILIN_LCT_THROW(invalid_argument("encode: data is not aligned to its element size (" +
                                       std::to_string(element_bytes(t)) + " bytes)"));
  if (opt.chunk_log2 < min_chunk_log2 || opt.chunk_log2 > max_chunk_log2)
    RESILIN_LCT_THROW(invalid_argument("encode: chunk_log2 " + std::to_string(opt.chunk_log2) + " outside [" +
                                       std::to_string(min_chunk_log2) + ", " + std::to_string(max_chunk_log2) + "]"));
  if (book && !book->empty() && book->type() != t)
    RESILIN_LCT_THROW(invalid_argument("encode: codebook is for " + std::string(name(book->type())) + ", data is " +
                                       std::string(name(t))));
  if (book && book->empty()) book = nullptr;
  encode_scratch local;
  encode_scratch& s = scratch ? *scratch : local;
  auto const run = [&] {
    switch (t) {
      case dtype::bf16: detail::encode_typed<dtype::bf16>(data, n, book, out, opt, s); break;
      case dtype::fp16: detail::encode_typed<dtype::fp16>(data, n, book, out, opt, s); break;
      case dtype::fp32: detail::encode_typed<dtype::fp32>(data, n, book, out, opt, s); break;
    }
  };
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    run();
  } catch (...) {
    // out was partly rewritten (count and book of the new tensor, planes or stream of the old
    // one): left as it is, to_container() wrote a checksummed container that the decoder then
    // refused as corrupt. It is left empty instead, as a default-constructed one.
    out = encoded_tensor{};
    out.type = t;
    throw;
  }
#else
  run();
#endif
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

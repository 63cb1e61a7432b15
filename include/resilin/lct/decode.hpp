#pragma once
// Host decoder: a 4096-entry multi-symbol LUT (up to 3 symbols per lookup), four chunks decoded
// in lock-step per worker (huff0-style interleaved streams, 4 lookups per 64-bit refill), then a
// merge pass with the raw planes.
// Every chunk must end exactly at its recorded bit count, or decoding is refused.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <resilin/lct/bytes.hpp>
#include <resilin/lct/codebook.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/encoded.hpp>
#include <resilin/lct/error.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/parallel.hpp>
#include <resilin/lct/tables.hpp>

namespace resilin::lct {

struct decode_options {
  unsigned max_threads = 0;   ///< 0: std::thread::hardware_concurrency()
};

namespace detail {

struct decode_tables {
  std::uint16_t lut[lut_size];
  std::uint32_t multi[lut_size];
};

/// 32 bits of the stream starting at bit `pos`; bytes past the end read as zero.
inline std::uint32_t peek32(std::uint8_t const* s, std::uint64_t size, std::uint64_t pos) noexcept {
  std::uint64_t const byte = pos >> 3;
  std::uint64_t w;
  if (byte + 8 <= size) {
    w = load_be64(s + byte);
  } else {
    w = 0;
    for (unsigned k = 0; k < 8; ++k) w = (w << 8) | (byte + k < size ? s[byte + k] : 0u);
  }
  return static_cast<std::uint32_t>((w << (pos & 7)) >> 32);
}

/// One chunk being decoded: bit position in the stream, its end, symbols left, output cursor.
struct cursor {
  std::uint64_t pos;
  std::uint64_t end;
  std::uint32_t left;
  std::uint8_t* out;
};

/// Bounds- and escape-aware decode of one symbol.
inline void decode_one(cursor& c, std::uint8_t const* s, std::uint64_t size, std::uint16_t const* lut,
                       unsigned exp_bits) noexcept {
  std::uint32_t const w = peek32(s, size, c.pos);
  std::uint16_t const e = lut[w >> (32 - lut_bits)];
  unsigned l = lut_length(e);
  std::uint8_t sym;
  if (e & lut_escape) {
    sym = static_cast<std::uint8_t>((w >> (32 - l - exp_bits)) & ((1u << exp_bits) - 1u));
    l += exp_bits;
  } else {
    sym = static_cast<std::uint8_t>(lut_symbol(e));
  }
  *c.out++ = sym;
  c.pos += l;
  --c.left;
}

/// Multi-symbol LUT entry (huff0 "X2"-style, up to 3 symbols per 12-bit lookup): bits 0..5 bits
/// consumed, bits 6..7 symbols emitted, bits 8..31 the symbols (first in bits 8..15). An entry
/// whose first code is the escape emits and consumes nothing, so a stalled lookup is the only
/// sign of an escape the fast loop has to test.
RESILIN_LCT_INLINE unsigned multi_bits(std::uint32_t e) noexcept { return e & 63u; }
RESILIN_LCT_INLINE unsigned multi_count(std::uint32_t e) noexcept { return (e >> 6) & 3u; }

/// Fills multi[w] from the single-symbol LUT: the longest run of at most 3 whole non-escape codes
/// at the start of the 12-bit window w. A second code read with zero fill past the window is
/// genuine whenever it ends inside the window (prefix-freeness), which is all that is accepted.
inline void build_multi_lut(std::uint16_t const* lut, std::uint32_t* multi) noexcept {
  for (std::uint32_t w = 0; w < lut_size; ++w) {
    std::uint32_t syms = 0;
    unsigned used = 0, n = 0;
    while (n < 3) {
      std::uint16_t const e = lut[(w << used) & (lut_size - 1u)];
      unsigned const l = lut_length(e);
      if ((e & lut_escape) || l == 0 || used + l > lut_bits) break;
      syms |= std::uint32_t{lut_symbol(e)} << (8 * n);
      used += l;
      ++n;
    }
    multi[w] = syms << 8 | n << 6 | used;
  }
}

/// Bytes of output slack after each chunk's exponent buffer (the fast loop stores 4 bytes per
/// lookup; the byte after the last symbol is scratch).
inline constexpr std::uint32_t exponent_slack = 16;

/// Escape (or invalid code) met by the fast loop: one careful symbol, by value so that the fast
/// loop's cursors stay in registers.
struct stream_state {
  std::uint64_t pos;
  std::uint8_t* out;
};
RESILIN_LCT_NOINLINE inline stream_state decode_escape(stream_state st, std::uint8_t const* s, std::uint64_t size,
                                                       std::uint16_t const* lut, unsigned exp_bits) noexcept {
  cursor c{st.pos, 0, 1, st.out};
  decode_one(c, s, size, lut, exp_bits);
  return {c.pos, c.out};
}

/// Fast step of one stream: 4 lookups (<= 48 bits of a 64-bit load) emit up to 12 symbols.
/// The caller guarantees 12 symbols left and 8 readable bytes at the cursor.
RESILIN_LCT_INLINE void decode_multi(stream_state& st, std::uint8_t const* s, std::uint64_t size,
                                     std::uint16_t const* lut, std::uint32_t const* multi, unsigned exp_bits) noexcept {
  std::uint64_t w = load_be64(s + (st.pos >> 3)) << (st.pos & 7);
  std::uint32_t const e0 = multi[w >> 52]; w <<= multi_bits(e0);
  std::uint32_t const e1 = multi[w >> 52]; w <<= multi_bits(e1);
  std::uint32_t const e2 = multi[w >> 52]; w <<= multi_bits(e2);
  std::uint32_t const e3 = multi[w >> 52];
  std::uint8_t* o = st.out;
  auto put = [&o](std::uint32_t e) {
    std::uint32_t const v = e >> 8;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(o, &v, 4);
    } else {
      for (int k = 0; k < 3; ++k) o[k] = static_cast<std::uint8_t>(v >> (8 * k));
    }
    o += multi_count(e);
  };
  put(e0); put(e1); put(e2); put(e3);
  st.out = o;
  st.pos += (e0 + e1 + e2 + e3) & 63u;   // the low fields cannot carry: 4 * 12 < 64
  // an escape stalls every later lookup, so it shows in the last one: decode it carefully
  if (multi_count(e3) == 0) [[unlikely]] st = decode_escape(st, s, size, lut, exp_bits);
}

/// Symbols a fast step may emit, and so the least a cursor must have left to take one.
inline constexpr std::uint32_t fast_step_symbols = 12;

RESILIN_LCT_INLINE bool fast_ok(cursor const& c, std::uint64_t size) noexcept {
  return c.left >= fast_step_symbols && (c.pos >> 3) + 8 <= size;
}

/// The four streams in lock-step while each has a fast step left (huff0-style interleaving: four
/// independent dependency chains). Cursors live in locals; limits are checked once per round.
inline void decode_four_streams(cursor* cur, std::uint8_t const* s, std::uint64_t size, std::uint16_t const* lut,
                                std::uint32_t const* multi, unsigned exp_bits) noexcept {
  if (size < 8) return;
  std::uint64_t const pos_limit = (size - 8) * 8 + 7;   // (pos >> 3) + 8 <= size
  stream_state st[4];
  std::uint8_t* out_limit[4];
  for (int k = 0; k < 4; ++k) {
    st[k] = {cur[k].pos, cur[k].out};
    out_limit[k] = cur[k].left >= fast_step_symbols ? cur[k].out + (cur[k].left - fast_step_symbols) : nullptr;
  }
  if (out_limit[0] && out_limit[1] && out_limit[2] && out_limit[3]) {
    while (st[0].out <= out_limit[0] && st[1].out <= out_limit[1] && st[2].out <= out_limit[2] &&
           st[3].out <= out_limit[3] && st[0].pos <= pos_limit && st[1].pos <= pos_limit && st[2].pos <= pos_limit &&
           st[3].pos <= pos_limit) {
      decode_multi(st[0], s, size, lut, multi, exp_bits);
      decode_multi(st[1], s, size, lut, multi, exp_bits);
      decode_multi(st[2], s, size, lut, multi, exp_bits);
      decode_multi(st[3], s, size, lut, multi, exp_bits);
    }
  }
  for (int k = 0; k < 4; ++k) {
    cur[k].left -= static_cast<std::uint32_t>(st[k].out - cur[k].out);
    cur[k].pos = st[k].pos;
    cur[k].out = st[k].out;
  }
}

/// One stream alone (chunk groups of fewer than 4, and the ends of the interleaved ones).
inline void decode_stream(cursor& c, std::uint8_t const* s, std::uint64_t size, std::uint16_t const* lut,
                          std::uint32_t const* multi, unsigned exp_bits) noexcept {
  while (fast_ok(c, size)) {
    stream_state st{c.pos, c.out};
    decode_multi(st, s, size, lut, multi, exp_bits);
    c.left -= static_cast<std::uint32_t>(st.out - c.out);
    c.pos = st.pos;
    c.out = st.out;
  }
  while (c.left) decode_one(c, s, size, lut, exp_bits);
}

/// Decodes the exponents of `nc` (1..4) chunks into out[k] (lock-step for 4 coded chunks).
inline void decode_exponents(stream_view const& v, std::uint16_t const* lut, std::uint32_t const* multi,
                             std::uint64_t c0, unsigned nc, std::uint8_t* const* out) {
  std::uint8_t const* s = v.stream.data();
  std::uint64_t const size = v.stream.size();
  unsigned const b = exponent_bits(v.type);
  cursor cur[4];
  bool coded[4] = {};
  for (unsigned k = 0; k < nc; ++k) {
    std::uint64_t const c = c0 + k;
    std::uint32_t const bits = v.bits[c] & ~raw_chunk_flag;
    cur[k] = {std::uint64_t{v.offsets[c]} * 32, std::uint64_t{v.offsets[c]} * 32 + bits,
              chunk_elements(v.count, v.chunk_log2, c), out[k]};
    coded[k] = (v.bits[c] & raw_chunk_flag) == 0;
    if (!coded[k]) {   // fixed-width exponents
      for (std::uint32_t i = 0; i < cur[k].left; ++i)
        out[k][i] = static_cast<std::uint8_t>(peek32(s, size, cur[k].pos + std::uint64_t{i} * b) >> (32 - b));
      cur[k].pos += std::uint64_t{cur[k].left} * b;
      cur[k].left = 0;
    }
  }
  if (nc == 4 && coded[0] && coded[1] && coded[2] && coded[3]) decode_four_streams(cur, s, size, lut, multi, b);
  for (unsigned k = 0; k < nc; ++k)
    if (coded[k]) decode_stream(cur[k], s, size, lut, multi, b);
  for (unsigned k = 0; k < nc; ++k)
    if (cur[k].pos != cur[k].end)
      RESILIN_LCT_THROW(format_error(errc::corrupt, "chunk " + std::to_string(c0 + k) + ": decoding ended at bit " +
                                                        std::to_string(cur[k].pos - std::uint64_t{v.offsets[c0 + k]} * 32) +
                                                        ", the chunk table says " +
                                                        std::to_string(cur[k].end - std::uint64_t{v.offsets[c0 + k]} * 32)));
}

/// out[begin + i] = merge(e[i], raw fields) for one chunk.
inline void merge_chunk(stream_view const& v, std::uint64_t begin, std::uint32_t count, std::uint8_t const* e,
                        void* out) noexcept {
  raw_planes const p = planes_of(v.type, const_cast<std::uint8_t*>(v.raw.data()), v.count);
  switch (v.type) {
    case dtype::bf16: {
      std::uint16_t* o = static_cast<std::uint16_t*>(out) + begin;
      std::uint8_t const* r = p.p8 + begin;
      for (std::uint32_t i = 0; i < count; ++i) o[i] = merge_bf16(e[i], r[i]);
      break;
    }
    case dtype::fp16: {
      std::uint16_t* o = static_cast<std::uint16_t*>(out) + begin;
      std::uint8_t const* r = p.p8 + begin;
      std::uint8_t const* q = p.p3 + begin / 8 * 3;
      for (std::uint32_t i = 0; i < count; ++i) {
        std::uint8_t const* g = q + (i / 8) * 3;
        std::uint32_t const f = (g[0] | (std::uint32_t{g[1]} << 8) | (std::uint32_t{g[2]} << 16)) >> (3 * (i % 8));
        o[i] = merge_fp16(e[i], r[i], f & 7u);
      }
      break;
    }
    case dtype::fp32: {
      std::uint32_t* o = static_cast<std::uint32_t*>(out) + begin;
      std::uint8_t const* lo = p.p16 + 2 * begin;
      std::uint8_t const* hi = p.p8 + begin;
      for (std::uint32_t i = 0; i < count; ++i)
        o[i] = merge_fp32(e[i], static_cast<std::uint16_t>(lo[2 * i] | (lo[2 * i + 1] << 8)), hi[i]);
      break;
    }
  }
}

/// Structural checks of a view (sizes of every section), for `what` (decode, to_container);
/// the container parser does more.
inline void check_view(stream_view const& v, std::string const& what = "decode") {
  if (!is_valid(v.type)) RESILIN_LCT_THROW(invalid_argument(invalid_dtype_message(what, v.type)));
  if (v.book == nullptr || v.book->empty() || v.book->type() != v.type)
    RESILIN_LCT_THROW(invalid_argument(what + ": missing codebook or codebook of another dtype"));
  if (!is_complete_book(v.book->lengths(), alphabet_size(v.type)))
    RESILIN_LCT_THROW(invalid_argument(what + ": the codebook is not complete (its Kraft sum is not 1)"));
  if (v.chunk_log2 < min_chunk_log2 || v.chunk_log2 > max_chunk_log2)
    RESILIN_LCT_THROW(invalid_argument(what + ": chunk_log2 " + std::to_string(v.chunk_log2)));
  if (v.key_ref >= alphabet_size(v.type))
    RESILIN_LCT_THROW(invalid_argument(what + ": key_ref " + std::to_string(v.key_ref) + " outside the alphabet"));
  std::uint64_t const C = chunk_count(v.count, v.chunk_log2);
  auto const section = [&](char const* name, std::uint64_t got, std::uint64_t want) {
    if (got != want)
      RESILIN_LCT_THROW(invalid_argument(what + ": " + name + " has " + std::to_string(got) + ", expected " +
                                         std::to_string(want) + " for " + std::to_string(v.count) + " elements"));
  };
  section("the raw plane (bytes)", v.raw.size(), raw_plane_bytes(v.type, v.count));
  section("the chunk offsets (entries)", v.offsets.size(), C + 1);
  section("the chunk bit counts (entries)", v.bits.size(), C);
  section("the first chunk offset", v.offsets[0], 0);
  section("the exponent stream (bytes)", v.stream.size(), 4ull * v.offsets[C]);
  for (std::uint64_t c = 0; c < C; ++c) {
    std::uint32_t const cnt = chunk_elements(v.count, v.chunk_log2, c);
    std::uint32_t const bits = v.bits[c] & ~raw_chunk_flag;
    if (v.offsets[c + 1] < v.offsets[c])
      RESILIN_LCT_THROW(format_error(errc::corrupt, "chunk " + std::to_string(c) + ": offsets decrease"));
    std::uint32_t const words = v.offsets[c + 1] - v.offsets[c];
    if (!chunk_layout_ok(v.bits[c], words, cnt, exponent_bits(v.type)))
      RESILIN_LCT_THROW(format_error(errc::corrupt, "chunk " + std::to_string(c) + ": bit count " +
                                                        std::to_string(bits) + " / region of " + std::to_string(words) +
                                                        " words inconsistent with " + std::to_string(cnt) + " elements"));
  }
}

}  // namespace detail

/// Decodes into `out`, which must hold count * element_bytes(type) bytes, aligned to the element
/// size, and must not overlap the encoded sections (no in-place decompression: refused).
inline void decode(stream_view const& v, void* out, std::uint64_t out_bytes, decode_options const& opt = {}) {
  detail::check_view(v);
  std::uint64_t const need = v.count * element_bytes(v.type);
  if (out_bytes < need)
    RESILIN_LCT_THROW(invalid_argument("decode: output buffer of " + std::to_string(out_bytes) + " bytes, need " +
                                       std::to_string(need)));
  if (v.count == 0) return;
  if (out == nullptr) RESILIN_LCT_THROW(invalid_argument("decode: null output"));
  if (!is_aligned_for(v.type, out))
    RESILIN_LCT_THROW(invalid_argument("decode: output is not aligned to its element size (" +
                                       std::to_string(element_bytes(v.type)) + " bytes)"));
  // out is written while the sections are read: a container decoded into its own buffer came
  // back with 71 % of its bytes wrong, and no error
  char const* const overlapped = overlaps(out, need, v.raw.data(), v.raw.size_bytes())           ? "raw plane"
                                 : overlaps(out, need, v.stream.data(), v.stream.size_bytes())   ? "exponent stream"
                                 : overlaps(out, need, v.offsets.data(), v.offsets.size_bytes()) ? "chunk offsets"
                                 : overlaps(out, need, v.bits.data(), v.bits.size_bytes())       ? "chunk bit counts"
                                                                                                 : nullptr;
  if (overlapped)
    RESILIN_LCT_THROW(invalid_argument(std::string("decode: the output overlaps the encoded ") + overlapped +
                                       ", which is read while the output is written: decode into a separate buffer"));
  auto tables = std::make_unique<detail::decode_tables>();
  std::uint32_t codes[257] = {};
  canonical_codes(v.book->lengths(), codes);
  build_decode_lut(v.book->lengths(), v.key_ref, codes, tables->lut);
  detail::build_multi_lut(tables->lut, tables->multi);
  std::uint64_t const C = chunk_count(v.count, v.chunk_log2);
  std::uint64_t const groups = div_up(C, 4);
  std::uint64_t const K = std::uint64_t{1} << v.chunk_log2;
  unsigned const workers = detail::worker_count(groups, opt.max_threads, 2);
  detail::parallel_for(groups, workers, [&](unsigned, std::uint64_t g0, std::uint64_t g1) {
    std::uint64_t const stride = K + detail::exponent_slack;
    std::vector<std::uint8_t> exps(4 * stride);
    for (std::uint64_t g = g0; g < g1; ++g) {
      std::uint64_t const c0 = 4 * g;
      unsigned const nc = static_cast<unsigned>(std::min<std::uint64_t>(4, C - c0));
      std::uint8_t* e[4] = {exps.data(), exps.data() + stride, exps.data() + 2 * stride, exps.data() + 3 * stride};
      detail::decode_exponents(v, tables->lut, tables->multi, c0, nc, e);
      for (unsigned k = 0; k < nc; ++k)
        detail::merge_chunk(v, (c0 + k) * K, chunk_elements(v.count, v.chunk_log2, c0 + k), e[k], out);
    }
  });
}

}  // namespace resilin::lct

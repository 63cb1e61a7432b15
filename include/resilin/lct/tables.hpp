#pragma once
// Canonical code assignment, the encoder table and the single-level decode LUT, over plain
// arrays so that the host codec and the CUDA kernels build bit-identical tables.
//
// Symbols are keys 0 .. 2^b - 1 (key = (exponent - key_ref) mod 2^b) plus ESC = 2^b.
#include <cstdint>

#include <resilin/lct/config.hpp>
#include <resilin/lct/format.hpp>

namespace resilin::lct {

/// Code lengths of a book in the form the kernels take by value.
struct code_lengths {
  std::uint8_t len[257] = {};   ///< len[key] (0 = not in book), len[n_keys] = escape
  std::uint16_t n_keys = 0;     ///< 2^exponent_bits
  std::uint8_t exp_bits = 0;
};

/// Decode LUT entry: bits 0..5 code length, bit 6 escape, bits 8..15 exponent. (A shift by the
/// whole low byte masked to 6 bits consumes the code: the escape flag does not disturb it.)
inline constexpr std::uint16_t lut_escape = 0x40u;
RESILIN_LCT_HD constexpr unsigned lut_length(std::uint16_t e) noexcept { return e & 63u; }
RESILIN_LCT_HD constexpr unsigned lut_symbol(std::uint16_t e) noexcept { return e >> 8; }
inline constexpr unsigned lut_size = 1u << lut_bits;

/// Canonical codes: sorted by (length, symbol), ESC last among equal lengths.
RESILIN_LCT_HD inline void canonical_codes(code_lengths const& cl, std::uint32_t* codes) noexcept {
  unsigned const n_sym = cl.n_keys + 1u;
  std::uint32_t code = 0;
  for (unsigned l = 1; l <= max_code_length; ++l) {
    for (unsigned s = 0; s < n_sym; ++s) {
      if (cl.len[s] == l) codes[s] = code++;
    }
    code <<= 1;
  }
}

/// Encoder table indexed by the raw exponent: entry = code << 5 | length (length <= 20).
/// Out-of-book exponents get the escape code followed by the raw exponent.
RESILIN_LCT_HD inline void build_encode_table(code_lengths const& cl, unsigned key_ref,
                                              std::uint32_t const* codes, std::uint32_t* table) noexcept {
  unsigned const mask = cl.n_keys - 1u;
  unsigned const esc = cl.n_keys;
  for (unsigned e = 0; e < cl.n_keys; ++e) {
    unsigned const key = (e - key_ref) & mask;
    if (cl.len[key] != 0) {
      table[e] = codes[key] << 5 | cl.len[key];
    } else {
      table[e] = ((codes[esc] << cl.exp_bits) | e) << 5 | (cl.len[esc] + cl.exp_bits);
    }
  }
}

/// Fixed-width table used for raw chunks: every exponent is written as exp_bits bits.
RESILIN_LCT_HD inline void build_raw_table(unsigned exp_bits, std::uint32_t* table) noexcept {
  for (unsigned e = 0; e < (1u << exp_bits); ++e) table[e] = e << 5 | exp_bits;
}

/// The Kraft sum of a book's codes (keys and escape) in units of 2^-max_code_length; a complete
/// prefix code sums to exactly 2^max_code_length. Lengths must be <= max_code_length.
constexpr std::uint64_t kraft_sum(code_lengths const& cl) noexcept {
  std::uint64_t kraft = 0;
  for (unsigned s = 0; s <= cl.n_keys; ++s)
    if (cl.len[s]) kraft += std::uint64_t{1} << (max_code_length - cl.len[s]);
  return kraft;
}

/// Whether a book is one the LUT decoder can use for keys of `n_keys` symbols: n_keys as given,
/// lengths <= max_code_length, an escape code, and a complete prefix code (every LUT entry filled).
constexpr bool is_complete_book(code_lengths const& cl, unsigned n_keys) noexcept {
  if (cl.n_keys != n_keys || n_keys > 256 || cl.len[n_keys] == 0) return false;
  for (unsigned s = 0; s <= n_keys; ++s)
    if (cl.len[s] > max_code_length) return false;
  return kraft_sum(cl) == (std::uint64_t{1} << max_code_length);
}

/// Fills the 2^12-entry decode LUT; the book must be complete (is_complete_book).
RESILIN_LCT_HD inline void build_decode_lut(code_lengths const& cl, unsigned key_ref,
                                            std::uint32_t const* codes, std::uint16_t* lut) noexcept {
  unsigned const n_sym = cl.n_keys + 1u;
  unsigned const mask = cl.n_keys - 1u;
  for (unsigned s = 0; s < n_sym; ++s) {
    unsigned const l = cl.len[s];
    if (l == 0) continue;
    std::uint16_t const entry = static_cast<std::uint16_t>(
        s == cl.n_keys ? (lut_escape | l) : ((((s + key_ref) & mask) << 8) | l));
    std::uint32_t const first = codes[s] << (lut_bits - l);
    std::uint32_t const count = 1u << (lut_bits - l);
    for (std::uint32_t i = 0; i < count; ++i) lut[first + i] = entry;
  }
}

}  // namespace resilin::lct

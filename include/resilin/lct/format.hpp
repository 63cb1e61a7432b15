#pragma once
// Layout constants and size arithmetic of the chunked exponent stream (spec/lct.md §3.5),
// shared by the host codec, the container and the CUDA kernels.
//
//  * The tensor is cut into chunks of K = 2^chunk_log2 elements (the last may be shorter).
//  * Chunk c owns a 32-bit-word-aligned region of the code stream starting at word offsets[c].
//    Bits are MSB first: bit i of the stream is bit (7 - i % 8) of byte i / 8.
//  * A coded chunk's region = its code bits (padded with zeros to a word) followed by the gap
//    plane: one 5-bit field per W = 128-bit window of the code bits, MSB first, padded to a
//    word. gap[j] = offset from bit j*W of the first code that starts at or after j*W.
//  * bits[c] = number of code bits; the top bit flags a raw chunk whose region holds the
//    exponents as fixed-width fields (no gaps). The encoder picks raw whenever it is not
//    larger than the coded region, so no chunk ever grows beyond its raw size.
#include <cstdint>

#include <resilin/lct/config.hpp>

namespace resilin::lct {

inline constexpr unsigned max_code_length = 12;   ///< Huffman length limit L (LUT = 2^L entries)
inline constexpr unsigned lut_bits = 12;          ///< decode LUT index width
inline constexpr unsigned window_bits = 128;      ///< W: bits per decoder-thread window
inline constexpr unsigned gap_field_bits = 5;     ///< width of one gap field
inline constexpr unsigned default_chunk_log2 = 13;  ///< K = 8192
inline constexpr unsigned min_chunk_log2 = 10;
inline constexpr unsigned max_chunk_log2 = 16;
inline constexpr std::uint32_t raw_chunk_flag = 0x80000000u;

RESILIN_LCT_HD constexpr std::uint64_t div_up(std::uint64_t a, std::uint64_t b) noexcept {
  return (a + b - 1) / b;
}
RESILIN_LCT_HD constexpr std::uint64_t chunk_count(std::uint64_t n, unsigned chunk_log2) noexcept {
  return div_up(n, std::uint64_t{1} << chunk_log2);
}
/// Elements in chunk c.
RESILIN_LCT_HD constexpr std::uint32_t chunk_elements(std::uint64_t n, unsigned chunk_log2,
                                                      std::uint64_t c) noexcept {
  std::uint64_t const k = std::uint64_t{1} << chunk_log2;
  std::uint64_t const begin = c * k;
  return static_cast<std::uint32_t>(n - begin < k ? n - begin : k);
}
RESILIN_LCT_HD constexpr std::uint32_t window_count(std::uint32_t code_bits) noexcept {
  return static_cast<std::uint32_t>(div_up(code_bits, window_bits));
}
/// Words of a coded chunk region holding code_bits bits of codes.
RESILIN_LCT_HD constexpr std::uint32_t coded_region_words(std::uint32_t code_bits) noexcept {
  return static_cast<std::uint32_t>(div_up(code_bits, 32) +
                                    div_up(std::uint64_t{window_count(code_bits)} * gap_field_bits, 32));
}
/// Words of a raw chunk region of `count` exponents of `exp_bits` bits.
RESILIN_LCT_HD constexpr std::uint32_t raw_region_words(std::uint32_t count, unsigned exp_bits) noexcept {
  return static_cast<std::uint32_t>(div_up(std::uint64_t{count} * exp_bits, 32));
}
/// The encoder's choice, identical on host and device: raw when coding does not shrink the chunk.
RESILIN_LCT_HD constexpr bool prefer_raw(std::uint32_t code_bits, std::uint32_t count,
                                         unsigned exp_bits) noexcept {
  return coded_region_words(code_bits) >= raw_region_words(count, exp_bits);
}
/// Longest code of one symbol (an escape code plus its raw exponent).
RESILIN_LCT_HD constexpr unsigned max_symbol_bits(unsigned exp_bits) noexcept {
  return max_code_length + exp_bits;
}
/// Upper bound of the region words of any chunk of `count` elements (used to size scratch).
RESILIN_LCT_HD constexpr std::uint32_t max_region_words(std::uint32_t count, unsigned exp_bits) noexcept {
  return coded_region_words(count * max_symbol_bits(exp_bits));
}

/// Whether a chunk's table entries agree: its bits field (the raw flag and the bit count) and a
/// region of `words` words for `count` elements of exp_bits-bit exponents. Both decoders refuse
/// a chunk that does not (the device decoder decoded such chunks as they came, wrongly).
RESILIN_LCT_HD constexpr bool chunk_layout_ok(std::uint32_t bits_field, std::uint32_t words, std::uint32_t count,
                                              unsigned exp_bits) noexcept {
  std::uint32_t const bits = bits_field & ~raw_chunk_flag;
  if (bits_field & raw_chunk_flag) return bits == count * exp_bits && words == raw_region_words(count, exp_bits);
  return bits >= count && bits <= count * max_symbol_bits(exp_bits) && words == coded_region_words(bits);
}

}  // namespace resilin::lct

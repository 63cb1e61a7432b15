#pragma once
// Element types and their split into a coded exponent and raw, byte-aligned sign|mantissa planes.
//
//   bf16: exponent = bits 7..14 (8 bits); raw plane p8[i] = sign << 7 | mantissa(7)
//   fp16: exponent = bits 10..14 (5 bits); p8[i] = mantissa bits 0..7, then a plane of 3-bit
//         fields (sign << 2 | mantissa bits 8..9), 8 elements per 3 bytes, LSB first
//   fp32: exponent = bits 23..30 (8 bits); p16[i] = mantissa bits 0..15 (little endian), then
//         p8[i] = sign << 7 | mantissa bits 16..22
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <resilin/lct/config.hpp>

namespace resilin::lct {

enum class dtype : std::uint8_t { bf16 = 1, fp16 = 2, fp32 = 3 };

RESILIN_LCT_HD constexpr bool is_valid(dtype t) noexcept {
  return t == dtype::bf16 || t == dtype::fp16 || t == dtype::fp32;
}
/// Bytes per element.
RESILIN_LCT_HD constexpr unsigned element_bytes(dtype t) noexcept { return t == dtype::fp32 ? 4u : 2u; }
/// Whether p is aligned to `bytes`; and whether it may hold elements of type t: aligned to the
/// element size, as any bf16, fp16 or fp32 array is (the codecs load whole elements).
inline bool is_aligned_to(void const* p, std::size_t bytes) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}
inline bool is_aligned_for(dtype t, void const* p) noexcept { return is_aligned_to(p, element_bytes(t)); }
/// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (an empty or null
/// range shares none). Addresses only: host or device memory alike.
inline bool overlaps(void const* a, std::uint64_t a_bytes, void const* b, std::uint64_t b_bytes) noexcept {
  if (a == nullptr || b == nullptr || a_bytes == 0 || b_bytes == 0) return false;
  auto const pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}
/// Width of the coded exponent field (the symbol alphabet is 2^exponent_bits).
RESILIN_LCT_HD constexpr unsigned exponent_bits(dtype t) noexcept { return t == dtype::fp16 ? 5u : 8u; }
RESILIN_LCT_HD constexpr unsigned exponent_shift(dtype t) noexcept {
  return t == dtype::bf16 ? 7u : (t == dtype::fp16 ? 10u : 23u);
}
RESILIN_LCT_HD constexpr unsigned alphabet_size(dtype t) noexcept { return 1u << exponent_bits(t); }

/// Size in bytes of the raw sign|mantissa planes of n elements.
RESILIN_LCT_HD constexpr std::uint64_t raw_plane_bytes(dtype t, std::uint64_t n) noexcept {
  switch (t) {
    case dtype::bf16: return n;
    case dtype::fp16: return n + (n + 7) / 8 * 3;
    case dtype::fp32: return 3 * n;
  }
  return 0;
}

constexpr std::string_view name(dtype t) noexcept {
  switch (t) {
    case dtype::bf16: return "bf16";
    case dtype::fp16: return "fp16";
    case dtype::fp32: return "fp32";
  }
  return "?";
}

/// "WHAT: invalid dtype N" (host messages name the value, as every refusal does).
inline std::string invalid_dtype_message(std::string_view what, dtype t) {
  return std::string(what) + ": invalid dtype " + std::to_string(static_cast<unsigned>(t)) + " (bf16 = 1, fp16 = 2, fp32 = 3)";
}

/// Parses "bf16", "fp16", "fp32"; returns false on anything else.
constexpr bool parse_dtype(std::string_view s, dtype& out) noexcept {
  if (s == "bf16") { out = dtype::bf16; return true; }
  if (s == "fp16") { out = dtype::fp16; return true; }
  if (s == "fp32") { out = dtype::fp32; return true; }
  return false;
}

/// Exponent field of one element given as its bit pattern (u16 for bf16/fp16, u32 for fp32).
RESILIN_LCT_HD constexpr unsigned exponent_of(dtype t, std::uint32_t bits) noexcept {
  return (bits >> exponent_shift(t)) & (alphabet_size(t) - 1u);
}

/// Views of the raw planes of a tensor of n elements laid out in one byte buffer.
struct raw_planes {
  std::uint8_t* p8 = nullptr;    // bf16/fp16/fp32: n bytes
  std::uint8_t* p16 = nullptr;   // fp32: 2n bytes (little-endian u16)
  std::uint8_t* p3 = nullptr;    // fp16: (n+7)/8*3 bytes
};

RESILIN_LCT_HD inline raw_planes planes_of(dtype t, std::uint8_t* base, std::uint64_t n) noexcept {
  raw_planes p;
  switch (t) {
    case dtype::bf16: p.p8 = base; break;
    case dtype::fp16: p.p8 = base; p.p3 = base + n; break;
    case dtype::fp32: p.p16 = base; p.p8 = base + 2 * n; break;
  }
  return p;
}

/// Reassembles an element from its exponent and raw fields (the inverse of the split).
RESILIN_LCT_HD constexpr std::uint16_t merge_bf16(unsigned e, std::uint8_t r) noexcept {
  return static_cast<std::uint16_t>(((r & 0x80u) << 8) | (e << 7) | (r & 0x7Fu));
}
RESILIN_LCT_HD constexpr std::uint16_t merge_fp16(unsigned e, std::uint8_t lo, unsigned f3) noexcept {
  return static_cast<std::uint16_t>(((f3 >> 2) << 15) | (e << 10) | ((f3 & 3u) << 8) | lo);
}
RESILIN_LCT_HD constexpr std::uint32_t merge_fp32(unsigned e, std::uint16_t lo, std::uint8_t hi) noexcept {
  return (static_cast<std::uint32_t>(hi & 0x80u) << 24) | (static_cast<std::uint32_t>(e) << 23) |
         (static_cast<std::uint32_t>(hi & 0x7Fu) << 16) | lo;
}
RESILIN_LCT_HD constexpr std::uint8_t raw_bf16(std::uint16_t u) noexcept {
  return static_cast<std::uint8_t>(((u >> 8) & 0x80u) | (u & 0x7Fu));
}
RESILIN_LCT_HD constexpr unsigned f3_fp16(std::uint16_t u) noexcept {
  return ((u >> 15) << 2) | ((u >> 8) & 3u);
}
RESILIN_LCT_HD constexpr std::uint8_t hi_fp32(std::uint32_t u) noexcept {
  return static_cast<std::uint8_t>(((u >> 24) & 0x80u) | ((u >> 16) & 0x7Fu));
}

}  // namespace resilin::lct

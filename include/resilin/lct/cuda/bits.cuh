#pragma once
#if !defined(__CUDACC__) && !defined(RESILIN_CUDA_EMULATION)
#  error "resilin/lct/cuda/*.cuh need a CUDA compiler; include resilin/lct/lct.hpp for host code"
#endif
// Device bit-stream helpers: the stream is stored as bytes MSB first; words are read as
// little-endian u32 and byte-swapped so that bit 31 is the first bit.
#include <cstdint>

namespace resilin::lct::detail {

__device__ __forceinline__ std::uint32_t bswap32(std::uint32_t x) { return __byte_perm(x, 0, 0x0123); }

/// 32 bits starting at bit `pos`; words at or past `n_words` read as zero.
__device__ __forceinline__ std::uint32_t peek32(std::uint32_t const* s, std::uint64_t n_words, std::uint64_t pos) {
  std::uint64_t const i = pos >> 5;
  unsigned const sh = static_cast<unsigned>(pos & 31u);
  std::uint32_t const hi = i < n_words ? bswap32(__ldg(s + i)) : 0u;
  std::uint32_t const lo = i + 1 < n_words ? bswap32(__ldg(s + i + 1)) : 0u;
  return sh ? (hi << sh) | (lo >> (32u - sh)) : hi;
}

/// ORs a field of `len` <= 32 bits (value right-aligned) at bit `pos` of shared words whose
/// bit 31 is the first bit.
__device__ __forceinline__ void or_bits(std::uint32_t* words, std::uint32_t pos, std::uint32_t value, unsigned len) {
  if (len == 0) return;
  unsigned const w = pos >> 5, sh = pos & 31u;
  std::uint64_t const v = static_cast<std::uint64_t>(value) << (64u - len - sh);   // left-align in 64 bits
  atomicOr(words + w, static_cast<std::uint32_t>(v >> 32));
  if (static_cast<std::uint32_t>(v) != 0u) atomicOr(words + w + 1, static_cast<std::uint32_t>(v));
}

}  // namespace resilin::lct::detail

#pragma once
// The in-memory form of a compressed tensor (owning) and a non-owning view the decoders take.
#include <cstdint>
#include <span>
#include <vector>

#include <resilin/lct/codebook.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/histogram.hpp>

namespace resilin::lct {

/// Non-owning view of an encoded tensor: raw planes, chunk table and code stream.
struct stream_view {
  dtype type = dtype::bf16;
  std::uint64_t count = 0;                 ///< elements
  unsigned chunk_log2 = default_chunk_log2;
  unsigned key_ref = 0;                    ///< modal exponent the keys are relative to
  codebook const* book = nullptr;
  std::span<std::uint8_t const> raw;       ///< raw_plane_bytes(type, count)
  std::span<std::uint32_t const> offsets;  ///< chunk_count + 1 word offsets
  std::span<std::uint32_t const> bits;     ///< chunk_count code-bit counts (| raw_chunk_flag)
  std::span<std::uint8_t const> stream;    ///< 4 * offsets.back() bytes
};

/// Owning encoded tensor. Reusing one object across encodes reuses its buffers.
struct encoded_tensor {
  dtype type = dtype::bf16;
  std::uint64_t count = 0;
  std::vector<std::uint64_t> shape;        ///< optional, set after encode() (which clears it); empty means {count}
  unsigned chunk_log2 = default_chunk_log2;
  unsigned key_ref = 0;
  codebook book;
  std::vector<std::uint8_t> raw;
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> bits;
  std::vector<std::uint8_t> stream;
  histogram exponents{};                   ///< exponent histogram of the last encode

  [[nodiscard]] stream_view view() const noexcept {
    return {type, count, chunk_log2, key_ref, &book, raw, offsets, bits, stream};
  }
  /// Bytes of the payload (planes + chunk table + stream), without container header.
  [[nodiscard]] std::uint64_t payload_bytes() const noexcept {
    return raw.size() + 4 * (offsets.size() + bits.size()) + stream.size();
  }
  [[nodiscard]] std::uint64_t original_bytes() const noexcept { return count * element_bytes(type); }
  [[nodiscard]] std::uint64_t escapes() const noexcept {
    std::uint64_t e = 0;
    if (book.empty()) return 0;
    unsigned const nk = alphabet_size(type);
    for (unsigned x = 0; x < nk; ++x)
      if (book.length((x - key_ref) & (nk - 1)) == 0) e += exponents[x];
    return e;
  }
};

}  // namespace resilin::lct

#pragma once
// The safe container for files and transfers. Little-endian layout:
//
//   magic "RSLNLCT\0" | u16 version | u8 dtype | u8 chunk_log2 | u8 key_ref | u8 rank | u16 0
//   u64 count | u64 dims[rank] | codebook body | u64 stream_words
//   u32 offsets[C + 1] | u32 bits[C] | raw planes | code stream | u64 XXH64(all previous bytes)
//
// parse() checks every field and offset (and the checksum) before anything is decoded, and
// refuses the input with a format_error naming the field; it allocates O(C) only after the
// total size implied by the header has been matched against the input size.
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <vector>

#include <resilin/lct/bytes.hpp>
#include <resilin/lct/codebook.hpp>
#include <resilin/lct/decode.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/encoded.hpp>
#include <resilin/lct/error.hpp>
#include <resilin/lct/format.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace resilin::lct {

inline constexpr std::uint8_t container_magic[8] = {'R', 'S', 'L', 'N', 'L', 'C', 'T', 0};
inline constexpr std::uint16_t container_version = 1;
inline constexpr unsigned max_rank = 8;

/// Exact size of to_container(t) in bytes.
inline std::uint64_t container_size(encoded_tensor const& t) noexcept {
  std::uint64_t const rank = t.shape.empty() ? 1 : t.shape.size();
  return 24 + 8 * rank + (5 + alphabet_size(t.type) / 2) + 8 + t.payload_bytes() + 8;
}

namespace detail {
/// "{3, 7}" (for messages).
inline std::string shape_text(std::vector<std::uint64_t> const& dims) {
  std::string text = "{";
  for (std::size_t k = 0; k < dims.size(); ++k) text += (k ? ", " : "") + std::to_string(dims[k]);
  return text + "}";
}

/// Whether the dimensions multiply to count: 0 if any dimension is 0 (the others may be
/// anything), else the exact product, which must not overflow 64 bits. The writer and the
/// reader apply this one rule, so every container written parses.
inline bool shape_multiplies_to(std::vector<std::uint64_t> const& dims, std::uint64_t count) noexcept {
  for (auto d : dims)
    if (d == 0) return count == 0;
  std::uint64_t prod = 1;
  for (auto d : dims) {
    if (prod > UINT64_MAX / d) return false;
    prod *= d;
  }
  return prod == count;
}
}  // namespace detail

/// Serialises an encoded tensor (shape defaults to {count}). Refuses a tensor that
/// parse_container would refuse: no codebook (nothing encoded), sections whose sizes do not
/// match the count, a shape that does not multiply to count (invalid_argument); inconsistent
/// chunk regions (format_error, as the decoder reports them).
inline std::vector<std::uint8_t> to_container(encoded_tensor const& t) {
  detail::check_view(t.view(), "to_container");
  std::vector<std::uint64_t> shape = t.shape.empty() ? std::vector<std::uint64_t>{t.count} : t.shape;
  if (shape.size() > max_rank) RESILIN_LCT_THROW(invalid_argument("to_container: rank " + std::to_string(shape.size()) + " > 8"));
  if (!detail::shape_multiplies_to(shape, t.count))
    RESILIN_LCT_THROW(invalid_argument("to_container: shape " + detail::shape_text(shape) +
                                       " does not multiply to the element count " + std::to_string(t.count)));
  std::vector<std::uint8_t> out;
  out.reserve(64 + t.payload_bytes() + 8 * shape.size() + 200);
  for (std::uint8_t m : container_magic) out.push_back(m);
  detail::put_le<std::uint16_t>(out, container_version);
  out.push_back(static_cast<std::uint8_t>(t.type));
  out.push_back(static_cast<std::uint8_t>(t.chunk_log2));
  out.push_back(static_cast<std::uint8_t>(t.key_ref));
  out.push_back(static_cast<std::uint8_t>(shape.size()));
  detail::put_le<std::uint16_t>(out, 0);
  detail::put_le<std::uint64_t>(out, t.count);
  for (auto d : shape) detail::put_le<std::uint64_t>(out, d);
  t.book.write_body(out);
  detail::put_le<std::uint64_t>(out, t.offsets.empty() ? 0 : t.offsets.back());
  for (auto o : t.offsets) detail::put_le<std::uint32_t>(out, o);
  for (auto b : t.bits) detail::put_le<std::uint32_t>(out, b);
  out.insert(out.end(), t.raw.begin(), t.raw.end());
  out.insert(out.end(), t.stream.begin(), t.stream.end());
  detail::put_le<std::uint64_t>(out, XXH64(out.data(), out.size(), 0));
  return out;
}

/// A parsed, validated container; raw planes and stream point into the input buffer, which the
/// container keeps alive itself when it was parsed from a temporary vector (`storage`, shared
/// by copies).
struct container {
  dtype type = dtype::bf16;
  std::uint64_t count = 0;
  std::vector<std::uint64_t> shape;
  unsigned chunk_log2 = default_chunk_log2;
  unsigned key_ref = 0;
  codebook book;
  std::vector<std::uint32_t> offsets, bits;
  std::span<std::uint8_t const> raw, stream;
  std::shared_ptr<std::vector<std::uint8_t> const> storage;  ///< the bytes of an rvalue input, or null

  [[nodiscard]] stream_view view() const noexcept {
    return {type, count, chunk_log2, key_ref, &book, raw, offsets, bits, stream};
  }
};

struct parse_options {
  bool verify_checksum = true;   ///< off only for tests/fuzzing of the structural checks
};

inline container parse_container(std::span<std::uint8_t const> in, parse_options const& opt = {});

/// parse_container of a temporary vector (parse_container(to_container(e))): the container
/// takes the bytes over, so its sections stay valid (they dangled: a decode read freed memory).
inline container parse_container(std::vector<std::uint8_t>&& in, parse_options const& opt = {}) {
  auto bytes = std::make_shared<std::vector<std::uint8_t> const>(std::move(in));
  container c = parse_container(std::span<std::uint8_t const>(*bytes), opt);
  c.storage = std::move(bytes);
  return c;
}

/// Other temporaries whose bytes would die with the call are refused at compile time: keep them
/// in a named object, or decode at once with decode_container.
template <class R>
  requires(std::ranges::contiguous_range<R> && !std::ranges::borrowed_range<R> &&
           !std::same_as<R, std::vector<std::uint8_t>>)  // a const vector's bytes cannot move
container parse_container(R&&, parse_options const& = {}) = delete;

inline container parse_container(std::span<std::uint8_t const> in, parse_options const& opt) {
  auto fail = [](errc e, std::string const& m) { RESILIN_LCT_THROW(format_error(e, "container: " + m)); };
  detail::reader r(in);
  auto magic = r.bytes(8, "magic");
  for (int i = 0; i < 8; ++i) if (magic[i] != container_magic[i]) fail(errc::bad_magic, "magic is not RSLNLCT");
  auto const version = r.get<std::uint16_t>("version");
  if (version != container_version) fail(errc::unsupported_version, "version " + std::to_string(version) + ", expected 1");
  container c;
  auto const t = r.get<std::uint8_t>("dtype");
  c.type = static_cast<dtype>(t);
  if (!is_valid(c.type)) fail(errc::corrupt, "dtype " + std::to_string(t));
  c.chunk_log2 = r.get<std::uint8_t>("chunk_log2");
  if (c.chunk_log2 < min_chunk_log2 || c.chunk_log2 > max_chunk_log2) fail(errc::corrupt, "chunk_log2 " + std::to_string(c.chunk_log2));
  c.key_ref = r.get<std::uint8_t>("key_ref");
  if (c.key_ref >= alphabet_size(c.type)) fail(errc::corrupt, "key_ref " + std::to_string(c.key_ref));
  unsigned const rank = r.get<std::uint8_t>("rank");
  if (rank > max_rank) fail(errc::corrupt, "rank " + std::to_string(rank));
  if (r.get<std::uint16_t>("reserved") != 0) fail(errc::corrupt, "reserved field is not zero");
  c.count = r.get<std::uint64_t>("count");
  // every element costs at least one raw byte: an input smaller than the count is cut short
  if (c.count > in.size())
    fail(errc::truncated, "input of " + std::to_string(in.size()) + " bytes is too short for count " + std::to_string(c.count));
  for (unsigned i = 0; i < rank; ++i) c.shape.push_back(r.get<std::uint64_t>("dims"));
  if (!detail::shape_multiplies_to(c.shape, c.count))  // rank 0: the empty product, 1
    fail(errc::corrupt, "shape does not multiply to count " + std::to_string(c.count));
  c.book = codebook::read_body(c.type, r);
  std::uint64_t const words = r.get<std::uint64_t>("stream_words");
  std::uint64_t const C = chunk_count(c.count, c.chunk_log2);
  std::uint64_t const raw_bytes = raw_plane_bytes(c.type, c.count);
  // all remaining sizes are bounded by the input size, so this sum cannot overflow
  if (words > in.size())
    fail(errc::truncated, "input of " + std::to_string(in.size()) + " bytes is too short for stream_words " + std::to_string(words));
  std::uint64_t const need = 4 * (C + 1) + 4 * C + raw_bytes + 4 * words + 8;
  if (need != r.remaining())
    fail(need > r.remaining() ? errc::truncated : errc::corrupt,
         "sections need " + std::to_string(need) + " bytes after the header, " + std::to_string(r.remaining()) + " present");
  if (opt.verify_checksum) {
    std::uint64_t const stored = detail::get_le<std::uint64_t>(in.data() + in.size() - 8);
    if (stored != XXH64(in.data(), in.size() - 8, 0)) fail(errc::checksum_mismatch, "XXH64 does not match");
  }
  c.offsets.resize(C + 1);
  c.bits.resize(C);
  for (auto& o : c.offsets) o = r.get<std::uint32_t>("offsets");
  for (auto& b : c.bits) b = r.get<std::uint32_t>("bits");
  c.raw = r.bytes(raw_bytes, "raw planes");
  c.stream = r.bytes(4 * words, "code stream");
  if (c.offsets[0] != 0 || c.offsets[C] != words) fail(errc::corrupt, "chunk offsets do not span the code stream");
  detail::check_view(c.view());
  // gap fields drive the GPU decoder: every one must be below the longest symbol
  unsigned const maxsym = max_symbol_bits(exponent_bits(c.type));
  for (std::uint64_t k = 0; k < C; ++k) {
    if (c.bits[k] & raw_chunk_flag) continue;
    std::uint64_t const base = std::uint64_t{c.offsets[k]} * 32 + div_up(c.bits[k], 32) * 32;
    for (std::uint32_t j = 0; j < window_count(c.bits[k]); ++j) {
      unsigned const g = detail::peek32(c.stream.data(), c.stream.size(), base + std::uint64_t{j} * gap_field_bits) >> 27;
      if (g >= maxsym || (j == 0 && g != 0))
        fail(errc::corrupt, "chunk " + std::to_string(k) + ": gap " + std::to_string(j) + " = " + std::to_string(g));
    }
  }
  return c;
}

/// What a container holds: its element type and count.
struct container_contents {
  dtype type = dtype::bf16;
  std::uint64_t count = 0;
};

/// Parses and decodes into `out` (at least count * element_bytes bytes) whatever the container
/// holds, and returns its type and count: the caller checks them (a buffer meant for 2000 bf16
/// values also takes 1000 fp32 ones, or 10 bf16 ones and the rest left as it was). The typed
/// form below refuses a container of another type or count.
inline container_contents decode_container(std::span<std::uint8_t const> in, void* out, std::uint64_t out_bytes,
                                           decode_options const& opt = {}, parse_options const& popt = {}) {
  container const c = parse_container(in, popt);
  decode(c.view(), out, out_bytes, opt);
  return {c.type, c.count};
}

/// Parses and decodes a container that must hold `count` values of type `expected` into `out`
/// (count * element_bytes(expected) bytes); throws invalid_argument naming both when it holds
/// another type or count.
inline void decode_container(std::span<std::uint8_t const> in, dtype expected, std::uint64_t count, void* out,
                             decode_options const& opt = {}, parse_options const& popt = {}) {
  container const c = parse_container(in, popt);
  if (c.type != expected || c.count != count)
    RESILIN_LCT_THROW(invalid_argument("decode_container: the container holds " + std::to_string(c.count) + " " +
                                       std::string(name(c.type)) + " values, expected " + std::to_string(count) +
                                       " " + std::string(name(expected))));
  decode(c.view(), out, count * element_bytes(expected), opt);
}

}  // namespace resilin::lct

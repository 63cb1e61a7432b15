#pragma once
// Little-endian field I/O with a bounds-checked reader, and big-endian loads for bit streams.
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <resilin/lct/error.hpp>

namespace resilin::lct::detail {

inline std::uint64_t load_be64(std::uint8_t const* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}
inline void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

/// Asks for the cache line holding `p` (a hint: never faults, whatever the address).
inline void prefetch(void const* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}
/// The cache line `prefetch_distance` bytes past `p`, in a sequential pass: one core's hardware
/// prefetcher alone left the histogram pass waiting on memory (bench/results, lct). Integer
/// arithmetic, as the address may lie past the end of the buffer.
inline constexpr std::uintptr_t prefetch_distance = 2048;
inline void prefetch_ahead(void const* p) noexcept {
  prefetch(reinterpret_cast<void const*>(reinterpret_cast<std::uintptr_t>(p) + prefetch_distance));
}

template <class T>
void put_le(std::vector<std::uint8_t>& out, T v) {
  for (unsigned i = 0; i < sizeof(T); ++i) out.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i)));
}

template <class T>
T get_le(std::uint8_t const* p) noexcept {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return static_cast<T>(v);
}

/// Sequential reader that refuses to read past the end, naming the field it wanted.
class reader {
 public:
  explicit reader(std::span<std::uint8_t const> s) noexcept : s_(s) {}
  template <class T>
  T get(char const* field) {
    need(sizeof(T), field);
    T v = get_le<T>(s_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::span<std::uint8_t const> bytes(std::uint64_t n, char const* field) {
    need(n, field);
    auto r = s_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return r;
  }
  void need(std::uint64_t n, char const* field) const {
    if (n > s_.size() - pos_)
      RESILIN_LCT_THROW(format_error(errc::truncated, std::string(field) + " needs " + std::to_string(n) +
                                                          " bytes at offset " + std::to_string(pos_) + ", " +
                                                          std::to_string(s_.size() - pos_) + " left"));
  }
  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return s_.size() - pos_; }

 private:
  std::span<std::uint8_t const> s_;
  std::size_t pos_ = 0;
};

}  // namespace resilin::lct::detail

#pragma once
// Shared helpers of the lct tests: data generators and a round-trip checker.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <resilin/lct/lct.hpp>

namespace lct_test {

namespace lct = resilin::lct;

inline std::uint16_t bf16_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/// bf16 bit patterns of N(0, sigma) weights.
inline std::vector<std::uint16_t> gaussian_bf16(std::size_t n, float sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.0f, sigma);
  std::vector<std::uint16_t> x(n);
  for (auto& v : x) v = bf16_of(nd(rng));
  return x;
}

/// Raw little-endian element bytes of random bit patterns.
inline std::vector<std::uint8_t> random_bytes(std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> x(bytes);
  for (auto& b : x) b = static_cast<std::uint8_t>(rng());
  return x;
}

/// Encodes, serialises, parses and decodes; returns true when the bytes come back identical.
inline bool round_trip(lct::dtype t, std::vector<std::uint8_t> const& bytes, lct::codebook const* book = nullptr,
                       lct::encode_options eo = {}, lct::decode_options dopt = {}) {
  std::uint64_t const n = bytes.size() / lct::element_bytes(t);
  lct::encoded_tensor e;
  lct::encode(t, bytes.data(), n, book, e, eo);
  std::vector<std::uint8_t> direct(bytes.size(), 0xAB);
  lct::decode(e.view(), direct.data(), direct.size(), dopt);
  auto const c = lct::to_container(e);
  if (c.size() != lct::container_size(e)) return false;
  std::vector<std::uint8_t> via(bytes.size(), 0xCD);
  lct::decode_container(c, via.data(), via.size(), dopt);
  return direct == bytes && via == bytes;
}

template <class T>
std::vector<std::uint8_t> as_bytes(std::vector<T> const& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace lct_test

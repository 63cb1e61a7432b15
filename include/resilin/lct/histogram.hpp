#pragma once
// Exponent histograms, the modal exponent and the entropy figures derived from them.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>

#include <resilin/lct/dtype.hpp>

namespace resilin::lct {

using histogram = std::array<std::uint64_t, 256>;   // only the first 2^exponent_bits bins are used

/// Adds the exponent counts of n elements (bit patterns, little endian in memory) to `hist`.
inline void accumulate_histogram(dtype t, void const* data, std::uint64_t n, histogram& hist) {
  std::uint32_t part[4][256] = {};
  std::uint64_t i = 0;
  std::uint64_t const n4 = n & ~std::uint64_t{3};
  if (t == dtype::fp32) {
    std::uint32_t const* p = static_cast<std::uint32_t const*>(data);
    for (; i < n4; i += 4) {
      ++part[0][(p[i] >> 23) & 0xFF]; ++part[1][(p[i + 1] >> 23) & 0xFF];
      ++part[2][(p[i + 2] >> 23) & 0xFF]; ++part[3][(p[i + 3] >> 23) & 0xFF];
      if (((i + 4) & 0x3FFFFFFFull) == 0) {
        for (int k = 0; k < 4; ++k) for (int b = 0; b < 256; ++b) { hist[b] += part[k][b]; part[k][b] = 0; }
      }
    }
    for (; i < n; ++i) ++part[0][(p[i] >> 23) & 0xFF];
  } else {
    unsigned const shift = exponent_shift(t);
    unsigned const mask = alphabet_size(t) - 1u;
    std::uint16_t const* p = static_cast<std::uint16_t const*>(data);
    for (; i < n4; i += 4) {
      ++part[0][(p[i] >> shift) & mask]; ++part[1][(p[i + 1] >> shift) & mask];
      ++part[2][(p[i + 2] >> shift) & mask]; ++part[3][(p[i + 3] >> shift) & mask];
      if (((i + 4) & 0x3FFFFFFFull) == 0) {
        for (int k = 0; k < 4; ++k) for (int b = 0; b < 256; ++b) { hist[b] += part[k][b]; part[k][b] = 0; }
      }
    }
    for (; i < n; ++i) ++part[0][(p[i] >> shift) & mask];
  }
  for (int k = 0; k < 4; ++k) for (int b = 0; b < 256; ++b) hist[b] += part[k][b];
}

/// Most frequent exponent (the smallest on ties); 0 for an empty histogram.
inline unsigned modal_exponent(histogram const& h, unsigned n_keys) noexcept {
  unsigned best = 0;
  for (unsigned e = 1; e < n_keys; ++e) if (h[e] > h[best]) best = e;
  return best;
}

/// Histogram re-indexed by key = (exponent - key_ref) mod n_keys.
inline histogram key_histogram(histogram const& h, unsigned key_ref, unsigned n_keys) noexcept {
  histogram k{};
  for (unsigned e = 0; e < n_keys; ++e) k[(e - key_ref) & (n_keys - 1u)] += h[e];
  return k;
}

inline std::uint64_t total(histogram const& h) noexcept {
  std::uint64_t s = 0;
  for (auto c : h) s += c;
  return s;
}

/// Shannon entropy in bits per symbol (0 for an empty histogram).
inline double entropy_bits(histogram const& h) noexcept {
  double const n = static_cast<double>(total(h));
  if (n == 0) return 0.0;
  double H = 0;
  for (auto c : h) if (c) { double const p = static_cast<double>(c) / n; H -= p * std::log2(p); }
  return H;
}

/// Ratio limit of exponent-only coding at entropy H: element bits / (raw bits + H).
inline double ratio_bound(dtype t, double H) noexcept {
  double const bits = 8.0 * element_bytes(t);
  return bits / (bits - exponent_bits(t) + H);
}

}  // namespace resilin::lct

#pragma once
// Exponent histograms, the modal exponent and the entropy figures derived from them.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include <resilin/lct/bytes.hpp>
#include <resilin/lct/config.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/error.hpp>

namespace resilin::lct {

using histogram = std::array<std::uint64_t, 256>;   // only the first 2^exponent_bits bins are used

namespace detail {
inline std::uint32_t get_u16(std::uint8_t const* p) noexcept { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
inline std::uint32_t get_u32(std::uint8_t const* p) noexcept { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
}  // namespace detail

/// Adds the exponent counts of n elements (bit patterns, little endian in memory, aligned to the
/// element size) to `hist`.
inline void accumulate_histogram(dtype t, void const* data, std::uint64_t n, histogram& hist) {
  if (n > 0 && data == nullptr)
    RESILIN_LCT_THROW(invalid_argument("accumulate_histogram: data is null with n = " + std::to_string(n)));
  if (n > 0 && !is_aligned_for(t, data))
    RESILIN_LCT_THROW(invalid_argument("accumulate_histogram: data is not aligned to its element size"));
  std::uint32_t part[4][256] = {};
  std::uint64_t i = 0;
  std::uint64_t const n4 = n & ~std::uint64_t{3};
  if (t == dtype::fp32) {
    std::uint32_t const* p = static_cast<std::uint32_t const*>(data);
    for (; i < n4; i += 4) {
      detail::prefetch_ahead(p + i);
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
      detail::prefetch_ahead(p + i);
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

namespace detail {

/// Whether the pair histogram below is available and pays off (PEXT is microcoded on Zen 1/2).
#if RESILIN_LCT_HAS_BMI2 && !defined(__znver1__) && !defined(__znver2__)
inline constexpr bool fast_pext = true;
#else
inline constexpr bool fast_pext = false;
#endif
inline constexpr std::uint64_t pair_histogram_min_elements = std::uint64_t{1} << 19;
inline constexpr std::size_t pair_table_entries = 2u * 65536u;                 ///< scratch size

/// bf16 / fp32 histogram counting pairs of adjacent exponents: one increment per two elements
/// into a 2^16-bin table (two tables, alternating, so a run of the modal pair does not serialise
/// on one counter), folded into `hist` at the end. `pairs` is scratch of pair_table_entries.
/// Only worth it for large n: the fold touches 2^17 counters.
inline void accumulate_histogram_pairs(dtype t, void const* data, std::uint64_t n, histogram& hist,
                                       std::uint32_t* pairs) noexcept {
#if RESILIN_LCT_HAS_BMI2
  if constexpr (std::endian::native != std::endian::little) {
    accumulate_histogram(t, data, n, hist);
    return;
  }
  std::memset(pairs, 0, pair_table_entries * sizeof(std::uint32_t));
  std::uint32_t* const t0 = pairs;
  std::uint32_t* const t1 = pairs + 65536;
  std::uint8_t const* p = static_cast<std::uint8_t const*>(data);
  std::uint64_t const eb = element_bytes(t);
  // the two exponents of a 64-bit (fp32) or 32-bit (bf16) pair -> a 16-bit index; the fold is
  // symmetric, so which exponent lands in the high byte does not matter
  std::uint64_t const mask = t == dtype::fp32 ? 0x7F8000007F800000ull : 0x7F807F80ull;
  std::uint64_t i = 0;
  // counters stay below 2^32: fold every 2^32 elements (2^30 increments per table)
  while (i < n) {
    std::uint64_t const stop = n - i < (std::uint64_t{1} << 32) ? n : i + (std::uint64_t{1} << 32);
    if (t == dtype::fp32) {
      for (; i + 4 <= stop; i += 4) {
        std::uint64_t x, y;
        std::memcpy(&x, p + eb * i, 8);
        std::memcpy(&y, p + eb * i + 8, 8);
        prefetch_ahead(p + eb * i);
        ++t0[_pext_u64(x, mask)];
        ++t1[_pext_u64(y, mask)];
      }
    } else {
      for (; i + 4 <= stop; i += 4) {
        std::uint64_t x;
        std::memcpy(&x, p + eb * i, 8);
        prefetch_ahead(p + eb * i);
        ++t0[_pext_u64(x, mask)];
        ++t1[_pext_u64(x >> 32, mask)];
      }
    }
    for (; i < stop; ++i) hist[exponent_of(t, eb == 4 ? get_u32(p + 4 * i) : get_u16(p + 2 * i))] += 1;
    // fold: hist[a] += row sum a (first exponent), hist[b] += column sum b (second exponent)
    std::uint64_t col[256] = {};
    for (std::uint32_t* tab : {t0, t1}) {
      for (unsigned a = 0; a < 256; ++a) {
        std::uint64_t row = 0;
        std::uint32_t* r = tab + 256 * a;
        for (unsigned b = 0; b < 256; ++b) { row += r[b]; col[b] += r[b]; r[b] = 0; }
        hist[a] += row;
      }
    }
    for (unsigned b = 0; b < 256; ++b) hist[b] += col[b];
  }
#else
  (void)pairs;
  accumulate_histogram(t, data, n, hist);
#endif
}

}  // namespace detail

/// Most frequent exponent (the smallest on ties) among the first n_keys (at most 256); 0 for an
/// empty histogram.
inline unsigned modal_exponent(histogram const& h, unsigned n_keys) noexcept {
  n_keys = n_keys < h.size() ? n_keys : static_cast<unsigned>(h.size());
  unsigned best = 0;
  for (unsigned e = 1; e < n_keys; ++e) if (h[e] > h[best]) best = e;
  return best;
}

/// Histogram re-indexed by key = (exponent - key_ref) mod n_keys; n_keys is the alphabet size
/// of a dtype (32 or 256: a power of two; others are taken as 256).
inline histogram key_histogram(histogram const& h, unsigned key_ref, unsigned n_keys) noexcept {
  if (n_keys == 0 || n_keys > h.size() || (n_keys & (n_keys - 1u)) != 0) n_keys = static_cast<unsigned>(h.size());
  histogram k{};
  for (unsigned e = 0; e < n_keys; ++e) k[(e - key_ref) & (n_keys - 1u)] += h[e];
  return k;
}

/// The number of symbols counted, saturating at 2^64 - 1 (accumulated statistics may pass it;
/// the sum wrapped: {2^63, 2^63} gave 0).
inline std::uint64_t total(histogram const& h) noexcept {
  std::uint64_t s = 0;
  for (auto c : h) s = c > UINT64_MAX - s ? UINT64_MAX : s + c;
  return s;
}

/// The number of symbols counted, as a double (rounded past 2^53, never wrapped): the
/// denominator of rates and entropies.
inline double total_count(histogram const& h) noexcept {
  double s = 0;
  for (auto c : h) s += static_cast<double>(c);
  return s;
}

/// Shannon entropy in bits per symbol (0 for an empty histogram).
inline double entropy_bits(histogram const& h) noexcept {
  double const n = total_count(h);
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

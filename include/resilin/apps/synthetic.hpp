#pragma once
// Synthetic labelled datasets with a fixed, portable seed: Cylinder-Bell-Funnel (Saito 1994).
// Portable means the same seed gives the same series with every standard library: the engine
// is std::mt19937_64 (its output is fixed by the standard) and the conversions to uniform and
// normal variates are ours, since std::*_distribution differ between implementations.
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <vector>
#include <resilin/apps/dataset.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>

namespace resilin {

/// std::mt19937_64 with portable uniform, integer and standard normal (Box-Muller) variates.
class portable_random {
 public:
  explicit portable_random(std::uint64_t seed) : engine_(seed) {}

  /// Uniform on [0, 1), 53 random bits.
  double uniform() noexcept { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// Uniform integer on [lo, hi] (lo <= hi), unbiased (rejection of the short last bucket).
  index_t uniform_int(index_t lo, index_t hi) noexcept {
    auto const range = static_cast<std::uint64_t>(hi - lo) + 1u;
    if (range == 0) return static_cast<index_t>(engine_());  // the full 64-bit range
    std::uint64_t const reject_below = (0u - range) % range;  // 2^64 mod range
    std::uint64_t u = engine_();
    while (u < reject_below) u = engine_();
    return lo + static_cast<index_t>(u % range);
  }

  /// Standard normal N(0, 1) by the Box-Muller transform; the second variate is kept for the
  /// next call.
  double normal() noexcept {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double const u1 = 1.0 - uniform();  // (0, 1]: log(u1) is finite
    double const u2 = uniform();
    double const radius = std::sqrt(-2.0 * std::log(u1));
    double const angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

/// The three Cylinder-Bell-Funnel classes; their values are the dataset labels "1", "2", "3".
enum class cbf_shape : int { cylinder = 1, bell = 2, funnel = 3 };

struct cbf_options {
  index_t per_class = 10;           // series per class
  index_t length = 128;             // samples per series (>= 8)
  std::uint64_t seed = 20240229u;   // fixed default: the same dataset every run
};

/// One CBF series, t = 1..L (Saito's formulas, for L = 128: a ~ U{16..32}, b - a ~ U{32..96};
/// in general a ~ U{L/8..L/4}, b - a ~ U{L/4..3L/4}), eta, eps(t) ~ N(0, 1):
///   cylinder (6 + eta) chi[a,b](t)                   + eps(t)
///   bell     (6 + eta) chi[a,b](t) (t - a) / (b - a) + eps(t)
///   funnel   (6 + eta) chi[a,b](t) (b - t) / (b - a) + eps(t)
/// Draws a, b - a, eta, then eps(1..L), in that order.
template <std::floating_point T>
void cbf_series(cbf_shape shape, portable_random& rng, std::span<T> out) {
  auto const n = static_cast<index_t>(out.size());
  detail::require(n >= 8, "cbf: length must be >= 8, got ", n);
  index_t const a = rng.uniform_int(n / 8, n / 4);
  index_t const b = a + rng.uniform_int(n / 4, 3 * n / 4);
  double const amplitude = 6.0 + rng.normal();
  double const span_ab = static_cast<double>(b - a);
  for (index_t t = 1; t <= n; ++t) {
    double shape_value = 0;
    if (a <= t && t <= b) {
      switch (shape) {
        case cbf_shape::cylinder: shape_value = 1.0; break;
        case cbf_shape::bell: shape_value = static_cast<double>(t - a) / span_ab; break;
        case cbf_shape::funnel: shape_value = static_cast<double>(b - t) / span_ab; break;
      }
    }
    out[static_cast<std::size_t>(t - 1)] = static_cast<T>(amplitude * shape_value + rng.normal());
  }
}

/// A CBF dataset of 3 * per_class series, classes interleaved (1, 2, 3, 1, 2, 3, ...), labels
/// "1" cylinder, "2" bell, "3" funnel. The integers (a, b) and the uniform variates are
/// bit-identical everywhere; the normal variates are too wherever libm's log, sin and cos
/// round alike (the standard does not require them to be correctly rounded).
template <std::floating_point T = double>
dataset<T> make_cbf(cbf_options const& options = {}) {
  detail::require(options.per_class >= 1, "cbf: per_class must be >= 1, got ", options.per_class);
  detail::require(options.length >= 8, "cbf: length must be >= 8, got ", options.length);
  portable_random rng(options.seed);
  index_t const count = 3 * options.per_class;
  std::vector<std::string> labels;
  std::vector<index_t> lengths(static_cast<std::size_t>(count), options.length);
  std::vector<T> flat(static_cast<std::size_t>(count * options.length));
  labels.reserve(static_cast<std::size_t>(count));
  for (index_t s = 0; s < count; ++s) {
    auto const shape = static_cast<cbf_shape>(1 + s % 3);
    labels.push_back(std::to_string(static_cast<int>(shape)));
    cbf_series<T>(shape, rng,
                  std::span<T>(flat).subspan(static_cast<std::size_t>(s * options.length),
                                             static_cast<std::size_t>(options.length)));
  }
  return dataset<T>::from_ragged(std::move(labels), std::span<T const>(flat), std::move(lengths));
}

}  // namespace resilin

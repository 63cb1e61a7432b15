#pragma once
// The Sakoe-Chiba band, defined for every pair of lengths.
//
// For n = m a cell (i, j) is in the band when |i - j| <= R (the UCR convention). In general,
//     |i (m - 1) - j (n - 1)| <= R_eff * max(n - 1, m - 1),
// i.e. the distance to the straight line from (0, 0) to (n-1, m-1), measured along the longer
// axis and rescaled to the shorter one. It is symmetric under swapping x and y, and reduces to
// |i - j| <= R for n = m. When n != m and R = 0 the band is widened to R_eff = 1: that is the
// smallest radius that keeps (n-1, m-1) reachable (2 W >= n + m - 2 suffices), so a band never
// makes the result infinite. Every row's interval [lo(i), hi(i)] is non-empty and both ends
// are non-decreasing in i, which the traversals rely on.
#include <cmath>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>

namespace resilin {

/// A closed interval of column indices [lo, hi] (empty when lo > hi).
struct index_range {
  index_t lo = 0;
  index_t hi = -1;
  RESILIN_HD constexpr bool contains(index_t j) const noexcept { return lo <= j && j <= hi; }
  RESILIN_HD constexpr index_t size() const noexcept { return hi >= lo ? hi - lo + 1 : 0; }
};

/// The user's band choice: none, a radius in cells, or a window fraction of max(n, m).
class band_spec {
 public:
  enum class kind : unsigned char { none, radius, window };

  constexpr band_spec() noexcept = default;
  /// Sakoe-Chiba radius R >= 0 in cells.
  static band_spec radius(index_t r) {
    detail::require(r >= 0, "band radius must be >= 0, got ", r);
    band_spec b;
    b.kind_ = kind::radius;
    b.radius_ = r;
    return b;
  }
  /// R = ceil(f * max(n, m)), the UCR "window" convention, f in [0, +inf).
  static band_spec window(double f) {
    detail::require(f >= 0 && std::isfinite(f), "band window must be a finite value >= 0, got ", f);
    band_spec b;
    b.kind_ = kind::window;
    b.window_ = f;
    return b;
  }
  static constexpr band_spec none() noexcept { return {}; }

  constexpr kind type() const noexcept { return kind_; }
  /// The window fraction f of a window band (0 for the other kinds).
  constexpr double window_fraction() const noexcept { return kind_ == kind::window ? window_ : 0.0; }
  /// The radius for a pair of lengths, or -1 for no band.
  index_t radius_for(index_t n, index_t m) const noexcept {
    index_t const longest = n > m ? n : m;
    switch (kind_) {
      case kind::radius: return radius_ < longest ? radius_ : longest;
      case kind::window: {
        double const r = std::ceil(window_ * static_cast<double>(longest));
        return r < static_cast<double>(longest) ? static_cast<index_t>(r) : longest;
      }
      default: return -1;
    }
  }

 private:
  kind kind_ = kind::none;
  index_t radius_ = 0;
  double window_ = 0;
};

namespace detail {
RESILIN_HD constexpr index_t floor_div(index_t a, index_t b) noexcept {  // b > 0
  index_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
RESILIN_HD constexpr index_t ceil_div(index_t a, index_t b) noexcept {  // b > 0
  index_t q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}
}  // namespace detail

/// The resolved band of one (n, m) problem: cheap to copy, usable on the device.
struct band_geometry {
  index_t n = 0;
  index_t m = 0;
  index_t half_width = -1;  // W = R_eff * max(n-1, m-1); -1: no band

  RESILIN_HD static constexpr band_geometry make(index_t n, index_t m, index_t radius) noexcept {
    band_geometry g{n, m, -1};
    if (radius < 0 || n <= 1 || m <= 1) return g;
    index_t const longest = (n > m ? n : m) - 1;
    index_t const r = (n != m && radius == 0) ? 1 : radius;
    if (r >= longest) return g;  // the band covers the whole grid
    g.half_width = r * longest;
    return g;
  }

  RESILIN_HD constexpr bool banded() const noexcept { return half_width >= 0; }

  /// Columns of row i inside the band.
  RESILIN_HD constexpr index_range row(index_t i) const noexcept {
    if (!banded()) return {0, m - 1};
    index_t const c = i * (m - 1);
    index_t lo = detail::ceil_div(c - half_width, n - 1);
    index_t hi = detail::floor_div(c + half_width, n - 1);
    return {lo < 0 ? 0 : lo, hi > m - 1 ? m - 1 : hi};
  }

  RESILIN_HD constexpr bool contains(index_t i, index_t j) const noexcept {
    return 0 <= i && i < n && row(i).contains(j);
  }
};

}  // namespace resilin

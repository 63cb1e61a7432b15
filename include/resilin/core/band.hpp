#pragma once
// The bands of the alignment recursion, defined for every pair of lengths: the Sakoe-Chiba band
// and the Itakura parallelogram.
//
// Sakoe-Chiba. For n = m a cell (i, j) is in the band when |i - j| <= R (the UCR convention).
// In general,
//     |i (m - 1) - j (n - 1)| <= R_eff * max(n - 1, m - 1),
// i.e. the distance to the straight line from (0, 0) to (n-1, m-1), measured along the longer
// axis and rescaled to the shorter one. It is symmetric under swapping x and y, and reduces to
// |i - j| <= R for n = m. When n != m and R = 0 the band is widened to R_eff = 1: that is the
// smallest radius that keeps (n-1, m-1) reachable (2 W >= n + m - 2 suffices), so a band never
// makes the result infinite.
//
// Itakura. With the slope s >= 1, in the coordinates a = i (m - 1), b = j (n - 1) that put the
// grid's diagonal on a = b and its corner at N = (n - 1)(m - 1), the parallelogram is
//     b <= s a,   a <= s b,   N - b <= s (N - a),   N - a <= s (N - b):
// the cells between the lines of slopes s and 1/s (relative to the diagonal's) through both
// corners: Itakura's global parallelogram constraint on the cells (1975), not a bound on the
// path's local slope. For n = m it is tslearn's itakura_mask(n, n, max_slope = s) wherever
// tslearn's rounding of its row bounds to two decimals moves no cell (checked for s in 1, 1.1,
// 1.3, 1.5, 2, 2.5, 3, 4 and n <= 51; s = 1.999 differs at n = 4, 2.99 at n = 6, 1.234 at
// n = 106); for n != m tslearn scales the slopes by n / m where this rescales the grid. It is
// exact, and symmetric under swapping x and y. Its cells are united with those of the narrowest
// Sakoe-Chiba band (R = 0 above), so that the cells along the diagonal keep (n-1, m-1)
// reachable for every slope and pair of lengths. s is used to 1/16,000,000 (itakura_slope_scale):
// every slope with up to six decimals, and every multiple of 1/1024, exactly.
//
// For both, every row's interval [lo(i), hi(i)] is non-empty and both ends are non-decreasing in
// i (each bound is monotone; a union of two intervals that share the diagonal's point is their
// hull), which the traversals rely on.
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

struct band_geometry;

/// The Itakura slope's fixed-point scale: s is used as round(s * scale) / scale, with
/// scale = 2^10 5^6, so that decimal slopes (1.1, 1.3, 2.25: up to six decimals) and multiples
/// of 1/1024 are exact. (At 1/1024, 1.3 became 1.2998 and lost the cells on its boundary lines
/// that tslearn's mask holds.) The parallelogram's products stay below 2^118 for lengths up to 2^31.
inline constexpr index_t itakura_slope_scale = 16000000;

namespace detail {
/// ceil(f * longest), at most longest, for the fraction f as written: a product within 4 ulps
/// above an integer k is k, since f itself is rounded (0.07 * 100 is 7.000000000000001 in
/// double, and 7 cells are meant, not 8). One function for the host and the device band.
RESILIN_HD inline index_t window_radius(double f, index_t longest) noexcept {
  // two products (nvcc contracts a product and a sum into an FMA, not two products): the same
  // bits on either side
  double const shaved = (f * static_cast<double>(longest)) * (1.0 - 0x1p-50);  // 1 - 4 eps
  double const r = ::ceil(shaved);
  return r < static_cast<double>(longest) ? static_cast<index_t>(r) : longest;
}
}  // namespace detail

/// The user's band choice: none, a Sakoe-Chiba radius in cells or window fraction of max(n, m),
/// or an Itakura parallelogram of slope s.
class band_spec {
 public:
  enum class kind : unsigned char { none, radius, window, itakura };

  constexpr band_spec() noexcept = default;
  /// Sakoe-Chiba radius R >= 0 in cells.
  static band_spec radius(index_t r) {
    detail::require(r >= 0, "band radius must be >= 0, got ", r);
    band_spec b;
    b.kind_ = kind::radius;
    b.radius_ = r;
    return b;
  }
  /// R = ceil(f * max(n, m)), the UCR archive's "learned window" convention (its published DTW
  /// error rates reproduce with it), f in [0, +inf); a product within a few ulps above an
  /// integer is that integer (0.07 of 100 is 7 cells, not 8). aeon's `window` and the UCR
  /// Suite's code round down instead: radius(floor(f * n)) gives their band.
  static band_spec window(double f) {
    detail::require(f >= 0 && std::isfinite(f), "band window must be a finite value >= 0, got ", f);
    band_spec b;
    b.kind_ = kind::window;
    b.window_ = f;
    return b;
  }
  /// The Itakura parallelogram of slope s >= 1 (tslearn's max_slope; 2 is usual): the cells
  /// between the lines of slopes s and 1/s of the diagonal's through both corners. s is used to
  /// 1/16,000,000 (itakura_slope_scale).
  static band_spec itakura(double s) {
    detail::require(std::isfinite(s) && s >= 1.0, "Itakura slope must be a finite value >= 1, got ", s);
    band_spec b;
    b.kind_ = kind::itakura;
    double const scaled = std::round(s * static_cast<double>(itakura_slope_scale));
    // a slope of 1.1e9, beyond any grid's aspect ratio (band_geometry clamps again)
    double const cap = 0x1p54;
    b.slope_ = static_cast<index_t>(scaled < cap ? scaled : cap);
    return b;
  }
  static constexpr band_spec none() noexcept { return {}; }

  constexpr kind type() const noexcept { return kind_; }
  /// The window fraction f of a window band (0 for the other kinds).
  constexpr double window_fraction() const noexcept { return kind_ == kind::window ? window_ : 0.0; }
  /// The Itakura slope times itakura_slope_scale (0 for the other kinds).
  constexpr index_t itakura_slope_scaled() const noexcept { return kind_ == kind::itakura ? slope_ : 0; }
  /// The band of an (n, m) problem.
  band_geometry geometry(index_t n, index_t m) const noexcept;
  /// The Sakoe-Chiba radius for a pair of lengths, or -1 for no Sakoe-Chiba band (none, Itakura).
  index_t radius_for(index_t n, index_t m) const noexcept {
    index_t const longest = n > m ? n : m;
    switch (kind_) {
      case kind::radius: return radius_ < longest ? radius_ : longest;
      case kind::window: return detail::window_radius(window_, longest);
      default: return -1;
    }
  }

 private:
  kind kind_ = kind::none;
  index_t radius_ = 0;
  double window_ = 0;
  index_t slope_ = 0;  // Itakura: round(s * itakura_slope_scale)
};

namespace detail {
/// 128-bit integers for the Itakura parallelogram's products (n^3 s overflows 64 bits for long
/// series); g++, clang and nvcc have them on 64-bit targets, host and device.
__extension__ typedef __int128 wide_int;

/// Rounded-down and rounded-up integer division (index_t or wide_int), b > 0.
template <class I>
RESILIN_HD constexpr I floor_div(I a, I b) noexcept {
  I q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
template <class I>
RESILIN_HD constexpr I ceil_div(I a, I b) noexcept {
  I q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}
}  // namespace detail

/// The resolved band of one (n, m) problem: cheap to copy, usable on the device.
struct band_geometry {
  index_t n = 0;
  index_t m = 0;
  index_t half_width = -1;  // W = R_eff * max(n-1, m-1); -1: no band
  index_t slope = 0;        // an Itakura parallelogram's s * itakura_slope_scale; 0: Sakoe-Chiba

  /// The Sakoe-Chiba band of radius `radius` (-1: none).
  RESILIN_HD static constexpr band_geometry make(index_t n, index_t m, index_t radius) noexcept {
    band_geometry g{n, m, -1, 0};
    if (radius < 0 || n <= 1 || m <= 1) return g;
    index_t const longest = (n > m ? n : m) - 1;
    index_t const r = (n != m && radius == 0) ? 1 : radius;
    if (r >= longest) return g;  // the band covers the whole grid
    g.half_width = r * longest;
    return g;
  }

  /// The Itakura parallelogram of slope scaled_slope / itakura_slope_scale (>= 1), united with
  /// the narrowest Sakoe-Chiba band. The slope is clamped to max(n - 1, m - 1), beyond which the
  /// parallelogram no longer grows.
  RESILIN_HD static constexpr band_geometry make_itakura(index_t n, index_t m, index_t scaled_slope) noexcept {
    band_geometry g = make(n, m, 0);
    if (n <= 1 || m <= 1) return g;
    index_t const longest = ((n > m ? n : m) - 1) * itakura_slope_scale;
    index_t const lo = itakura_slope_scale;
    g.slope = scaled_slope < lo ? lo : (scaled_slope > longest ? longest : scaled_slope);
    return g;
  }

  RESILIN_HD constexpr bool banded() const noexcept { return half_width >= 0; }
  RESILIN_HD constexpr bool itakura() const noexcept { return slope > 0; }

  /// Columns of row i inside the band.
  RESILIN_HD constexpr index_range row(index_t i) const noexcept {
    if (!banded()) return {0, m - 1};
    index_t const c = i * (m - 1);
    index_t lo = detail::ceil_div(c - half_width, n - 1);
    index_t hi = detail::floor_div(c + half_width, n - 1);
    if (itakura()) {
      index_range const p = parallelogram_row(i);
      lo = p.lo < lo ? p.lo : lo;
      hi = p.hi > hi ? p.hi : hi;
    }
    return {lo < 0 ? 0 : lo, hi > m - 1 ? m - 1 : hi};
  }

  RESILIN_HD constexpr bool contains(index_t i, index_t j) const noexcept {
    return 0 <= i && i < n && row(i).contains(j);
  }

  /// Whether the band holds one alignment path: no cell in it has two predecessors in it (a
  /// single row or column; a radius-0 band or an Itakura slope of 1 with n = m). Along such a
  /// path every soft-min has one finite candidate, so S is the sum of the path's costs. Rows are
  /// compared pairwise and a band of several paths shows it within the first rows, so this is
  /// O(1) for those and O(n) only where it holds.
  RESILIN_HD constexpr bool single_path() const noexcept {
    if (!banded()) return n <= 1 || m <= 1;
    if (!itakura() && half_width == 0) return true;  // radius 0 (n = m): the diagonal, in O(1)
    index_range above = row(0);
    for (index_t i = 1; i < n; ++i) {
      index_range const here = row(i);
      // the row's first cell: its up (i-1, lo) and diagonal (i-1, lo-1) predecessors
      if (here.lo > above.lo && here.lo <= above.hi) return false;
      // a later cell (its left predecessor is in the band): up or diagonal as well
      if (here.hi > here.lo && here.lo <= above.hi && here.hi >= above.lo) return false;
      above = here;
    }
    return true;
  }

  /// The Itakura parallelogram's columns of row i (unclamped; may be empty), in exact integer
  /// arithmetic: with P = slope, Q = itakura_slope_scale, a = i (m-1) and b = j (n-1),
  ///   Q a <= P b,  Q (N - b) <= P (N - a)  (the lower ends),
  ///   Q b <= P a,  Q (N - a) <= P (N - b)  (the upper ends).
  RESILIN_HD RESILIN_DEVICE_NOINLINE constexpr index_range parallelogram_row(index_t i) const noexcept {
    using wide = detail::wide_int;
    wide const P = slope, Q = itakura_slope_scale, rows = n - 1;
    wide const N = wide(n - 1) * wide(m - 1), a = wide(i) * wide(m - 1);
    wide const lo1 = detail::ceil_div(Q * a, P * rows);
    wide const lo2 = detail::ceil_div(Q * N - P * (N - a), Q * rows);
    wide const hi1 = detail::floor_div(P * a, Q * rows);
    wide const hi2 = detail::floor_div(P * N - Q * (N - a), P * rows);
    return {static_cast<index_t>(lo1 > lo2 ? lo1 : lo2), static_cast<index_t>(hi1 < hi2 ? hi1 : hi2)};
  }
};

inline band_geometry band_spec::geometry(index_t n, index_t m) const noexcept {
  if (kind_ == kind::itakura) return band_geometry::make_itakura(n, m, slope_);
  return band_geometry::make(n, m, radius_for(n, m));
}

}  // namespace resilin

#pragma once
// The piecewise-linear interpolant of a series on a knot grid over [0, 1] (spec/cdtw.md B.3.1):
// evaluation x(u) per channel, the segment holding u, the slope on a segment, and the adjoint
// (the scatter of dF/dx(u) onto the two knots of that segment). RESILIN_HD, no allocation, no
// exceptions: kernels call it per thread. Host validation lives in check_interpolant().
#include <string_view>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/views.hpp>

namespace resilin::fcdtw {

/// Knot positions t_0 = 0 < ... < t_{n-1} = 1. `knots == nullptr` means the implicit uniform
/// grid linspace(0, 1, n), whose knot i is i / (n - 1) (exactly 0 and 1 at the ends).
template <class T>
struct knot_grid {
  T const* knots = nullptr;  // (n) or nullptr
  index_t size = 0;          // n >= 2

  RESILIN_HD bool uniform() const noexcept { return knots == nullptr; }
  RESILIN_HD index_t segments() const noexcept { return size - 1; }

  RESILIN_HD T operator[](index_t i) const noexcept {
    return knots ? knots[i] : static_cast<T>(i) / static_cast<T>(size - 1);
  }

  /// The segment i in [0, n - 2] with t_i <= u <= t_{i+1} (u clamped to [0, 1]). O(1) on the
  /// uniform grid, a binary search otherwise. At an interior knot either neighbour is valid.
  RESILIN_HD index_t locate(T u) const noexcept {
    index_t const last = size - 2;
    if (!(u > T(0))) return 0;
    if (!(u < T(1))) return last;
    if (uniform()) {
      auto i = static_cast<index_t>(u * static_cast<T>(size - 1));  // floor for u > 0
      return i < last ? i : last;
    }
    index_t lo = 0, hi = last;  // invariant: knots[lo] <= u, answer in [lo, hi]
    while (lo < hi) {
      index_t const mid = lo + (hi - lo + 1) / 2;
      if (knots[mid] <= u) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
};

/// Where u falls: x(u) = (1 - w) x_i + w x_{i+1}.
template <class T>
struct interpolation_point {
  index_t segment;
  T w;
};

/// The PL interpolant of `values` (length, channels) on `grid` (grid.size == values.length).
template <class T>
struct interpolant {
  series_view<T const> values;
  knot_grid<T> grid;

  RESILIN_HD index_t length() const noexcept { return values.length; }
  RESILIN_HD index_t channels() const noexcept { return values.channels; }
  RESILIN_HD T knot(index_t i) const noexcept { return grid[i]; }

  /// The segment and the weight of u; w in [0, 1] (u clamped to [0, 1]).
  RESILIN_HD interpolation_point<T> locate(T u) const noexcept {
    T const uc = u < T(0) ? T(0) : (u > T(1) ? T(1) : u);
    index_t const i = grid.locate(uc);
    return {i, weight_in(i, uc)};
  }
  /// The weight of u inside segment i (not clamped to the segment: extrapolates outside it).
  RESILIN_HD T weight_in(index_t i, T u) const noexcept {
    T const t0 = grid[i], t1 = grid[i + 1];
    return (u - t0) / (t1 - t0);
  }

  /// x(u) for channel c.
  RESILIN_HD T operator()(T u, index_t c) const noexcept { return at(locate(u), c); }
  /// x at an interpolation point, channel c.
  RESILIN_HD T at(interpolation_point<T> p, index_t c) const noexcept {
    // (1 - w) a + w b is exact at both knots (w = 0 or 1), unlike a + w (b - a).
    return (T(1) - p.w) * values(p.segment, c) + p.w * values(p.segment + 1, c);
  }
  /// x(u) for every channel into out (channels).
  RESILIN_HD void eval(T u, T* out) const noexcept {
    interpolation_point<T> const p = locate(u);
    for (index_t c = 0; c < values.channels; ++c) out[c] = at(p, c);
  }

  /// dx/du on segment i, channel c.
  RESILIN_HD T slope(index_t i, index_t c) const noexcept {
    return (values(i + 1, c) - values(i, c)) / (grid[i + 1] - grid[i]);
  }
  /// dx/du at u (the right-or-left segment that locate() picks at a knot), every channel.
  RESILIN_HD void slope_at(T u, T* out) const noexcept {
    index_t const i = grid.locate(u);
    for (index_t c = 0; c < values.channels; ++c) out[c] = slope(i, c);
  }

  /// The adjoint of x(u): grad (length, channels) += dF/dx(u) spread on the two knots of u's
  /// segment with weights (1 - w, w). `scale` multiplies the contribution.
  RESILIN_HD void scatter(interpolation_point<T> p, T const* dfdx, series_view<T> grad,
                          T scale = T(1)) const noexcept {
    T const w0 = scale * (T(1) - p.w), w1 = scale * p.w;
    for (index_t c = 0; c < values.channels; ++c) {
      grad(p.segment, c) += w0 * dfdx[c];
      grad(p.segment + 1, c) += w1 * dfdx[c];
    }
  }
  RESILIN_HD void scatter(T u, T const* dfdx, series_view<T> grad, T scale = T(1)) const noexcept {
    scatter(locate(u), dfdx, grad, scale);
  }
};

/// An interpolant on the uniform grid linspace(0, 1, values.length).
template <class T>
RESILIN_HD constexpr interpolant<T> uniform_interpolant(series_view<T const> values) noexcept {
  return {values, knot_grid<T>{nullptr, values.length}};
}
/// An interpolant on explicit knots (values.length of them); validate with check_interpolant().
template <class T>
RESILIN_HD constexpr interpolant<T> knotted_interpolant(series_view<T const> values,
                                                        T const* knots) noexcept {
  return {values, knot_grid<T>{knots, values.length}};
}

namespace detail {
/// Host validation of explicit knots: strictly increasing from exactly 0 to exactly 1.
template <class T>
void check_knot_grid(knot_grid<T> const& g, std::string_view name) {
  using resilin::detail::require;
  if (g.uniform()) return;
  T const* k = g.knots;
  require(g.size >= 2, name, ": a knot grid needs >= 2 knots, got ", g.size);
  require(k[0] == T(0), name, ": the first knot must be 0, got ", k[0]);
  require(k[g.size - 1] == T(1), name, ": the last knot must be 1, got ", k[g.size - 1]);
  for (index_t i = 1; i < g.size; ++i)
    require(k[i - 1] < k[i], name, ": knots must be strictly increasing, got knot ", i - 1,
            " = ", k[i - 1], " and knot ", i, " = ", k[i]);
  // closer knots are below T's resolution of [0, 1] (a gap of 1e-320 made the slopes infinite
  // and the gradients NaN)
  for (index_t i = 1; i < g.size; ++i)
    require(k[i] - k[i - 1] >= std::numeric_limits<T>::epsilon(), name, ": knots ", i - 1, " and ",
            i, " are ", k[i] - k[i - 1], " apart; the smallest gap is ",
            std::numeric_limits<T>::epsilon(), " (machine epsilon of the value type)");
}

}  // namespace detail

/// The largest magnitude of a sample FastCDTW accepts: sqrt(largest finite T) / 8 (about 1.7e153
/// in double, 2.3e18 in float), so that squared differences of two samples, and their integrals
/// along a warp, stay finite (beyond, the objective overflowed and its gradient was NaN).
template <class T>
constexpr T max_sample_magnitude() noexcept {
  return sizeof(T) == 4 ? T(2.3058429e18f) : T(1.6759759912428245e153);
}

namespace detail {

/// Throws unless every value lies within max_sample_magnitude (NaN and inf included).
template <class T>
void check_sample_range(T const* values, index_t count, index_t channels, std::string_view name,
                        std::string_view series = {}) {
  for (index_t i = 0; i < count; ++i) {
    T const v = values[i];
    resilin::detail::require(v - v == T(0), name, series, " contains a non-finite value (", v,
                             ") at sample ", i / channels, ", channel ", i % channels);
    resilin::detail::require(v <= max_sample_magnitude<T>() && -v <= max_sample_magnitude<T>(), name,
                             series, ": sample ", i / channels, ", channel ", i % channels, " is ", v,
                             "; FastCDTW takes magnitudes up to ", max_sample_magnitude<T>(),
                             " (squared differences must be finite)");
  }
}

/// Throws unless a uniform grid of `length` samples keeps the explicit knots' rule, gaps of at
/// least T's epsilon: at most 2^23 + 1 samples in float (beyond 2^24 + 1, neighbouring knots
/// i / (length - 1) rounded to one value and the slopes between them were infinite).
template <class T>
void check_uniform_resolution(index_t length, std::string_view name, std::string_view series = {}) {
  resilin::detail::require(static_cast<double>(length - 1) * static_cast<double>(std::numeric_limits<T>::epsilon()) <= 1.0,
                           name, series, ": ", length, " samples on a uniform grid are closer than ",
                           sizeof(T) == 4 ? "float" : "double", "'s resolution of [0, 1] (at most ",
                           static_cast<double>(1 / std::numeric_limits<T>::epsilon()) + 1,
                           "); use double or explicit knots");
}

/// Host validation: at least two finite samples within max_sample_magnitude, and explicit knots
/// strictly increasing from exactly 0 to exactly 1. Throws resilin::invalid_argument naming the
/// argument.
template <class T>
void check_interpolant(interpolant<T> const& s, std::string_view name) {
  using resilin::detail::require;
  require(s.values.channels >= 1, name, ": channels must be >= 1, got ", s.values.channels);
  require(s.values.length >= 2, name, ": a piecewise-linear series needs >= 2 samples, got ",
          s.values.length);
  require(s.values.data != nullptr, name, ": data is null for length ", s.values.length);
  require(s.grid.size == s.values.length, name, ": the knot grid has ", s.grid.size,
          " knots for ", s.values.length, " samples");
  check_sample_range(s.values.data, s.values.size(), s.values.channels, name);
  if (s.grid.uniform()) check_uniform_resolution<T>(s.values.length, name);
  check_knot_grid(s.grid, name);
}
}  // namespace detail

}  // namespace resilin::fcdtw

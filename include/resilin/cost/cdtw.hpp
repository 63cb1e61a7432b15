#pragma once
// cdtw_cost: grid continuous DTW (spec/cdtw.md §A). The samples x_0..x_{n-1} sit at
// u_i = i / (n-1), y_0..y_{m-1} at v_j = j / (m-1), and both series are read as their
// piecewise-linear interpolants. Along a lattice step both interpolants are affine, so
// a(s) = x(u(s)) - y(v(s)) is affine from a0 to a1 and the step's share of
//     F(path) = integral over the path of |x(u) - y(v)|^2 ds   (ds: Euclidean arc length)
// is exact:  cost = L (|a0|^2 + <a0, a1> + |a1|^2) / 3,  with, into cell (i, j),
//     diag from (i-1, j-1)   a0 = x_{i-1} - y_{j-1}   a1 = x_i - y_j   L = sqrt(du^2 + dv^2)
//     up   from (i-1, j)     a0 = x_{i-1} - y_j       a1 = x_i - y_j   L = du = 1 / (n-1)
//     left from (i, j-1)     a0 = x_i - y_{j-1}       a1 = x_i - y_j   L = dv = 1 / (m-1)
// The path starts at (0, 0) for free: c_diag(0, 0) = 0 (the recursion's virtual origin
// R(-1, -1) = 0 then gives R(0, 0) = 0). With hard_min the recursion is the minimum of F over
// lattice paths; with soft_min(gamma), -gamma log sum_paths exp(-F / gamma) (soft-CDTW).
//
// Several channels are aligned jointly: |.|^2 and <.,.> run over the channels.
//
// A length-1 series has a zero-length time axis: du = 0 for n = 1 (dv = 0 for m = 1), so its
// moves cost nothing and the path runs along the other axis only; (1, 1) gives 0. Nothing
// divides by zero. Moves with no predecessor in the grid (up at i = 0, left at j = 0, diag on
// the first row or column) cost 0: the recursion gives them +inf predecessors and weight 0,
// and they never read x_{-1} or y_{-1}.
//
// Gradient: d cost / d a0 = L (2 a0 + a1) / 3 and d cost / d a1 = L (a0 + 2 a1) / 3, each
// spread to the x sample (+) and the y sample (-) that the a reads.
//
// Refinement (spec §A, last property): refine(x, r) inserts r - 1 linearly interpolated
// samples between neighbours. The interpolant and the sample times of every original sample
// are unchanged, every old lattice path is still available with the same integral, so the hard
// grid CDTW of refined series never exceeds the unrefined one without a band. A band is laid
// on the refined grid from its own lengths and can drop cells an old path used: a radius R
// keeps R cells of a grid r times finer (use r R_eff, R_eff of core/band.hpp, to keep every
// old path), a window rounds its width on the new lengths, and an Itakura band's diagonal part
// stays one cell wide; with them the refined value can be larger (0.3333 -> 0.3658 for (0, 1, 0)
// against (1, 0, 1) with radius 1 and r = 2). Refinement is linear; to train through it, chain
// value_and_grad on the refined series with refine_adjoint (the transpose).
#include <algorithm>
#include <concepts>
#include <limits>
#include <type_traits>
#include <vector>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/validate.hpp>
#include <resilin/core/views.hpp>

namespace resilin {

/// The grid CDTW cost model: exact segment integrals of the piecewise-linear interpolants.
struct cdtw_cost {
  /// step_grad of cell (i, j) writes rows i-1, i of x and j-1, j of y (device backward phases).
  static constexpr int grad_stencil = 2;

  /// The grid spacing of a series of `length` samples on [0, 1]; 0 for a single sample.
  template <class T>
  RESILIN_HD static T spacing(index_t length) noexcept {
    return length > 1 ? T(1) / static_cast<T>(length - 1) : T(0);
  }

  /// L of the diagonal move, sqrt(du^2 + dv^2) (symmetric in du and dv, so a transposed
  /// problem gets bitwise the same costs).
  template <class T>
  RESILIN_HD static T diagonal_length(T du, T dv) noexcept {
    // the larger spacing first: a contracted du * du + dv * dv rounds differently from
    // dv * dv + du * du, and the transposed problem swaps them
    T const lo = math::min(du, dv), hi = math::max(du, dv);
    return math::sqrt(hi * hi + lo * lo);
  }

  /// sum over channels of |a0|^2 + <a0, a1> + |a1|^2 with a0 = p0 - q0, a1 = p1 - q1.
  template <class T>
  RESILIN_HD static T segment_form(T const* p0, T const* q0, T const* p1, T const* q1,
                                   index_t channels) noexcept {
    T s = T(0);
    for (index_t c = 0; c < channels; ++c) {
      T const a0 = p0[c] - q0[c];
      T const a1 = p1[c] - q1[c];
      s += a0 * a0 + a0 * a1 + a1 * a1;
    }
    // the form is >= (|a0|^2 + |a1|^2) / 2 >= 0: a negative or NaN s comes only from a term
    // that overflowed (-inf, or inf - inf)
    return s >= T(0) ? s : math::infinity<T>();
  }

  /// w times segment_form, w = L / 3 < 1 of the step. Where the form overflows the product may
  /// not (a float step between 1e19 and -1e19 costs 1.9e38, and was inf, its soft gradients 0):
  /// there from a0^2 + a0 a1 + a1^2 = 3 ((a0 + a1) / 2)^2 + ((a0 - a1) / 2)^2 with each half
  /// scaled by sqrt(w), so that no term exceeds the cost. Finite forms keep w * s.
  template <class T>
  RESILIN_HD static T segment_cost(T w, T const* p0, T const* q0, T const* p1, T const* q1,
                                   index_t channels) noexcept {
    T const s = segment_form(p0, q0, p1, q1, channels);
    if (s < math::infinity<T>()) [[likely]] return w * s;
    T const k = math::sqrt(w), half(0.5);
    T cost = T(0);
    for (index_t c = 0; c < channels; ++c) {
      T const h0 = half * p0[c] - half * q0[c];  // a0 / 2 without overflowing a0
      T const h1 = half * p1[c] - half * q1[c];
      T const mid = k * (h0 + h1), gap = k * (h0 - h1);
      cost += T(3) * (mid * mid) + gap * gap;
    }
    return cost;
  }

  template <class T>
  RESILIN_HD step3<T> step(series_view<T const> x, series_view<T const> y, index_t i,
                           index_t j) const noexcept {
    T const du = spacing<T>(x.length), dv = spacing<T>(y.length);
    T const third = T(1) / T(3);
    index_t const d = x.channels;
    T const* xi = x.row(i);
    T const* yj = y.row(j);
    step3<T> c{T(0), T(0), T(0)};
    if (i > 0 && j > 0)
      c.diag = segment_cost(diagonal_length(du, dv) * third, x.row(i - 1), y.row(j - 1), xi, yj, d);
    if (i > 0) c.up = segment_cost(du * third, x.row(i - 1), yj, xi, yj, d);
    if (j > 0) c.left = segment_cost(dv * third, xi, y.row(j - 1), xi, yj, d);
    return c;
  }

  template <class T>
  RESILIN_HD void step_grad(series_view<T const> x, series_view<T const> y, index_t i, index_t j,
                            step3<T> usage, series_view<T> gx, series_view<T> gy) const noexcept {
    T const du = spacing<T>(x.length), dv = spacing<T>(y.length);
    T const third = T(1) / T(3);
    if (i > 0 && j > 0 && usage.diag != T(0))
      spread(usage.diag * diagonal_length(du, dv) * third, x, y, gx, gy, i - 1, j - 1, i, j);
    if (i > 0 && usage.up != T(0)) spread(usage.up * du * third, x, y, gx, gy, i - 1, j, i, j);
    if (j > 0 && usage.left != T(0)) spread(usage.left * dv * third, x, y, gx, gy, i, j - 1, i, j);
  }

 private:
  /// Adds w * d(|a0|^2 + <a0, a1> + |a1|^2) to the gradients, for a0 = x_{i0} - y_{j0} and
  /// a1 = x_{i1} - y_{j1}: (2 a0 + a1) to x_{i0}, (a0 + 2 a1) to x_{i1}, minus those to y.
  template <class T>
  RESILIN_HD static void spread(T w, series_view<T const> x, series_view<T const> y,
                                series_view<T> gx, series_view<T> gy, index_t i0, index_t j0,
                                index_t i1, index_t j1) noexcept {
    T const* x0 = x.row(i0);
    T const* x1 = x.row(i1);
    T const* y0 = y.row(j0);
    T const* y1 = y.row(j1);
    for (index_t c = 0; c < x.channels; ++c) {
      T const a0 = x0[c] - y0[c];
      T const a1 = x1[c] - y1[c];
      T const g0 = w * (T(2) * a0 + a1);
      T const g1 = w * (a0 + T(2) * a1);
      gx(i0, c) += g0;
      gx(i1, c) += g1;
      gy(j0, c) -= g0;
      gy(j1, c) -= g1;
    }
  }
};

// --- refinement (host) -------------------------------------------------------------------------

/// The length of a series of `length` samples refined by r: (length - 1) r + 1.
constexpr index_t refined_length(index_t length, index_t r) noexcept {
  return length > 0 ? (length - 1) * r + 1 : 0;
}

namespace detail {
/// Checks r >= 1 and that the refined series' (length - 1) r + 1 samples of `channels` values
/// fit index_t (beyond, the length wrapped around and refine wrote out of bounds).
inline void check_refinement(index_t length, index_t r, index_t channels) {
  require(r >= 1, "refinement factor r must be >= 1, got ", r);
  index_t const limit = std::numeric_limits<index_t>::max() / std::max<index_t>(channels, 1);
  require(length <= 1 || r <= (limit - 1) / (length - 1), "refining ", length, " samples by r = ",
          r, " overflows the index type");
}
}  // namespace detail

/// Writes x refined by r >= 1 to out ((length - 1) r + 1 samples, x's channels; a buffer apart
/// from x): sample k r + s
/// is (1 - s/r) x_k + (s/r) x_{k+1}, s = 0..r-1, and the last sample is x's last.
template <class T>
  requires std::floating_point<std::remove_const_t<T>>
void refine(series_view<T> x, index_t r, series_view<std::remove_const_t<T>> out) {
  detail::check_refinement(x.length, r, x.channels);
  detail::require((out.data || out.length == 0) && out.length == refined_length(x.length, r) &&
                      out.channels == x.channels,
                  "out must be (", refined_length(x.length, r), ", ", x.channels, "), got (",
                  out.length, ", ", out.channels, ")");
  // written in place, the later samples read values already overwritten
  detail::check_disjoint({detail::region(out, "out")}, {detail::region(x, "x")});
  using U = std::remove_const_t<T>;
  if (x.length == 0) return;
  for (index_t k = 0; k + 1 < x.length; ++k)
    for (index_t s = 0; s < r; ++s) {
      U const w = static_cast<U>(s) / static_cast<U>(r);
      for (index_t c = 0; c < x.channels; ++c)
        out(k * r + s, c) = s == 0 ? x(k, c) : (U(1) - w) * x(k, c) + w * x(k + 1, c);
    }
  for (index_t c = 0; c < x.channels; ++c) out(out.length - 1, c) = x(x.length - 1, c);
}

/// x refined by r >= 1, as a new row-major buffer ((length - 1) r + 1, channels).
template <class T>
  requires std::floating_point<std::remove_const_t<T>>
std::vector<std::remove_const_t<T>> refine(series_view<T> x, index_t r) {
  detail::check_refinement(x.length, r, x.channels);
  std::vector<std::remove_const_t<T>> out(
      static_cast<std::size_t>(refined_length(x.length, r) * x.channels));
  refine(x, r, series_view<std::remove_const_t<T>>{out.data(), refined_length(x.length, r),
                                                   x.channels});
  return out;
}

/// The adjoint (transpose) of refine: given g_refined = dF/d(refine(x, r)), adds dF/dx to gx
/// (x's shape, length = (g_refined.length - 1) / r + 1; a buffer apart from g_refined). Chain
/// rule for a measure of refined series: value_and_grad(m, refine(x), refine(y), gxr, gyr),
/// then refine_adjoint(gxr, r, gx).
template <class T>
  requires std::floating_point<std::remove_const_t<T>>
void refine_adjoint(series_view<T> g_refined, index_t r, series_view<std::remove_const_t<T>> gx) {
  detail::check_refinement(gx.length, r, gx.channels);
  detail::require((gx.data || gx.length == 0) && refined_length(gx.length, r) == g_refined.length &&
                      gx.channels == g_refined.channels,
                  "gx must be (", gx.length, ", ", gx.channels, ") with (length - 1) * ", r,
                  " + 1 = ", g_refined.length, " and ", g_refined.channels, " channels");
  detail::check_disjoint({detail::region(gx, "gx")}, {detail::region(g_refined, "g_refined")});
  using U = std::remove_const_t<T>;
  if (gx.length == 0) return;
  for (index_t k = 0; k + 1 < gx.length; ++k)
    for (index_t s = 0; s < r; ++s) {
      U const w = static_cast<U>(s) / static_cast<U>(r);
      for (index_t c = 0; c < gx.channels; ++c) {
        U const g = g_refined(k * r + s, c);
        if (s == 0) {
          gx(k, c) += g;
        } else {
          gx(k, c) += (U(1) - w) * g;
          gx(k + 1, c) += w * g;
        }
      }
    }
  for (index_t c = 0; c < gx.channels; ++c) gx(gx.length - 1, c) += g_refined(g_refined.length - 1, c);
}

}  // namespace resilin

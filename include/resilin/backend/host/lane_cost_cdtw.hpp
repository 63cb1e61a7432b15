#pragma once
// The vectorised lane engine of cdtw_cost (see lane_cost.hpp): x_i and x_{i-1} of the strip in
// registers, y reversed and channel-major with padding (y_j at p, y_{j-1} at p + 1), the three
// segment integrals of cost/cdtw.hpp on whole vectors. The generic engine called cdtw_cost::step
// once per lane: grid CDTW took 9.4 ns per cell for a value, soft-CDTW 12.4 (1000 x 1000, double,
// AVX-512).
#include <array>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/cost/cdtw.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// The costs as cdtw_cost::step forms them: per channel the form |a0|^2 + <a0, a1> + |a1|^2 of
/// each move, summed over the channels, times the move's L / 3; 0 for the moves without a
/// predecessor in the grid (the diagonal into (0, 0): the free origin). A form that overflowed
/// takes cdtw_cost::segment_cost's scaled evaluation, lane by lane. The expressions are the
/// scalar ones on vectors; a build that contracts multiply-adds may still round them apart from
/// the scalar calls by an ulp, so values agree with the generic engine to a few ulp (and within
/// this engine S(x, y) = S(y, x) bit for bit: the costs are their own transpose). Gradients: the
/// spread of cdtw_cost::step_grad, summed per strip (x) and per pair (y).
template <class T>
struct cdtw_lane_cost : strip_series<T, true> {
  using V = simd::pack<T>;
  using M = typename V::mask;
  using I = typename V::int_type;
  using base = strip_series<T, true>;
  T w_diag = 0, w_up = 0, w_left = 0;  // L / 3 of each move

  // The cost is its own transpose (up and left trade places with x and y, and du with dv).
  void begin_pair(transposed_cost<cdtw_cost> const& cost, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    begin_pair(cost.inner, xs, ys, gxs, gys);
  }
  void begin_pair(cdtw_cost const&, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    base::bind(xs, ys, gxs, gys);
    T const du = cdtw_cost::spacing<T>(xs.length), dv = cdtw_cost::spacing<T>(ys.length);
    T const third = T(1) / T(3);
    w_diag = cdtw_cost::diagonal_length(du, dv) * third;
    w_up = du * third;
    w_left = dv * third;
  }

  RESILIN_INLINE step3<V> costs(int q, index_t t, M) noexcept {
    V sd(T(0)), su(T(0)), sl(T(0));
    this->for_each_channel(q, t, [&](auto const& o) __attribute__((always_inline)) {
      V const a1 = o.xi - o.yj;
      sd += form(o.xp - o.yp, a1);
      su += form(o.xp - o.yj, a1);
      sl += form(o.xi - o.yp, a1);
    });
    auto const [rows, cols] = first_row_and_column(q, t);
    V const zero(T(0));
    step3<V> c{simd::select(rows | cols, zero, weighted(w_diag, sd)), simd::select(rows, zero, weighted(w_up, su)),
               simd::select(cols, zero, weighted(w_left, sl))};
    if (simd::any(overflowed(c.diag) | overflowed(c.up) | overflowed(c.left))) [[unlikely]]
      return scaled_costs(q, t, c);
    return c;
  }

  /// Adds the moves' uses g (0 outside the band) times the costs' partials: w (2 a0 + a1) to the
  /// sample pair a0 reads and w (a0 + 2 a1) to a1's (plus to x, minus to y).
  RESILIN_INLINE void accumulate(int q, index_t t, M, step3<V> const& g) noexcept {
    if (this->overflow) [[unlikely]] accumulate_of<true>(q, t, g);
    else accumulate_of<false>(q, t, g);
  }

 private:
  static RESILIN_INLINE V form(V a0, V a1) noexcept { return a0 * a0 + a0 * a1 + a1 * a1; }
  /// w s for a form s >= 0; +inf for a form that overflowed (negative or NaN).
  static RESILIN_INLINE V weighted(T w, V s) noexcept {
    V const inf(math::infinity<T>());
    return simd::select(V(T(0)) <= s, V(w) * s, inf);
  }
  /// A cost is never NaN (weighted() gives +inf for a NaN form): overflowed means +inf.
  static RESILIN_INLINE M overflowed(V c) noexcept { return c == V(math::infinity<T>()); }

  /// Lanes in the grid's first row (no up or diagonal move) and first column (no left or diagonal).
  RESILIN_INLINE std::array<M, 2> first_row_and_column(int q, index_t t) const noexcept {
    M rows{}, cols{};
    // row i0 + qW + k and column t - qW - k: only the first strip's first vector, and the
    // vectors of the steps t - qW < W, hold such lanes
    if (this->i0 + q * base::W > 0 && t - q * base::W >= base::W) return {rows, cols};
    for (int k = 0; k < base::W; ++k) {
      rows[k] = this->i0 + q * base::W + k == 0 ? I(-1) : I(0);
      cols[k] = t - q * base::W - k == 0 ? I(-1) : I(0);
    }
    return {rows, cols};
  }

  /// The lanes whose form overflowed, through cdtw_cost::segment_cost (one call per lane and move).
  [[gnu::noinline, gnu::cold]] step3<V> scaled_costs(int q, index_t t, step3<V> c) const noexcept {
    index_t const d = this->x.channels;
    for (int k = 0; k < base::W; ++k) {
      index_t const i = this->i0 + q * base::W + k, j = t - q * base::W - k;
      if (i < 0 || i >= this->x.length || j < 0 || j >= this->y.length) continue;
      T const* const xi = this->x.row(i);
      T const* const yj = this->y.row(j);
      if (i > 0 && j > 0 && !(c.diag[k] < math::infinity<T>()))
        c.diag.set(k, cdtw_cost::segment_cost(w_diag, this->x.row(i - 1), this->y.row(j - 1), xi, yj, d));
      if (i > 0 && !(c.up[k] < math::infinity<T>()))
        c.up.set(k, cdtw_cost::segment_cost(w_up, this->x.row(i - 1), yj, xi, yj, d));
      if (j > 0 && !(c.left[k] < math::infinity<T>()))
        c.left.set(k, cdtw_cost::segment_cost(w_left, xi, this->y.row(j - 1), xi, yj, d));
    }
    return c;
  }

  template <bool Guard>
  RESILIN_INLINE void accumulate_of(int q, index_t t, step3<V> const& g) noexcept {
    V const two(T(2)), zero(T(0));
    // the first row's and column's moves have no predecessor: the diagonal into (0, 0), whose
    // use is the whole adjoint, costs nothing (the free origin)
    auto const [rows, cols] = first_row_and_column(q, t);
    V const wd = simd::select(rows | cols, zero, g.diag * V(w_diag));
    V const wu = simd::select(rows, zero, g.up * V(w_up)), wl = simd::select(cols, zero, g.left * V(w_left));
    this->for_each_channel(q, t, [&](auto const& o) __attribute__((always_inline)) {
      V const a1 = o.xi - o.yj;
      V const d0 = o.xp - o.yp, u0 = o.xp - o.yj, l0 = o.xi - o.yp;  // a0 of the diagonal, up and left moves
      V const gd0 = guarded_product<Guard>(wd, two * d0 + a1), gd1 = guarded_product<Guard>(wd, d0 + two * a1);
      V const gu0 = guarded_product<Guard>(wu, two * u0 + a1), gu1 = guarded_product<Guard>(wu, u0 + two * a1);
      V const gl0 = guarded_product<Guard>(wl, two * l0 + a1), gl1 = guarded_product<Guard>(wl, l0 + two * a1);
      this->gxrows[o.u] += (gd1 + gu1) + (gl0 + gl1);
      this->gxprev[o.u] += gd0 + gu0;
      (V::load(o.gy) - ((gd1 + gu0) + (gu1 + gl1))).store(o.gy);
      (V::load(o.gy + 1) - (gd0 + gl0)).store(o.gy + 1);
    });
  }
};

template <class T>
struct lane_cost_for<T, cdtw_cost> { using type = cdtw_lane_cost<T>; };
template <class T>
struct lane_cost_for<T, transposed_cost<cdtw_cost>> { using type = cdtw_lane_cost<T>; };

}  // namespace resilin::host_detail

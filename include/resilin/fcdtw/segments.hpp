#pragma once
// The closed form of objective.hpp one warp segment at a time, for work split over threads
// (spec/cdtw.md B.4.2): a segment's pieces exactly as the sequential sweep produces them, the
// segment's value and warp adjoints into its own two slots, and the series gradient of one
// knot gathered from the few segments that reach it. The GPU's block layouts (fcdtw/cuda) and
// the block fit (block_fit.hpp) share these; RESILIN_HD, no allocation.
#include <resilin/core/config.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/warp.hpp>

namespace resilin::fcdtw::detail {

/// The smallest q in [1, n] with s.knot(q) > value (n if none): where the sequential sweep's
/// knot pointer stands when it enters a segment starting at `value`.
template <class T>
RESILIN_HD index_t first_knot_above(interpolant<T> const& s, T value) noexcept {
  index_t lo = 1, hi = s.length();  // answer in [lo, hi]
  while (lo < hi) {
    index_t const mid = lo + (hi - lo) / 2;
    if (s.knot(mid) > value) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/// The pieces of warp segment j alone, exactly as for_each_piece produces them (the same
/// sweep, sweep_segment), so segments can run on different threads: the knot pointers start
/// where the sequential sweep's stand on entering segment j (binary search).
template <class T, class Visit>
RESILIN_HD void for_each_piece_of_segment(interpolant<T> const& x, interpolant<T> const& y,
                                          warp_view<T> const& phi, index_t j,
                                          Visit& visit) noexcept {
  index_t qx = first_knot_above(x, phi[j]), qy = first_knot_above(y, phi.knot(j));
  sweep_knots<T> k;
  sweep_segment(x, y, phi, j, qx, qy, k, visit);
}

/// The segments j = first, first + stride, ... < K of one pair: their summed F; with slots
/// (2K values) also segment j's adjoints of v_j (slot 2j) and v_{j+1} (slot 2j + 1).
template <class T>
RESILIN_HD T strided_segments(interpolant<T> const& x, interpolant<T> const& y,
                              warp_view<T> const& phi, path_norm norm, index_t first,
                              index_t stride, T* slots) noexcept {
  index_t const K = phi.segments();
  compensated_sum<T> total{};
  for (index_t j = first; j < K; j += stride) {
    if (slots) {
      slots[2 * j] = slots[2 * j + 1] = T(0);
      // Base slots - j + 2j: the visitor's dv[j], dv[j + 1] land on this segment's two slots.
      objective_grads<T> og{};
      og.dv = slots + j;
      gradient_visitor<T> visit{x, y, phi, norm, og};
      for_each_piece_of_segment(x, y, phi, j, visit);
      total.add(visit.total.value());
    } else {
      value_visitor<T> visit{x, y, norm};
      for_each_piece_of_segment(x, y, phi, j, visit);
      total.add(visit.total.value());
    }
  }
  return total.value();
}

/// dF/dv_k from one pair's segment slots (2K values): the right slot of segment k - 1 plus the
/// left slot of segment k (the host adds them in this order too).
template <class T>
RESILIN_HD T combine_slots(T const* slots, index_t K, index_t k) noexcept {
  T acc = T(0);
  if (k > 0) acc += slots[2 * (k - 1) + 1];
  if (k < K) acc += slots[2 * k];
  return acc;
}

/// dF/d(knot `knot`, channel c) of x (on_x) or y, summed over pieces in visiting order: the
/// mass-matrix rows L (2a + b)/3, L (a + 2b)/3 spread with the piece's interpolation weights.
template <class T>
struct knot_gather {
  interpolant<T> x, y;
  path_norm norm;
  index_t knot, c;
  bool on_x;
  T sum = T(0);

  RESILIN_HD void operator()(piece<T> const& p) noexcept {
    index_t const s = on_x ? p.sx : p.sy;
    if (s != knot - 1 && s != knot) return;
    piece_geometry<T> const geo(p, norm);
    T const a = geo.difference(x, y, p, false, c), b = geo.difference(x, y, p, true, c);
    T const ga = geo.length * (T(2) * a + b) / T(3);
    T const gb = geo.length * (a + T(2) * b) / T(3);
    T const w0 = on_x ? geo.wx0 : geo.wy0, w1 = on_x ? geo.wx1 : geo.wy1;
    T const part = s == knot ? (T(1) - w0) * ga + (T(1) - w1) * gb : w0 * ga + w1 * gb;
    if (on_x) sum += part; else sum -= part;
  }
};

/// The first warp segment j in [0, K) whose end value (on_values: v_{j+1}; else g_{j+1}) is
/// >= lo; K when none.
template <class T>
RESILIN_HD index_t first_segment_reaching(warp_view<T> const& phi, T lo, bool on_values) noexcept {
  index_t a = 0, b = phi.segments();
  while (a < b) {
    index_t const mid = a + (b - a) / 2;
    T const end = on_values ? phi[mid + 1] : phi.knot(mid + 1);
    if (end >= lo) b = mid; else a = mid + 1;
  }
  return a;
}

/// dF/dx (on_x) or dF/dy at flat index item = knot * channels + c of a (max_length, channels)
/// slice; 0 on the padding rows beyond the series' length.
template <class T>
RESILIN_HD T gather_knot(interpolant<T> const& x, interpolant<T> const& y,
                         warp_view<T> const& phi, path_norm norm, index_t item,
                         bool on_x) noexcept {
  interpolant<T> const& s = on_x ? x : y;
  index_t const d = x.channels(), knot = item / d, c = item % d;
  index_t const n = s.length(), K = phi.segments();
  if (knot >= n) return T(0);
  T const lo = s.knot(knot > 0 ? knot - 1 : 0), hi = s.knot(knot + 1 < n ? knot + 1 : n - 1);
  knot_gather<T> visit{x, y, norm, knot, c, on_x};
  for (index_t j = first_segment_reaching(phi, lo, on_x); j < K; ++j) {
    if ((on_x ? phi[j] : phi.knot(j)) > hi) break;
    for_each_piece_of_segment(x, y, phi, j, visit);
  }
  return visit.sum;
}

}  // namespace resilin::fcdtw::detail

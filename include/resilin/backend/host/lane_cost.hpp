#pragma once
// Step costs and gradient accumulation for the lanes of a strip. The generic engine calls the
// cost model once per in-band lane (any cost model works unchanged); the DTW engine computes
// the point distances of a whole vector at once from x rows held in registers and a reversed
// copy of y, and accumulates the gradient the same way. Both are host-only details of the
// strip traversal: the cost model itself stays the one RESILIN_HD definition.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/dtw.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Rows per strip: K vectors of W lanes. K independent cells per step hide the latency of the
/// soft-min (exp, log) that a single dependency chain would expose.
template <class T>
inline constexpr int strip_vectors = 4;
template <class T>
inline constexpr int strip_rows = strip_vectors<T> * simd::lanes<T>;

/// Which lanes of a strip are in the band at step t: lane o = qW + k (row i0 + o) holds column
/// t - o, in band iff start[o] <= t <= end[o]. The bounds are integer lanes relative to t0
/// (step(t) makes the step's): float bounds lost the exact step past 2^24 (an odd first step
/// rounded up, and a strip began one step late: float DTW of 2^24 + 300 samples, radius 1,
/// 348 for 336). Relative, 32-bit lanes (float) hold strips of fewer than 2^31 steps.
template <class T>
struct strip_geometry {
  using V = simd::pack<T>;
  using M = typename V::mask;
  using I = typename V::int_type;
  static constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  M start[K], end[K];  // relative to t0
  index_t t0 = 0, t1 = -1;
  index_t full0 = 0, full1 = -1;  // steps at which every lane is in the band (none if empty)
  // steps at which some lane of vector q is in the band (none if busy_last < busy_first): in a
  // narrow band most vectors of a step are idle (radius 1: one or two of K)
  index_t busy_first[K], busy_last[K];
  index_t i0 = 0;
  int rows = 0;  // valid rows in this strip

  strip_geometry(band_geometry const& band, index_t n, index_t first_row) noexcept : i0(first_row) {
    t0 = i0 < n ? band.row(i0).lo : 0;  // lane 0 (row i0) starts first: rows' spans never move back
    for (int q = 0; q < K; ++q) {
      busy_first[q] = 0;
      busy_last[q] = -1;
      for (int k = 0; k < W; ++k) {
        int const o = q * W + k;
        index_t const i = i0 + o;
        if (i < n) {
          index_range const r = band.row(i);
          start[q][k] = static_cast<I>(r.lo + o - t0);
          end[q][k] = static_cast<I>(r.hi + o - t0);
          if (busy_last[q] < busy_first[q] || r.lo + o < busy_first[q]) busy_first[q] = r.lo + o;
          if (r.hi + o > busy_last[q]) busy_last[q] = r.hi + o;
          if (r.hi + o > t1) t1 = r.hi + o;
          if (rows == 0 || r.lo + o > full0) full0 = r.lo + o;
          if (rows == 0 || r.hi + o < full1) full1 = r.hi + o;
          ++rows;
        } else {
          start[q][k] = I(1);
          end[q][k] = I(0);
        }
      }
    }
    if (rows < H) full1 = full0 - 1;  // lanes past the last row are never in the band
  }
  /// Calls step(t, std::true_type) where some lane may be out of the band and
  /// step(t, std::false_type) where none is, for t from t0 to t1 (Reverse: t1 down to t0).
  template <bool Reverse = false, class Step>
  RESILIN_INLINE void for_each_step(Step&& step) const {
    index_t const a = std::max(full0, t0), b = std::min(full1, t1);
    if (a > b) {
      if constexpr (Reverse) for (index_t t = t1; t >= t0; --t) step(t, std::true_type{});
      else for (index_t t = t0; t <= t1; ++t) step(t, std::true_type{});
      return;
    }
    if constexpr (Reverse) {
      for (index_t t = t1; t > b; --t) step(t, std::true_type{});
      for (index_t t = b; t >= a; --t) step(t, std::false_type{});
      for (index_t t = a - 1; t >= t0; --t) step(t, std::true_type{});
    } else {
      for (index_t t = t0; t < a; ++t) step(t, std::true_type{});
      for (index_t t = a; t <= b; ++t) step(t, std::false_type{});
      for (index_t t = b + 1; t <= t1; ++t) step(t, std::true_type{});
    }
  }
  /// Step t as inside() compares it.
  RESILIN_INLINE M step(index_t t) const noexcept { return M{} + static_cast<I>(t - t0); }
  RESILIN_INLINE M inside(int q, M step_t) const noexcept {
    return (start[q] <= step_t) & (step_t <= end[q]);
  }
  /// Whether no lane of vector q is in the band at step t.
  RESILIN_INLINE bool idle(int q, index_t t) const noexcept { return t < busy_first[q] || t > busy_last[q]; }
};

/// Any cost model: one scalar call per in-band lane.
template <class T, class Cost>
struct generic_lane_cost {
  using V = simd::pack<T>;
  static constexpr int W = V::width, K = strip_vectors<T>;
  Cost cost;
  series_view<T const> x, y;
  series_view<T> gx, gy;
  index_t i0 = 0;

  void begin_pair(Cost const& c, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    cost = c;
    x = xs;
    y = ys;
    gx = gxs;
    gy = gys;
  }
  void begin_strip(index_t first_row) { i0 = first_row; }
  void end_strip() {}
  void end_pair() {}

  RESILIN_INLINE step3<V> costs(int q, index_t t, typename V::mask in) const noexcept {
    alignas(64) T cd[W], cu[W], cl[W];
    for (int k = 0; k < W; ++k) {
      if (in[k]) {
        step3<T> const c = cost.step(x, y, i0 + q * W + k, t - q * W - k);
        cd[k] = c.diag;
        cu[k] = c.up;
        cl[k] = c.left;
      } else {
        cd[k] = cu[k] = cl[k] = T(0);
      }
    }
    return {V::load(cd), V::load(cu), V::load(cl)};
  }

  RESILIN_INLINE void accumulate(int q, index_t t, typename V::mask in, step3<V> const& g) {
    for (int k = 0; k < W; ++k)
      if (in[k])
        cost.step_grad(x, y, i0 + q * W + k, t - q * W - k, step3<T>{g.diag[k], g.up[k], g.left[k]},
                       gx, gy);
  }
};

/// weight * partial; with Guard (strip_series::overflow), 0 where that is 0 * inf: a zero
/// weight or adjoint times an overflowed partial. A function, not a lambda: GCC left a lambda of
/// this kind out of line in soft-MSM's hot loop (value+grad 1.1-1.28x).
template <bool Guard, class V>
RESILIN_INLINE V guarded_product(V weight, V partial) noexcept {
  if constexpr (Guard) return math::zero_if_nan(weight * partial, V(typename V::value_type(0)));
  else return weight * partial;
}

/// The largest sample magnitude of x and y.
template <class T>
T largest_magnitude(series_view<T const> x, series_view<T const> y) noexcept {
  T largest = T(0);
  for (series_view<T const> s : {x, y})
    for (index_t k = 0; k < s.size(); ++k) largest = math::max(largest, math::abs(s.data[k]));
  return largest;
}

/// What the vectorised engines share: the strip's x rows (and, for costs that read x_{i-1},
/// the rows above) in registers, y reversed and channel-major with padding so that the lanes of
/// a vector read consecutive entries (y_j at ypos, y_{j-1} at ypos + 1), and the gradients
/// accumulated in the same layouts and written back per strip (x) and per pair (y).
template <class T, bool PreviousRow>
struct strip_series {
  using V = simd::pack<T>;
  static constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  series_view<T const> x, y;
  series_view<T> gx, gy;
  index_t i0 = 0, pad = 0, stride = 0;
  std::vector<T> yrev, gyrev;  // y(j, c) at c * stride + (m-1-j) + pad
  std::vector<V> xrows, gxrows, xprev, gxprev;  // (K, channels): rows i0 + qW + k (and k - 1)
  /// Whether differences of samples, or the sums of up to eight of them that gradients form,
  /// can overflow to +-inf (a sample beyond an eighth of the largest finite value): then the
  /// gradients guard their products against 0 * inf (a zero weight or adjoint times an infinite
  /// partial), which costs soft-MSM's value+grad 9-14 % where it is always on. The unguarded
  /// expressions are the guarded ones without the guards: the same bits, FMA contraction too.
  bool overflow = false;
  T largest = T(0);  // the largest sample magnitude of x and y

  void bind(series_view<T const> xs, series_view<T const> ys, series_view<T> gxs,
            series_view<T> gys) {
    x = xs;
    y = ys;
    gx = gxs;
    gy = gys;
    T const eighth = std::numeric_limits<T>::max() / T(8);
    largest = largest_magnitude(xs, ys);
    overflow = !(largest <= eighth);
    index_t const m = y.length, d = y.channels;
    pad = 2 * H;
    stride = m + 2 * pad;
    yrev.assign(static_cast<std::size_t>(stride * d), T(0));
    for (index_t c = 0; c < d; ++c)
      for (index_t j = 0; j < m; ++j) yrev[static_cast<std::size_t>(c * stride + (m - 1 - j) + pad)] = y(j, c);
    if (gy.data) gyrev.assign(yrev.size(), T(0));
    auto const rows = static_cast<std::size_t>(K * d);
    xrows.resize(rows);
    if (gx.data) gxrows.resize(rows);
    if constexpr (PreviousRow) {
      xprev.resize(rows);
      if (gx.data) gxprev.resize(rows);
    }
  }

  void begin_strip(index_t first_row) {
    i0 = first_row;
    index_t const d = x.channels;
    for (int q = 0; q < K; ++q)
      for (index_t c = 0; c < d; ++c) {
        V r(T(0)), rp(T(0));
        for (int k = 0; k < W; ++k) {
          index_t const i = i0 + q * W + k;
          if (i < x.length) r.set(k, x(i, c));
          if (PreviousRow && i >= 1 && i - 1 < x.length) rp.set(k, x(i - 1, c));
        }
        auto const u = static_cast<std::size_t>(q * d + c);
        xrows[u] = r;
        if (gx.data) gxrows[u] = V(T(0));
        if constexpr (PreviousRow) {
          xprev[u] = rp;
          if (gx.data) gxprev[u] = V(T(0));
        }
      }
  }

  void end_strip() {
    if (!gx.data) return;
    index_t const d = x.channels;
    for (int q = 0; q < K; ++q)
      for (int k = 0; k < W; ++k) {
        index_t const i = i0 + q * W + k;
        if (i >= x.length) continue;
        for (index_t c = 0; c < d; ++c) {
          auto const u = static_cast<std::size_t>(q * d + c);
          gx(i, c) += gxrows[u][k];
          if constexpr (PreviousRow)
            if (i >= 1) gx(i - 1, c) += gxprev[u][k];
        }
      }
  }

  void end_pair() {
    if (!gy.data) return;
    index_t const m = y.length;
    for (index_t c = 0; c < y.channels; ++c)
      for (index_t j = 0; j < m; ++j) gy(j, c) += gyrev[static_cast<std::size_t>(c * stride + (m - 1 - j) + pad)];
  }

  /// Lanes k of vector q read y at columns t - qW - k: W consecutive reversed entries.
  RESILIN_INLINE index_t ypos(int q, index_t t) const noexcept { return (y.length - 1 - (t - q * W)) + pad; }
  RESILIN_INLINE T const* ychannel(index_t c) const noexcept { return yrev.data() + c * stride; }
  RESILIN_INLINE T* gychannel(index_t c) noexcept { return gyrev.data() + c * stride; }

  /// One channel's operands of vector q at step t: x_i, x_{i-1} (PreviousRow), y_j, y_{j-1},
  /// the index of its x rows and accumulators (u), and y_j's gradient accumulator (y_{j-1}'s
  /// follows it).
  struct channel_operands {
    std::size_t u;
    V xi, xp, yj, yp;
    T* gy;
  };
  /// f(channel_operands) for each channel in order, as the cost engines that read the row above
  /// and y_{j-1} (MSM, CDTW) form their costs and spread their gradients.
  template <class F>
  RESILIN_INLINE void for_each_channel(int q, index_t t, F&& f) {
    index_t const d = x.channels, p = ypos(q, t);
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      T const* const yb = ychannel(ch) + p;
      V const xp = PreviousRow ? xprev[u] : V(T(0));
      f(channel_operands{u, xrows[u], xp, V::load(yb), V::load(yb + 1), gy.data ? gychannel(ch) + p : nullptr});
    }
  }
};

/// dtw_cost with a known point distance: whole vectors of distances per step.
template <class T, class Distance>
struct dtw_lane_cost : strip_series<T, false> {
  using V = simd::pack<T>;
  using base = strip_series<T, false>;
  std::vector<V> adjoints;  // one strip's adjoints (accumulate_adjoints)

  void begin_pair(dtw_cost<Distance> const&, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    base::bind(xs, ys, gxs, gys);
  }
  // DTW costs are symmetric: the transposed problem (value-only, m > n) is the same cost model.
  void begin_pair(transposed_cost<dtw_cost<Distance>> const& c, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    begin_pair(c.inner, xs, ys, gxs, gys);
  }

  RESILIN_INLINE step3<V> costs(int q, index_t t, typename V::mask) const noexcept {
    index_t const d = this->x.channels, p = this->ypos(q, t);
    V s(T(0));
RESILIN_UNROLL(4)
    for (index_t c = 0; c < d; ++c)
      s += Distance::term(this->xrows[static_cast<std::size_t>(q * d + c)] -
                          V::load(this->ychannel(c) + p));
    return {s, s, s};
  }

  RESILIN_INLINE void accumulate(int q, index_t t, typename V::mask, step3<V> const& g) {
    accumulate_adjoint(q, t, g.diag + g.up + g.left);
  }

  /// A buffer for the adjoints of one strip: K packs per step (see accumulate_adjoints).
  V* adjoint_buffer(index_t steps) {
    adjoints.resize(static_cast<std::size_t>(steps * this->K));
    return adjoints.data();
  }

  /// accumulate_adjoint for every step of a strip at once, from adj[(t - t0) * K + q], channel
  /// by channel: the K partial sums of x_i stay in registers for any channel count, where the
  /// step-by-step form keeps K * channels of them (spilled for several channels). The sums run
  /// in the same order as the step-by-step form (t descending), so the bits are the same.
  void accumulate_adjoints(index_t t0, index_t t1, V const* adj) {
    if (this->overflow) [[unlikely]] adjoints_of<true>(t0, t1, adj);
    else adjoints_of<false>(t0, t1, adj);
  }

  /// The gradient of a uniform step cost needs only u = the adjoint of the cell (the sum of its
  /// move uses), 0 in lanes outside the band.
  RESILIN_INLINE void accumulate_adjoint(int q, index_t t, V u) {
    if (this->overflow) [[unlikely]] adjoint_of<true>(q, t, u);
    else adjoint_of<false>(q, t, u);
  }

 private:
  template <bool Guard>
  void adjoints_of(index_t t0, index_t t1, V const* adj) {
    constexpr int vectors = base::K;
    index_t const d = this->x.channels;
    for (index_t c = 0; c < d; ++c) {
      V xr[vectors], acc[vectors];
      for (int q = 0; q < vectors; ++q) {
        xr[q] = this->xrows[static_cast<std::size_t>(q * d + c)];
        acc[q] = this->gxrows[static_cast<std::size_t>(q * d + c)];
      }
      T const* const yc = this->ychannel(c);
      T* const gyc = this->gychannel(c);
      for (index_t t = t1; t >= t0; --t) {
        V const* const a = adj + (t - t0) * vectors;
RESILIN_UNROLL(8)
        for (int q = 0; q < vectors; ++q) {
          index_t const p = this->ypos(q, t);
          V const part = guarded_product<Guard>(a[q], Distance::partial(xr[q], V::load(yc + p)));
          acc[q] += part;
          (V::load(gyc + p) - part).store(gyc + p);
        }
      }
      for (int q = 0; q < vectors; ++q) this->gxrows[static_cast<std::size_t>(q * d + c)] = acc[q];
    }
  }

  template <bool Guard>
  RESILIN_INLINE void adjoint_of(int q, index_t t, V u) {
    index_t const d = this->x.channels, p = this->ypos(q, t);
RESILIN_UNROLL(4)
    for (index_t c = 0; c < d; ++c) {
      auto const r = static_cast<std::size_t>(q * d + c);
      V const part = guarded_product<Guard>(u, Distance::partial(this->xrows[r], V::load(this->ychannel(c) + p)));
      this->gxrows[r] += part;
      T* gyp = this->gychannel(c) + p;
      (V::load(gyp) - part).store(gyp);
    }
  }
};

template <class T, class Cost>
struct lane_cost_for { using type = generic_lane_cost<T, Cost>; };
template <class T, vector_distance Distance>
struct lane_cost_for<T, dtw_cost<Distance>> { using type = dtw_lane_cost<T, Distance>; };
template <class T, vector_distance Distance>
struct lane_cost_for<T, transposed_cost<dtw_cost<Distance>>> { using type = dtw_lane_cost<T, Distance>; };

/// The lane engine of a cost model on the host.
template <class T, class Cost>
using lane_cost = typename lane_cost_for<T, Cost>::type;

}  // namespace resilin::host_detail

#pragma once
// The vectorised lane engine of soft_msm_cost (see lane_cost.hpp): x_i and x_{i-1} of the strip
// in registers, y reversed and channel-major with padding (y_j at p, y_{j-1} at p + 1), the
// transition math of cost/soft_msm.hpp instantiated on SIMD packs, gradients accumulated as the
// DTW engine does plus one register set for the partials that land on x_{i-1}.
#include <vector>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/cost/soft_msm.hpp>

namespace resilin::host_detail {

/// x rows (x_i and x_{i-1}) of the strip in registers, y reversed and channel-major with
/// padding (y_j at p, y_{j-1} at p + 1), gradients accumulated as dtw_lane_cost does, plus one
/// more register set for the partials that land on x_{i-1}.
template <class T, class P>
struct soft_msm_lane_cost {
  using V = simd::pack<T>;
  static constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  T c = 1, gamma = 1, eps = T(1e-9);
  series_view<T const> x, y;
  series_view<T> gx, gy;
  index_t i0 = 0, pad = 0, stride = 0;
  std::vector<T> yrev, gyrev;
  std::vector<V> xrows, xprev, gxrows, gxprev;  // (K, channels)

  // Soft-MSM's cost is its own transpose (T is symmetric in p and o, and transposing swaps the
  // up and left moves along with x and y), so the transposed value-only problem uses it as is.
  void begin_pair(transposed_cost<soft_msm_cost<P>> const& cost, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    begin_pair(cost.inner, xs, ys, gxs, gys);
  }
  void begin_pair(soft_msm_cost<P> const& cost, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    c = static_cast<T>(cost.c);
    gamma = static_cast<T>(cost.gamma);
    eps = static_cast<T>(cost.eps);
    x = xs;
    y = ys;
    gx = gxs;
    gy = gys;
    index_t const m = y.length, d = y.channels;
    pad = 2 * H;
    stride = m + 2 * pad;
    yrev.assign(static_cast<std::size_t>(stride * d), T(0));
    for (index_t ch = 0; ch < d; ++ch)
      for (index_t j = 0; j < m; ++j) yrev[static_cast<std::size_t>(ch * stride + (m - 1 - j) + pad)] = y(j, ch);
    if (gy.data) gyrev.assign(yrev.size(), T(0));
    xrows.resize(static_cast<std::size_t>(K * d));
    xprev.resize(xrows.size());
    if (gx.data) {
      gxrows.resize(xrows.size());
      gxprev.resize(xrows.size());
    }
  }

  void begin_strip(index_t first_row) {
    i0 = first_row;
    index_t const d = x.channels;
    for (int q = 0; q < K; ++q)
      for (index_t ch = 0; ch < d; ++ch) {
        V r(T(0)), rp(T(0));
        for (int k = 0; k < W; ++k) {
          index_t const i = i0 + q * W + k;
          if (i < x.length) r.set(k, x(i, ch));
          if (i >= 1 && i - 1 < x.length) rp.set(k, x(i - 1, ch));
        }
        auto const u = static_cast<std::size_t>(q * d + ch);
        xrows[u] = r;
        xprev[u] = rp;
        if (gx.data) gxrows[u] = gxprev[u] = V(T(0));
      }
  }

  void end_strip() {
    if (!gx.data) return;
    index_t const d = x.channels;
    for (int q = 0; q < K; ++q)
      for (int k = 0; k < W; ++k) {
        index_t const i = i0 + q * W + k;
        if (i >= x.length) continue;
        for (index_t ch = 0; ch < d; ++ch) {
          auto const u = static_cast<std::size_t>(q * d + ch);
          gx(i, ch) += gxrows[u][k];
          if (i >= 1) gx(i - 1, ch) += gxprev[u][k];
        }
      }
  }

  void end_pair() {
    if (!gy.data) return;
    index_t const m = y.length;
    for (index_t ch = 0; ch < y.channels; ++ch)
      for (index_t j = 0; j < m; ++j) gy(j, ch) += gyrev[static_cast<std::size_t>(ch * stride + (m - 1 - j) + pad)];
  }

  RESILIN_INLINE index_t ypos(int q, index_t t) const noexcept { return (y.length - 1 - (t - q * W)) + pad; }

  RESILIN_INLINE step3<V> costs(int q, index_t t, typename V::mask) const noexcept {
    index_t const d = x.channels, p = ypos(q, t);
    V sd(T(0)), su(T(0)), sl(T(0));
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const xi = xrows[u], xp = xprev[u];
      V const yj = V::load(yrev.data() + ch * stride + p), yp = V::load(yrev.data() + ch * stride + p + 1);
      V const diff = xi - yj;
      sd += diff * diff;
      su += detail::soft_msm_transition<V, T>(xi, xp, yj, c, gamma, eps, nullptr);
      sl += detail::soft_msm_transition<V, T>(yj, yp, xi, c, gamma, eps, nullptr);
    }
    return {sd, su, sl};
  }

  RESILIN_INLINE void accumulate(int q, index_t t, typename V::mask, step3<V> const& g) {
    index_t const d = x.channels, p = ypos(q, t);
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const xi = xrows[u], xp = xprev[u];
      T const* yb = yrev.data() + ch * stride + p;
      V const yj = V::load(yb), yp = V::load(yb + 1);
      transition_partials<V> du, dl;
      (void)detail::soft_msm_transition<V, T>(xi, xp, yj, c, gamma, eps, &du);
      (void)detail::soft_msm_transition<V, T>(yj, yp, xi, c, gamma, eps, &dl);
      V const part = g.diag * (V(T(2)) * (xi - yj));
      gxrows[u] += part + g.up * du.v + g.left * dl.o;
      gxprev[u] += g.up * du.p;
      T* gyp = gyrev.data() + ch * stride + p;
      (V::load(gyp) - part + g.up * du.o + g.left * dl.v).store(gyp);
      (V::load(gyp + 1) + g.left * dl.p).store(gyp + 1);
    }
  }
};

template <class T, class P>
struct lane_cost_for<T, soft_msm_cost<P>> { using type = soft_msm_lane_cost<T, P>; };
template <class T, class P>
struct lane_cost_for<T, transposed_cost<soft_msm_cost<P>>> { using type = soft_msm_lane_cost<T, P>; };

}  // namespace resilin::host_detail

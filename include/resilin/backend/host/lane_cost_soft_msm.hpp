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
/// more register set for the partials that land on x_{i-1}. The backward takes the costs and
/// the partials of a cell from one evaluation of its transitions (costs_and_partials, then
/// accumulate_cached).
template <class T, class P>
struct soft_msm_lane_cost : strip_series<T, true> {
  using V = simd::pack<T>;
  using base = strip_series<T, true>;
  T c = 1, gamma = 1, eps = T(1e-9);

  // Soft-MSM's cost is its own transpose (T is symmetric in p and o, and transposing swaps the
  // up and left moves along with x and y), so the transposed value-only problem uses it as is.
  void begin_pair(transposed_cost<soft_msm_cost<P>> const& cost, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    begin_pair(cost.inner, xs, ys, gxs, gys);
  }
  void begin_pair(soft_msm_cost<P> const& cost, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    c = static_cast<T>(cost.c);
    gamma = static_cast<T>(cost.gamma);
    eps = static_cast<T>(cost.eps);
    base::bind(xs, ys, gxs, gys);
    partials.resize(static_cast<std::size_t>(2 * xs.channels * strip_vectors<T>));
  }

  RESILIN_INLINE step3<V> costs(int q, index_t t, typename V::mask) const noexcept {
    index_t const d = this->x.channels, p = this->ypos(q, t);
    V sd(T(0)), su(T(0)), sl(T(0));
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const xi = this->xrows[u], xp = this->xprev[u];
      T const* yb = this->ychannel(ch) + p;
      V const yj = V::load(yb), yp = V::load(yb + 1);
      V const diff = xi - yj;
      sd += diff * diff;
      su += detail::soft_msm_transition<V, T>(xi, xp, yj, c, gamma, eps, nullptr);
      sl += detail::soft_msm_transition<V, T>(yj, yp, xi, c, gamma, eps, nullptr);
    }
    return {sd, su, sl};
  }

  // The backward needs a cell's costs (for the move weights) and then the partials of its
  // transitions (for the gradient): both come from one evaluation of each transition, the
  // partials kept per vector and channel until accumulate_cached() of the same cells.
  static constexpr bool caches_partials = true;
  std::vector<transition_partials<V>> partials;   // (K vectors, channels, 2): up, left

  RESILIN_INLINE step3<V> costs_and_partials(int q, index_t t, typename V::mask) noexcept {
    index_t const d = this->x.channels, p = this->ypos(q, t);
    V sd(T(0)), su(T(0)), sl(T(0));
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const xi = this->xrows[u], xp = this->xprev[u];
      T const* yb = this->ychannel(ch) + p;
      V const yj = V::load(yb), yp = V::load(yb + 1);
      V const diff = xi - yj;
      sd += diff * diff;
      auto const k = 2 * u;
      su += detail::soft_msm_transition<V, T>(xi, xp, yj, c, gamma, eps, &partials[k]);
      sl += detail::soft_msm_transition<V, T>(yj, yp, xi, c, gamma, eps, &partials[k + 1]);
    }
    return {sd, su, sl};
  }

  /// Packs of vector q's partials (save_partials / load_partials: through a stored table).
  static index_t partial_packs(index_t channels) noexcept { return 6 * channels; }
  RESILIN_INLINE void save_partials(int q, V* out) const noexcept {
    index_t const d = this->x.channels;
    for (index_t ch = 0; ch < 2 * d; ++ch) {
      transition_partials<V> const& t = partials[static_cast<std::size_t>(2 * q * d + ch)];
      out[3 * ch] = t.v;
      out[3 * ch + 1] = t.p;
      out[3 * ch + 2] = t.o;
    }
  }
  RESILIN_INLINE void load_partials(int q, V const* in) noexcept {
    index_t const d = this->x.channels;
    for (index_t ch = 0; ch < 2 * d; ++ch)
      partials[static_cast<std::size_t>(2 * q * d + ch)] = {in[3 * ch], in[3 * ch + 1], in[3 * ch + 2]};
  }

  /// Adds the gradient of vector q's cells, whose costs_and_partials() came last for q.
  RESILIN_INLINE void accumulate_cached(int q, index_t t, typename V::mask, step3<V> const& g) {
    index_t const d = this->x.channels, p = this->ypos(q, t);
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const xi = this->xrows[u];
      T const* yb = this->ychannel(ch) + p;
      V const yj = V::load(yb);
      auto const k = 2 * u;
      add_gradient(u, ch, p, xi, yj, g, partials[k], partials[k + 1]);
    }
  }

 private:
  RESILIN_INLINE void add_gradient(std::size_t u, index_t ch, index_t p, V xi, V yj, step3<V> const& g,
                                   transition_partials<V> const& du, transition_partials<V> const& dl) {
    V const part = g.diag * (V(T(2)) * (xi - yj));
    this->gxrows[u] += part + g.up * du.v + g.left * dl.o;
    this->gxprev[u] += g.up * du.p;
    T* gyp = this->gychannel(ch) + p;
    (V::load(gyp) - part + g.up * du.o + g.left * dl.v).store(gyp);
    (V::load(gyp + 1) + g.left * dl.p).store(gyp + 1);
  }
};

template <class T, class P>
struct lane_cost_for<T, soft_msm_cost<P>> { using type = soft_msm_lane_cost<T, P>; };
template <class T, class P>
struct lane_cost_for<T, transposed_cost<soft_msm_cost<P>>> { using type = soft_msm_lane_cost<T, P>; };

}  // namespace resilin::host_detail

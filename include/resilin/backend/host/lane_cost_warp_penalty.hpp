#pragma once
// The lane engine of warp_penalty_cost (see lane_cost.hpp): the inner cost model's engine, its
// vertical and horizontal step costs raised by the penalty. Everything else (the gradient
// accumulation, cached partials, paired cells) is the inner engine's: the penalty has no
// partials.
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/cost/warp_penalty.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Inner: the inner cost model's lane engine (for transposed problems, that of the transposed
/// inner model: the penalty is the same on both moves, so it commutes with transposition).
template <class T, class Inner>
struct warp_penalty_lane_cost : Inner {
  using V = simd::pack<T>;
  T penalty = T(0);

  template <class Cost>
  void begin_pair(warp_penalty_cost<Cost> const& model, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    penalty = static_cast<T>(model.penalty);
    Inner::begin_pair(model.inner, xs, ys, gxs, gys);
  }
  template <class Cost>
  void begin_pair(transposed_cost<warp_penalty_cost<Cost>> const& model, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    penalty = static_cast<T>(model.inner.penalty);
    Inner::begin_pair(transposed_cost<Cost>{model.inner.inner}, xs, ys, gxs, gys);
  }

  RESILIN_INLINE step3<V> costs(int q, index_t t, typename V::mask in) noexcept {
    return penalised(Inner::costs(q, t, in));
  }
  /// Hides the inner engine's: the strip traversal calls it in place of costs() where the
  /// inner engine caches its partials.
  RESILIN_INLINE step3<V> costs_and_partials(int q, index_t t, typename V::mask in) noexcept
    requires requires(Inner& e, int k, index_t s, typename V::mask m) { e.costs_and_partials(k, s, m); }
  {
    return penalised(Inner::costs_and_partials(q, t, in));
  }

 private:
  RESILIN_INLINE step3<V> penalised(step3<V> s) const noexcept {
    V const w(penalty);
    return {s.diag, s.up + w, s.left + w};
  }
};

template <class T, class Cost>
struct lane_cost_for<T, warp_penalty_cost<Cost>> {
  using type = warp_penalty_lane_cost<T, lane_cost<T, Cost>>;
};
template <class T, class Cost>
struct lane_cost_for<T, transposed_cost<warp_penalty_cost<Cost>>> {
  using type = warp_penalty_lane_cost<T, lane_cost<T, transposed_cost<Cost>>>;
};

}  // namespace resilin::host_detail

#pragma once
// hard_min: the exact minimum (DTW, MSM). Its weights are one-hot on the minimum, ties broken
// diag > up > left, which makes the hard gradient the gradient along one optimal path.
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/math.hpp>

namespace resilin {

struct hard_min {
  void validate() const noexcept {}

  template <class V>
  RESILIN_HD RESILIN_INLINE V combine(step3<V> v) const noexcept {
    using math::min;
    return min(v.diag, min(v.up, v.left));
  }

  template <class V>
  RESILIN_HD RESILIN_INLINE step3<V> weights(step3<V> v) const noexcept {
    using math::select;
    V const m = combine(v);
    V const one(1), zero(0);
    auto const is_diag = v.diag == m;
    auto const is_up = v.up == m;
    V const wd = select(is_diag, one, zero);
    V const wu = select(is_diag, zero, select(is_up, one, zero));
    V const wl = select(is_diag, zero, select(is_up, zero, one));
    return {wd, wu, wl};
  }

  /// The tangent of weights(v): the one-hot weights are piecewise constant, so 0 wherever they
  /// are differentiable (everywhere but at ties).
  template <class V>
  RESILIN_HD step3<V> weights_tangent(step3<V> const&, step3<V> const&) const noexcept {
    return {V(0), V(0), V(0)};
  }
  /// The same along the step costs (soft_min::weights_tangent_along_costs): 0.
  template <class V>
  RESILIN_HD step3<V> weights_tangent_along_costs(step3<V> const&, step3<V> const&,
                                                  step3<V> const&) const noexcept {
    return {V(0), V(0), V(0)};
  }
  /// combine and weights, and the entropy of one-hot weights: 0.
  template <class V>
  RESILIN_HD value_weights_and_entropy<V> combine_weights_and_entropy(step3<V> v) const noexcept {
    return {combine(v), weights(v), V(0)};
  }
};

}  // namespace resilin

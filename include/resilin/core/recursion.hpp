#pragma once
// The one cell function of the alignment recursion, shared by every backend:
//     R(i, j) = smooth(R(i-1, j-1) + c.diag, R(i-1, j) + c.up, R(i, j-1) + c.left)
// with the virtual origin R(-1, -1) = 0 and every other out-of-grid or out-of-band predecessor
// +inf. `cell_weights` is its backward counterpart: the weight of each incoming move, which
// times the adjoint A(i, j) = d R(n-1, m-1) / d R(i, j) gives the expected use of the move.
// V is the value type (float, double, or a host SIMD pack of them).
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>

namespace resilin {

/// A cell's three candidates R(pred_k) + c_k, whose smooth minimum is R(i, j): the one place
/// they are formed, so that every pass that reads them (values, weights, tangents, entropies)
/// rounds them alike.
template <class V>
RESILIN_HD RESILIN_INLINE step3<V> cell_candidates(step3<V> const& cost, V r_diag, V r_up, V r_left) noexcept {
  return {r_diag + cost.diag, r_up + cost.up, r_left + cost.left};
}

template <class V, class Smooth>
RESILIN_HD RESILIN_INLINE V cell_value(Smooth const& smooth, step3<V> const& cost, V r_diag, V r_up,
                                       V r_left) noexcept {
  return smooth.combine(cell_candidates(cost, r_diag, r_up, r_left));
}

template <class V, class Smooth>
RESILIN_HD RESILIN_INLINE step3<V> cell_weights(Smooth const& smooth, step3<V> const& cost,
                                                V r_diag, V r_up, V r_left) noexcept {
  return smooth.weights(cell_candidates(cost, r_diag, r_up, r_left));
}

template <class V>
struct value_and_weights {
  V value;
  step3<V> weights;
};

/// cell_value and cell_weights of the same candidates at once (one evaluation of the shared
/// exponentials where the smoothing offers combine_and_weights); the same bits as the two.
template <class V, class Smooth>
RESILIN_HD RESILIN_INLINE value_and_weights<V> cell_value_and_weights(Smooth const& smooth,
                                                                     step3<V> const& cost, V r_diag,
                                                                     V r_up, V r_left) noexcept {
  step3<V> const v = cell_candidates(cost, r_diag, r_up, r_left);
  if constexpr (requires { smooth.combine_and_weights(v); }) {
    return smooth.combine_and_weights(v);
  } else {
    return {smooth.combine(v), smooth.weights(v)};
  }
}

/// The divergence S(x,y) - S(x,x)/2 - S(y,y)/2 from its three values. The halved self terms
/// are summed before they are subtracted, so that swapping x and y, which swaps them, gives the
/// same bits (S(x, y) = S(y, x) exactly, and addition commutes). The three values reach about
/// -gamma (n + m) ln 3, so the difference carries an absolute error of a few ulp of that: at
/// large gamma the divergence loses its digits (README, Quickstart).
template <class T>
RESILIN_HD constexpr T divergence_of(T sxy, T sxx, T syy) noexcept {
  return sxy - (T(0.5) * sxx + T(0.5) * syy);
}

/// The same problem seen with x and y swapped: rows become columns and the vertical and
/// horizontal moves trade places. Value-only traversals use it to keep their rolling buffer
/// along the shorter series (O(min(n, m)) memory).
template <class Cost>
struct transposed_cost {
  Cost inner;

  template <class T>
  RESILIN_HD step3<T> step(series_view<T const> x, series_view<T const> y, index_t i,
                           index_t j) const noexcept {
    step3<T> const s = inner.step(y, x, j, i);
    return {s.diag, s.left, s.up};
  }

  template <class T>
  RESILIN_HD void step_grad(series_view<T const> x, series_view<T const> y, index_t i, index_t j,
                            step3<T> usage, series_view<T> gx, series_view<T> gy) const noexcept {
    inner.step_grad(y, x, j, i, step3<T>{usage.diag, usage.left, usage.up}, gy, gx);
  }
};

}  // namespace resilin

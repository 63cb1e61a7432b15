#pragma once
// The three policies of the alignment recursion, as C++20 concepts over trivially copyable
// types (so a policy passes to a kernel by value):
//   cost_model      step costs into cell (i, j) for the three moves, and their partials;
//   smoothing_rule  combines the three candidates (min or soft-min) and gives its weights;
//   execution_backend  where and how the recursion runs (host, cuda);
//   second_order_smoothing  a smoothing rule with the tangent of its weights (expected_penalty).
#include <concepts>
#include <type_traits>
#include <resilin/core/config.hpp>
#include <resilin/core/views.hpp>

namespace resilin {

/// The three moves into cell (i, j): from (i-1, j-1), from (i-1, j), from (i, j-1).
template <class V>
struct step3 {
  V diag;  // match x_i with y_j
  V up;    // advance in x only (vertical move)
  V left;  // advance in y only (horizontal move)
};

/// A cell's value, its move weights and their entropy -sum_k w_k log w_k (a second-order
/// smoothing's combine_weights_and_entropy).
template <class V>
struct value_weights_and_entropy {
  V value;
  step3<V> weights;
  V entropy;
};

/// Gives the cost of each move into (i, j); reads only the series it is given.
template <class C, class T>
concept cost_model = std::is_trivially_copyable_v<C> &&
    requires(C const& c, series_view<T const> x, series_view<T const> y, index_t i, index_t j) {
      { c.step(x, y, i, j) } -> std::same_as<step3<T>>;
    };

/// A cost model whose partials the backward pass can use: `step_grad` adds
/// usage.diag * d c_diag + usage.up * d c_up + usage.left * d c_left to the gradients of the
/// series values that the costs of cell (i, j) read.
template <class C, class T>
concept differentiable_cost_model = cost_model<C, T> &&
    requires(C const& c, series_view<T const> x, series_view<T const> y, index_t i, index_t j,
             step3<T> usage, series_view<T> gx, series_view<T> gy) {
      { c.step_grad(x, y, i, j, usage, gx, gy) } -> std::same_as<void>;
    };

/// Combines the three candidate values (R of a predecessor plus the move's cost) into R(i, j)
/// and gives the weights of each candidate (the gradient of the combination; sums to 1).
template <class S, class T>
concept smoothing_rule = std::is_trivially_copyable_v<S> && requires(S const& s, step3<T> v) {
  { s.combine(v) } -> std::same_as<T>;
  { s.weights(v) } -> std::same_as<step3<T>>;
};

/// A smoothing rule with a second order: weights_tangent(w, dv) is the tangent of weights(v)
/// along dv, given w = weights(v) (the smoothing's Hessian times dv; expected_penalty), and
/// weights_tangent_along_costs(w, v, h) the same along the step costs scaled by 1 + t, from the
/// candidates v and their predecessors' alignment entropies h (the sharp values' gradients), and
/// combine_weights_and_entropy(v) the value, the weights and their entropy -sum w log w.
template <class S, class T>
concept second_order_smoothing = smoothing_rule<S, T> && requires(S const& s, step3<T> w) {
  { s.weights_tangent(w, w) } -> std::same_as<step3<T>>;
  { s.weights_tangent_along_costs(w, w, w) } -> std::same_as<step3<T>>;
  { s.combine_weights_and_entropy(w) } -> std::same_as<value_weights_and_entropy<T>>;
};

struct host_memory {};
struct device_memory {};

/// Chooses the traversal and where memory lives; dispatch is by overload on the backend type.
template <class B>
concept execution_backend = std::is_trivially_copyable_v<B> && requires {
  typename B::memory_space;
};

}  // namespace resilin

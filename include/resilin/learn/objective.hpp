#pragma once
// The measure a barycentre, k-means and nearest centroid work with (barycenter_objective): the
// measure's value, or its sharp value (resilin/sharp.hpp), in the batch forms they call. A hard
// measure's sharp value is its value, so it keeps the value's engines.
#include <concepts>
#include <span>
#include <resilin/alignment.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/error.hpp>
#include <resilin/learn/options.hpp>
#include <resilin/sharp.hpp>

namespace resilin::learn::detail {

/// Whether the measure has a sharp value other than its value (a soft smoothing with
/// weights_tangent).
template <class Measure, class T>
inline constexpr bool has_sharp_value_v =
    !std::same_as<typename Measure::smoothing_type, hard_min> &&
    second_order_smoothing<typename Measure::smoothing_type, T>;

/// Whether objective o takes the sharp value of the measure; throws resilin::invalid_argument
/// when it asks for one that the smoothing cannot give (no weights_tangent).
template <class Measure, class T>
bool takes_sharp(barycenter_objective o) {
  if (o != barycenter_objective::sharp) return false;
  if constexpr (std::same_as<typename Measure::smoothing_type, hard_min>) {
    return false;  // the sharp value of a hard measure is its value
  } else {
    resilin::detail::require(has_sharp_value_v<Measure, T>,
                             "the sharp objective needs a smoothing with weights_tangent (soft_min or hard_min)");
    return has_sharp_value_v<Measure, T>;
  }
}

/// out[b] = M(X[b], Y[b]) under the objective.
template <class Measure, class T>
void objective_values(barycenter_objective o, int threads, Measure const& m, batch_view<T const> X,
                      batch_view<T const> Y, std::span<T> out) {
  [[maybe_unused]] bool const sharp = takes_sharp<Measure, T>(o);
  if constexpr (has_sharp_value_v<Measure, T>) {
    if (sharp) return sharp_values(host_backend{threads}, m, X, Y, out);
  }
  values(host_backend{threads}, m, X, Y, out);
}

/// values_and_grads under the objective.
template <class Measure, class T>
void objective_values_and_grads(barycenter_objective o, int threads, Measure const& m,
                                batch_view<T const> X, batch_view<T const> Y, std::span<T> out,
                                batch_view<T> GX, batch_view<T> GY, std::span<T const> upstream) {
  [[maybe_unused]] bool const sharp = takes_sharp<Measure, T>(o);
  if constexpr (has_sharp_value_v<Measure, T>) {
    if (sharp) return sharp_values_and_grads(host_backend{threads}, m, X, Y, out, GX, GY, upstream);
  }
  values_and_grads(host_backend{threads}, m, X, Y, out, GX, GY, upstream);
}

/// out(a, b) = M(X[a], Y[b]) under the objective.
template <class Measure, class T>
void objective_pairwise(barycenter_objective o, int threads, Measure const& m, batch_view<T const> X,
                        batch_view<T const> Y, matrix_view<T> out) {
  [[maybe_unused]] bool const sharp = takes_sharp<Measure, T>(o);
  if constexpr (has_sharp_value_v<Measure, T>) {
    if (sharp) return sharp_pairwise(host_backend{threads}, m, X, Y, out);
  }
  pairwise(host_backend{threads}, m, X, Y, out);
}

}  // namespace resilin::learn::detail

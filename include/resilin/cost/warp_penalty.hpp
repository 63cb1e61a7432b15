#pragma once
// warp_penalty_cost<Cost>: any cost model with a constant penalty w added to every vertical and
// horizontal move (the moves that warp time), as in the soft-DTW losses of speech synthesis
// (Parallel Tacotron 2, NaturalSpeech: "warp penalty") and in DTW with a warping cost:
//     diag  c_diag(i, j),   up  c_up(i, j) + w,   left  c_left(i, j) + w.
// An alignment of n and m samples with k diagonal moves pays (n + m - 2 - 2k) w on top of its
// costs, the first row and column included (their cells are reached by horizontal or vertical
// moves only). w = 0 gives the inner cost model's values (with its bits where both run the same
// traversal; soft-DTW's exponential-domain shortcut is for plain DTW costs). The penalty has no
// partials, so gradients, alignments and divergences are the inner model's, on the paths the
// penalty favours. With independent channels (the MSM family) each channel's alignment pays it.
// Precision: with n != m every alignment pays at least |n - m| w, which every R then carries, so
// the data costs keep only the digits that offset leaves them: a reviewer's 4 x 6 pair (double,
// gamma 0.5, costs of order 1) came out 5e-11 off at w = 1e8, 2e-6 at 1e12, 4e-2 at 1e16.
#include <concepts>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/views.hpp>

namespace resilin {

template <class Cost>
struct warp_penalty_cost {
  using inner_type = Cost;
  Cost inner{};
  double penalty = 0;  // w >= 0, finite; converted to the series' value type per step

  /// Throws resilin::invalid_argument unless 0 <= penalty < inf, then validates the inner
  /// cost model where it has a validate() (host only).
  void validate() const {
    detail::require(penalty >= 0 && penalty < math::infinity<double>(),
                    "warp penalty must be >= 0 and finite, got ", penalty);
    if constexpr (requires { inner.validate(); }) inner.validate();
  }
  /// The same once the penalty is cast to the series' value type T (1e39 is inf in float).
  template <class T>
  void validate_as() const {
    detail::require(static_cast<T>(penalty) < math::infinity<T>(),
                    "warp penalty must be finite in the value type, got ", penalty);
    if constexpr (requires { inner.template validate_as<T>(); }) inner.template validate_as<T>();
  }

  template <class T>
  RESILIN_HD step3<T> step(series_view<T const> x, series_view<T const> y, index_t i,
                           index_t j) const noexcept {
    step3<T> const s = inner.step(x, y, i, j);
    T const w = static_cast<T>(penalty);
    return {s.diag, s.up + w, s.left + w};
  }

  template <class T>
  RESILIN_HD void step_grad(series_view<T const> x, series_view<T const> y, index_t i, index_t j,
                            step3<T> usage, series_view<T> gx, series_view<T> gy) const noexcept
    requires differentiable_cost_model<Cost, T>
  {
    inner.step_grad(x, y, i, j, usage, gx, gy);
  }
};

/// The measure m with warp penalty w on its cost model (every other policy kept); throws
/// resilin::invalid_argument unless 0 <= w < inf.
template <class Cost, class Smooth>
measure<warp_penalty_cost<Cost>, Smooth> with_warp_penalty(measure<Cost, Smooth> const& m, double w) {
  measure<warp_penalty_cost<Cost>, Smooth> r{{m.cost, w}, m.smooth, m.band, m.divergence,
                                             m.independent_channels};
  r.validate();
  return r;
}

}  // namespace resilin

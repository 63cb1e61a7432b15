#pragma once
// A measure bundles the policies of one alignment problem: cost model, smoothing rule, band,
// and whether the result is the divergence S(x,y) - S(x,x)/2 - S(y,y)/2.
#include <concepts>
#include <type_traits>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/smoothing/hard_min.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin {

template <class Cost, class Smooth>
struct measure {
  using cost_type = Cost;
  using smoothing_type = Smooth;
  Cost cost{};
  Smooth smooth{};
  band_spec band{};
  bool divergence = false;

  /// The same measure with another band.
  measure with_band(band_spec b) const { measure r = *this; r.band = b; return r; }
};

template <class M>
inline constexpr bool is_hard_v = std::is_same_v<typename M::smoothing_type, hard_min>;

namespace measures {
/// Soft-DTW (Cuturi & Blondel 2017) with squared Euclidean point cost.
template <std::floating_point T, class Distance = squared_euclidean>
measure<dtw_cost<Distance>, soft_min<T>> soft_dtw(T gamma, band_spec band = {}) {
  measure<dtw_cost<Distance>, soft_min<T>> m{{}, {gamma}, band, false};
  m.smooth.validate();
  return m;
}
/// The soft-DTW divergence (Blondel, Mensch & Vert 2021); unequal lengths allowed.
template <std::floating_point T, class Distance = squared_euclidean>
measure<dtw_cost<Distance>, soft_min<T>> soft_dtw_divergence(T gamma, band_spec band = {}) {
  auto m = soft_dtw<T, Distance>(gamma, band);
  m.divergence = true;
  return m;
}
/// Exact DTW (sum of point costs along the best path; squared Euclidean: the UCR convention).
template <class Distance = squared_euclidean>
measure<dtw_cost<Distance>, hard_min> dtw(band_spec band = {}) {
  return {{}, {}, band, false};
}
}  // namespace measures

}  // namespace resilin

#pragma once
// A measure bundles the policies of one alignment problem: cost model, smoothing rule, band,
// whether the result is the divergence S(x,y) - S(x,x)/2 - S(y,y)/2, and whether several
// channels are aligned independently (the sum of one recursion per channel).
#include <concepts>
#include <type_traits>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/cost/cdtw.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/cost/msm.hpp>
#include <resilin/cost/soft_msm.hpp>
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
  /// Several channels: false aligns the series once with the cost model's multichannel costs;
  /// true gives the sum over channels of separate univariate recursions (each channel its own
  /// alignment), as the published multivariate MSM and Soft-MSM ("independent"). Any cost model.
  bool independent_channels = false;

  /// Throws resilin::invalid_argument for parameters outside their domain: the smoothing's,
  /// and the cost model's where it has a validate() (c, gamma and eps of the MSM costs, which
  /// callers may set directly, as m.cost.eps). With a value type T, also where a parameter
  /// leaves its domain once cast to T (validate_as<T>: msm c = 1e39 passed in double and made
  /// every float value inf).
  template <class T = void>
  void validate() const {
    smooth.validate();
    if constexpr (requires { cost.validate(); }) cost.validate();
    if constexpr (!std::is_void_v<T>) {
      if constexpr (requires { smooth.template validate_as<T>(); }) smooth.template validate_as<T>();
      if constexpr (requires { cost.template validate_as<T>(); }) cost.template validate_as<T>();
    }
  }

  /// The same measure with another band.
  measure with_band(band_spec b) const { measure r = *this; r.band = b; return r; }
  /// One channel's measure of an independent-channels measure (the same policies and band).
  measure single_channel() const { measure r = *this; r.independent_channels = false; return r; }
};

/// The same problem with x and y swapped (transposed_cost; the band is symmetric under the
/// swap), for traversals whose rows run along the longer series (their rolling rows along the
/// shorter one): one recursion, so no divergence and the channels aligned as the cost model
/// aligns them (callers split independent channels first). Its hard ties take left before up.
template <class Cost, class Smooth>
measure<transposed_cost<Cost>, Smooth> transposed(measure<Cost, Smooth> const& m) {
  return {{m.cost}, m.smooth, m.band, false, false};
}

template <class M>
inline constexpr bool is_hard_v = std::is_same_v<typename M::smoothing_type, hard_min>;

namespace measures {
/// Soft-DTW (Cuturi & Blondel 2017) with squared Euclidean point cost.
template <std::floating_point T, class Distance = squared_euclidean>
measure<dtw_cost<Distance>, soft_min<T>> soft_dtw(T gamma, band_spec band = {}) {
  measure<dtw_cost<Distance>, soft_min<T>> m{{}, {gamma}, band, false};
  m.validate();
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
/// MSM (Stefan, Athitsos & Das 2013; aeon msm_distance): absolute move costs and split/merge
/// penalty c >= 0. Several channels: independent (the sum of per-channel MSM), as published.
inline measure<msm_cost<double>, hard_min> msm(double c = 1.0, band_spec band = {}) {
  measure<msm_cost<double>, hard_min> m{{c}, {}, band, false};
  m.validate();
  m.independent_channels = true;
  return m;
}
/// Soft-MSM (Holder & Bagnall; aeon PR #3508, spec/softmsm.md §3): the gated squared surrogate
/// with split/merge penalty c >= 0, one gamma for the path soft-min and the transition's
/// inner soft-min, gate eps 1e-9 (set m.cost.eps to change it). Signed. Several channels:
/// independent (the sum of per-channel Soft-MSM), as published. The two gammas are separate
/// fields (m.smooth.gamma, m.cost.gamma): to change gamma, build the measure again (setting one
/// alone gives a measure with two temperatures, which is allowed but is not Soft-MSM).
template <std::floating_point T>
measure<soft_msm_cost<T>, soft_min<T>> soft_msm(T gamma, std::type_identity_t<T> c = T(1),
                                                band_spec band = {}) {
  measure<soft_msm_cost<T>, soft_min<T>> m{{c, gamma, T(1e-9)}, {gamma}, band, false};
  m.validate();
  m.independent_channels = true;
  return m;
}
/// The Soft-MSM divergence S(x,y) - S(x,x)/2 - S(y,y)/2 (aeon branch soft-msm, spec §3.7).
template <std::floating_point T>
measure<soft_msm_cost<T>, soft_min<T>> soft_msm_divergence(T gamma, std::type_identity_t<T> c = T(1),
                                                           band_spec band = {}) {
  auto m = soft_msm<T>(gamma, c, band);
  m.divergence = true;
  return m;
}
/// Soft-MSM's gamma -> 0 limit (spec §3.8): hard min on the path and inside the transition,
/// squared costs, the same eps gate. Not MSM (that is measures::msm, absolute costs).
template <std::floating_point T>
measure<soft_msm_cost<T>, hard_min> hard_soft_msm(T c = T(1), band_spec band = {}) {
  measure<soft_msm_cost<T>, hard_min> m{{c, T(0), T(1e-9)}, {}, band, false};
  m.validate();
  m.independent_channels = true;
  return m;
}
/// Grid CDTW (spec/cdtw.md §A): the minimum over lattice paths of the arc-length integral of
/// |x(u) - y(v)|^2 between the piecewise-linear interpolants on [0, 1]. Channels jointly.
inline measure<cdtw_cost, hard_min> cdtw(band_spec band = {}) { return {{}, {}, band, false}; }
/// Soft grid CDTW: -gamma log sum over lattice paths of exp(-F(path) / gamma).
template <std::floating_point T>
measure<cdtw_cost, soft_min<T>> soft_cdtw(T gamma, band_spec band = {}) {
  measure<cdtw_cost, soft_min<T>> m{{}, {gamma}, band, false};
  m.validate();
  return m;
}
/// The soft grid CDTW divergence S(x,y) - S(x,x)/2 - S(y,y)/2; unequal lengths allowed.
template <std::floating_point T>
measure<cdtw_cost, soft_min<T>> soft_cdtw_divergence(T gamma, band_spec band = {}) {
  auto m = soft_cdtw<T>(gamma, band);
  m.divergence = true;
  return m;
}
}  // namespace measures

}  // namespace resilin

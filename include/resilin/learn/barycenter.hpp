#pragma once
// barycenter(measure, series, weights, options): the method that fits the measure.
//   smoothing soft_min            -> L-BFGS on the analytic gradient (lbfgs_barycenter.hpp)
//   exact DTW (dtw_cost, hard)    -> DBA (dba.hpp)
//   exact MSM (msm_cost, hard)    -> MBA (mba.hpp)
//   anything else                 -> resilin::invalid_argument
#include <concepts>
#include <span>
#include <type_traits>
#include <resilin/core/concepts.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/dba.hpp>
#include <resilin/learn/lbfgs_barycenter.hpp>
#include <resilin/learn/mba.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn {

namespace detail {
using resilin::is_soft_min_v;
template <class C> inline constexpr bool is_dtw_cost_v = false;
template <class D> inline constexpr bool is_dtw_cost_v<dtw_cost<D>> = true;
template <class C> inline constexpr bool is_msm_cost_v = false;
template <class P> inline constexpr bool is_msm_cost_v<msm_cost<P>> = true;
}  // namespace detail

/// Whether barycenter() has a method for the measure (checked at compile time for T).
template <class Measure, class T>
inline constexpr bool has_barycenter_method_v =
    (detail::is_soft_min_v<typename Measure::smoothing_type> &&
     differentiable_cost_model<typename Measure::cost_type, T>) ||
    (std::is_same_v<typename Measure::smoothing_type, hard_min> &&
     (detail::is_dtw_cost_v<typename Measure::cost_type> ||
      detail::is_msm_cost_v<typename Measure::cost_type>));

/// The barycentre of the series under m: argmin_z sum_k w_k M(z, x_k), weights normalised to
/// sum 1 (empty: uniform). Throws resilin::invalid_argument for bad input and for a measure
/// with no barycentre method (a hard measure other than DTW and MSM, or a hard divergence).
template <alignment_measure Measure, std::floating_point T>
barycenter_result<T> barycenter(Measure const& m, batch_view<T const> series,
                                std::type_identity_t<std::span<T const>> weights = {},
                                barycenter_options const& opt = {}) {
  using Cost = typename Measure::cost_type;
  using Smooth = typename Measure::smoothing_type;
  detail::callback_guard guard;
  barycenter_options o = opt;
  o.progress = guard.wrap(opt.progress);
  return detail::reporting_allocation_failure("barycenter", guard, [&]() -> barycenter_result<T> {
    if constexpr (detail::is_soft_min_v<Smooth> && differentiable_cost_model<Cost, T>) {
      return lbfgs_barycenter(m, series, weights, o);
    } else if constexpr (std::is_same_v<Smooth, hard_min> && detail::is_dtw_cost_v<Cost>) {
      detail::require(!m.divergence, "barycenter: DBA averages under DTW, not its divergence");
      return dba(m, series, weights, o);
    } else if constexpr (std::is_same_v<Smooth, hard_min> && detail::is_msm_cost_v<Cost>) {
      detail::require(!m.divergence, "barycenter: MBA averages under MSM, not its divergence");
      return mba(m, series, weights, o);
    } else {
      detail::require(false, "barycenter: no barycentre method for this measure (soft measures "
                             "use L-BFGS, exact DTW uses DBA, exact MSM uses MBA; a hard measure "
                             "with another cost model has none)");
      return {};
    }
  });
}

/// The same for a batch of mutable values.
template <alignment_measure Measure, std::floating_point T>
  requires(!std::is_const_v<T>)
barycenter_result<T> barycenter(Measure const& m, batch_view<T> series,
                                std::type_identity_t<std::span<T const>> weights = {},
                                barycenter_options const& opt = {}) {
  return barycenter(m, as_const(series), weights, opt);
}

}  // namespace resilin::learn

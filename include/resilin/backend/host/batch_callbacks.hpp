#pragma once
// The callbacks through which the host batch drivers (batch.hpp, lockstep_groups.hpp,
// channel_units.hpp) read a batch's pairs and deliver their results, as function_refs: the
// drivers are then compiled once per value type and measure, whatever lambdas the entry points
// (alignment.hpp, search/nearest.hpp) pass.
#include <utility>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/function_ref.hpp>
#include <resilin/core/views.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// pair_at(k): the (x, y) views of pair k.
template <class T>
using pair_source = function_ref<std::pair<series_view<T const>, series_view<T const>>(index_t)>;

/// grads_at(k): pair k's gradient views (gx, gy), zeroed.
template <class T>
using gradient_source = function_ref<std::pair<series_view<T>, series_view<T>>(index_t)>;

/// seed_at(k): the factor of pair k's gradients (the upstream gradient).
template <class T>
using seed_source = function_ref<T(index_t)>;

/// store(k, v): pair k's value.
template <class T>
using value_sink = function_ref<void(index_t, T)>;

}  // namespace resilin::host_detail

#pragma once
// The mixed-ISA test's workload (run.hpp), included by narrow.cpp and wide.cpp alone.
#include <span>
#include <vector>
#include <resilin/resilin.hpp>
#include "run.hpp"

namespace mixed_isa {

/// The workload, two threads (each with its own workspace of host-backend tables). Internal
/// linkage, so that each translation unit runs its own copy (the library's front-end templates,
/// which it calls, are merged by the linker like any inline function).
namespace {
result run_here() {
  namespace r = resilin;
  result out;
  out.vector_bytes = r::simd::vector_bytes;
  using M = decltype(r::measures::soft_dtw(0.5));
  out.host_value = reinterpret_cast<void (*)()>(
      &r::host_detail::value<double, M::cost_type, M::smoothing_type>);
  auto const xs = series(batch, n, 1), ys = series(batch, m, 2);
  auto const X = r::make_batch(std::span<double const>(xs), batch, n, 1);
  auto const Y = r::make_batch(std::span<double const>(ys), batch, m, 1);
  out.dtw_values.resize(batch);
  out.dtw_gx.assign(xs.size(), 0.0);
  out.dtw_gy.assign(ys.size(), 0.0);
  r::values_and_grads(r::host.with_threads(2), r::measures::soft_dtw(0.5), X, Y,
                      std::span<double>(out.dtw_values), r::make_batch(std::span<double>(out.dtw_gx), batch, n, 1),
                      r::make_batch(std::span<double>(out.dtw_gy), batch, m, 1));
  return out;
}
}  // namespace

}  // namespace mixed_isa

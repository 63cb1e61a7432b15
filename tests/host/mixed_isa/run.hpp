#pragma once
// The mixed-ISA test's workload, compiled into two translation units built for different
// vector widths (narrow.cpp: -mno-avx, 16-byte packs; wide.cpp: -mavx2 -mfma -mno-avx512f,
// 32-byte packs) and linked into one program. Both instantiate the same front-end templates;
// without the width in the host backend's namespace (simd_abi.hpp) the linker would keep one
// definition of each host template for both, and buffers sized with one pack width would be
// read with the other.
#include <cstdint>
#include <random>
#include <span>
#include <vector>
#include <resilin/resilin.hpp>

namespace mixed_isa {

struct result {
  int vector_bytes = 0;
  void (*host_value)() = nullptr;  // this width's host_detail::value<double, soft-DTW>
  std::vector<double> dtw_values, dtw_gx, dtw_gy;  // soft-DTW: values_and_grads
};

inline constexpr resilin::index_t batch = 5, n = 70, m = 53;

/// Series of the test, the same in every translation unit.
inline std::vector<double> series(resilin::index_t count, resilin::index_t length, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<std::size_t>(count * length));
  for (auto& e : v) e = normal(gen);
  return v;
}

/// The workload, two threads (each with its own workspace of host-backend tables). Internal
/// linkage, so that each translation unit runs its own copy (the library's front-end templates,
/// which it calls, are merged by the linker like any inline function).
namespace {
[[maybe_unused]] result run_here() {
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

result run_narrow();  // narrow.cpp
result run_wide();    // wide.cpp

}  // namespace mixed_isa

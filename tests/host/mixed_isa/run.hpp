#pragma once
// The mixed-ISA test's data and results; workload.hpp computes them in two translation units
// built for different vector widths (narrow.cpp: -mno-avx, 16-byte packs; wide.cpp: -mavx2
// -mfma -mno-avx512f, 32-byte packs), linked into one program. Both instantiate the same
// front-end templates; without the width in the host backend's namespace (simd_abi.hpp) the
// linker would keep one definition of each host template for both, and buffers sized with one
// pack width would be read with the other.
#include <cstdint>
#include <random>
#include <vector>
#include <resilin/core/config.hpp>

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

result run_narrow();  // narrow.cpp (workload.hpp)
result run_wide();    // wide.cpp (workload.hpp)

}  // namespace mixed_isa

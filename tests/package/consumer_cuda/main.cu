// A CUDA consumer of find_package(resilin COMPONENTS cuda): the headers need C++20 in nvcc,
// which the package must request in a way this CMake understands (cuda_std_20 failed at
// generate time with CMake 3.25 and nvcc 13). Built and run without a GPU: no kernel launches.
#include <concepts>
#include <cstdio>
#include <resilin/cuda.cuh>

template <std::floating_point T>
constexpr T twice(T x) { return x + x; }

int main() {
  static_assert(twice(1.5) == 3.0);
  std::printf("resilin::cuda consumer: C++%ld\n", static_cast<long>(__cplusplus / 100 % 100));
  return __cplusplus >= 202002L ? 0 : 1;
}

// The tool's GPU path (CUDA builds): see gpu_support.hpp.
#include <cuda_runtime_api.h>
#include <resilin/learn/cuda.cuh>
#include "gpu_support.hpp"

namespace resilin_cli::gpu {

std::string device_name() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return {};
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return {};
  return prop.name;
}

resilin::learn::barycenter_result<double> barycenter(measure_choice const& metric,
                                                     resilin::batch_view<double const> series,
                                                     resilin::learn::barycenter_options const& opt) {
  resilin::learn::barycenter_result<double> result;
  visit_measure<double>(metric, [&](auto const& m) {
    using M = std::remove_cvref_t<decltype(m)>;
    if constexpr (std::is_same_v<typename M::smoothing_type, resilin::soft_min<double>>) {
      result = resilin::learn::lbfgs_barycenter(resilin::device, m, series, {}, opt);
    } else {
      RESILIN_THROW(resilin::invalid_argument(
          "GPU barycentres are for the soft metrics (soft-dtw, soft-msm, soft-cdtw and their "
          "divergences)"));
    }
  });
  return result;
}

}  // namespace resilin_cli::gpu

#pragma once
// Whether a CUDA device can be used here, and if not, why. Host code that includes only the CUDA
// runtime's C API, so plain C++ translation units that link cudart (a GPU test's main) may use
// it as well as .cu files.
#include <string>
#include <cuda_runtime_api.h>

namespace resilin {

/// "" when a CUDA device can be used; otherwise why not: no CUDA driver, no device, or the
/// runtime's error (a driver too old for this runtime shows as cudaErrorInsufficientDriver)
/// with the CUDA version the driver supports.
inline std::string cuda_unavailable_reason() {
  int devices = 0, driver = 0;
  cudaError_t const e = cudaGetDeviceCount(&devices);
  if (e == cudaSuccess && devices > 0) return {};
  (void)cudaGetLastError();  // clear the (non-sticky) error
  (void)cudaDriverGetVersion(&driver);
  if (driver == 0) return "no CUDA driver";
  if (e == cudaSuccess) return "no CUDA device";
  return std::string(cudaGetErrorString(e)) + " (the driver supports CUDA " +
         std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) + ")";
}

}  // namespace resilin

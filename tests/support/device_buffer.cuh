#pragma once
// A device array for the GPU tests: allocated (and optionally filled) on construction, copied
// back with host(), freed on destruction. Errors throw resilin::cuda_error.
#include <cstddef>
#include <vector>
#include <cuda_runtime_api.h>
#include <resilin/backend/cuda/error.cuh>

namespace resilin_test {

template <class T>
struct device_buffer {
  T* ptr = nullptr;
  std::size_t size = 0;
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : size(n) {
    if (n) RESILIN_CUDA_TRY(cudaMalloc(&ptr, n * sizeof(T)));
  }
  explicit device_buffer(std::vector<T> const& v) : device_buffer(v.size()) {
    if (size) RESILIN_CUDA_TRY(cudaMemcpy(ptr, v.data(), size * sizeof(T), cudaMemcpyHostToDevice));
  }
  device_buffer(device_buffer const&) = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  ~device_buffer() {
    if (ptr) (void)cudaFree(ptr);
  }
  std::vector<T> host() const {
    std::vector<T> v(size);
    RESILIN_CUDA_TRY(cudaDeviceSynchronize());
    if (size) RESILIN_CUDA_TRY(cudaMemcpy(v.data(), ptr, size * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

/// Whether kernels may read pageable host memory here (HMM or ATS): the library then accepts
/// host pointers, rightly, and the checks that expect them refused do not apply.
inline bool pageable_memory_access() {
  int dev = 0, v = 0;
  bool const yes = cudaGetDevice(&dev) == cudaSuccess &&
                   cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, dev) == cudaSuccess && v == 1;
  (void)cudaGetLastError();
  return yes;
}

}  // namespace resilin_test

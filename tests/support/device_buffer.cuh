#pragma once
// A device array for the GPU tests: allocated (and optionally filled) on construction, copied
// back with host(), freed on destruction. Errors throw resilin::cuda_error.
#include <cstddef>
#include <stdexcept>
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

/// Leaves a non-sticky error pending, as a caller's own cudaMalloc that failed and was handled
/// does: the status a library call returns next must be its own.
inline void leave_pending_error() {
  void* p = nullptr;
  cudaError_t const s = cudaMalloc(&p, std::size_t(1) << 62);
  if (s == cudaSuccess) (void)cudaFree(p);
  if (s != cudaErrorMemoryAllocation)
    throw std::runtime_error("a cudaMalloc of 2^62 bytes did not fail with cudaErrorMemoryAllocation");
}

}  // namespace resilin_test

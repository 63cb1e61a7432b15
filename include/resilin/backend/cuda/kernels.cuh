#pragma once
// The CUDA kernels of the alignment recursion: thin shells that run the block programs of
// backend/device/wavefront.hpp (the same code the host tests run with an emulated CTA) with
// the CTA executor below. One block per alignment problem, persistent over all anti-diagonals
// (one __syncthreads per diagonal, no launch per diagonal), threads striding each diagonal.
// The rolling diagonals live in dynamic shared memory when they fit, else in a global
// workspace slice per block. No atomics anywhere: bitwise deterministic run to run.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cuda_runtime_api.h>
#include <resilin/backend/device/wavefront.hpp>
#include <resilin/core/config.hpp>

namespace resilin::cuda_detail {

/// The executor of a CTA: every thread runs its own slice of a step.
struct cta_exec {
  template <class F>
  RESILIN_HD void for_each(F const& f) const {
#if RESILIN_DEVICE_PASS
    f(static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
#else
    (void)f;
#endif
  }
  RESILIN_HD void sync() const {
#if RESILIN_DEVICE_PASS
    __syncthreads();
#endif
  }
  RESILIN_HD bool leader() const {
#if RESILIN_DEVICE_PASS
    return threadIdx.x == 0;
#else
    return false;
#endif
  }
};

/// Value of every job (one block per job). rings: null (shared memory) or jobs * 3 * stride.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void value_kernel(device_detail::value_args<T, Cost, Smooth> a, T* rings) {
  extern __shared__ __align__(16) unsigned char resilin_shared[];
  index_t const k = blockIdx.x;
  T* const ring = rings ? rings + k * 3 * a.stride : reinterpret_cast<T*>(resilin_shared);
  device_detail::value_block(cta_exec{}, a, k, ring);
}

/// Forward storing R, then backward, of every job. rings: null or jobs * 7 * stride.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void train_kernel(device_detail::train_args<T, Cost, Smooth> a, T* rings) {
  extern __shared__ __align__(16) unsigned char resilin_shared[];
  index_t const k = blockIdx.x;
  T* const ring = rings ? rings + k * 7 * a.stride : reinterpret_cast<T*>(resilin_shared);
  device_detail::train_block(cta_exec{}, a, k, ring);
}

template <class T>
RESILIN_KERNEL void divergence_paired_kernel(T const* jobs, index_t batch, T* out) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < batch) device_detail::divergence_paired(jobs, batch, out, k);
}

template <class T>
RESILIN_KERNEL void divergence_pairwise_kernel(T const* jobs, index_t nx, index_t ny, T* out) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < nx * ny) device_detail::divergence_pairwise(jobs, nx, ny, out, k);
}

template <class T>
RESILIN_KERNEL void add_two_kernel(T* g, T const* p, T const* q, index_t count) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) device_detail::add_two(g, p, q, k);
}

inline unsigned elementwise_blocks(index_t count) noexcept {
  return static_cast<unsigned>((count + 255) / 256);
}

}  // namespace resilin::cuda_detail

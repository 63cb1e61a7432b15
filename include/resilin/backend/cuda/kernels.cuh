#pragma once
// The CUDA kernels of the alignment recursion: thin shells that run the block programs of
// backend/device/wavefront.hpp (the same code the host tests run with an emulated CTA) with
// the executors (cta_exec.cuh, and the warp ones below). One block per alignment problem, persistent over all anti-diagonals
// (one __syncthreads per diagonal, no launch per diagonal), threads striding each diagonal; or,
// for short series in large batches, one warp per problem (warp_per_pair, __syncwarp; values of
// medium series in large batches: a strip of rows per lane).
// The rolling diagonals live in dynamic shared memory when they fit, else in a global
// workspace slice per block. No atomics anywhere: bitwise deterministic run to run.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cuda_runtime_api.h>
#include <resilin/backend/cuda/cta_exec.cuh>
#include <resilin/backend/device/wavefront.hpp>
#include <resilin/core/config.hpp>

namespace resilin::cuda_detail {

/// The executor of one warp running one job (warp_per_pair): its 32 lanes stride each step.
/// __syncwarp orders the shared-memory ring accesses of the warp's lanes between steps.
struct warp_exec {
  template <class F>
  RESILIN_HD void for_each(F const& f) const {
#if RESILIN_DEVICE_PASS
    f(static_cast<int>(threadIdx.x % 32u), 32);
#else
    (void)f;
#endif
  }
  RESILIN_HD void sync() const {
#if RESILIN_DEVICE_PASS
    __syncwarp();
#endif
  }
  RESILIN_HD bool leader() const {
#if RESILIN_DEVICE_PASS
    return threadIdx.x % 32u == 0;
#else
    return false;
#endif
  }
};

/// The warp of the shuffle programs (device_detail::shuffle_forward, shuffle_backward): a
/// register per lane, and shuffles across the full warp (a job's warp is whole: warp_job gives
/// all its lanes the same job or none); its leader and sync (__syncwarp) are warp_exec's.
struct shuffle_warp : warp_exec {
  template <class T>
  struct reg {
    T v;
    RESILIN_HD explicit reg(T x) noexcept : v(x) {}
    RESILIN_HD T& at(int) noexcept { return v; }
    RESILIN_HD T const& at(int) const noexcept { return v; }
  };
  template <class T>
  RESILIN_HD reg<T> shfl_up(reg<T> const& r) const noexcept {
#if RESILIN_DEVICE_PASS
    return reg<T>(__shfl_up_sync(0xffffffffu, r.v, 1));
#else
    return r;
#endif
  }
  template <class T>
  RESILIN_HD reg<T> shfl_down(reg<T> const& r) const noexcept {
#if RESILIN_DEVICE_PASS
    return reg<T>(__shfl_down_sync(0xffffffffu, r.v, 1));
#else
    return r;
#endif
  }
  template <class T>
  RESILIN_HD T broadcast(reg<T> const& r, int lane) const noexcept {
#if RESILIN_DEVICE_PASS
    return __shfl_sync(0xffffffffu, r.v, lane);
#else
    (void)lane;
    return r.v;
#endif
  }
  template <class F>
  RESILIN_HD void for_each_lane(F const& f) const {
#if RESILIN_DEVICE_PASS
    f(static_cast<int>(threadIdx.x % 32u));
#else
    (void)f;
#endif
  }
};

/// The CTA's dynamic shared memory (16-byte aligned; the size of the launch).
RESILIN_HD inline unsigned char* dynamic_shared_memory() {
#if defined(RESILIN_CUDA_EMULATION)
  return ::resilin_emulation::dynamic_shared_memory();
#elif RESILIN_DEVICE_PASS
  extern __shared__ __align__(16) unsigned char resilin_shared[];
  return resilin_shared;
#else
  return nullptr;
#endif
}

// The per-job kernels take the index of their first block: a call of more blocks than a grid
// holds launches consecutive chunks (device_detail::for_each_block_chunk).

/// The block of the calling thread, counted from the call's first block.
RESILIN_HD inline index_t block_of_call(index_t first_block) {
#if RESILIN_DEVICE_PASS
  return first_block + static_cast<index_t>(blockIdx.x);
#else
  return first_block;
#endif
}

/// The job of the calling warp in warp_per_pair, or -1 past the last job (the whole warp).
RESILIN_HD inline index_t warp_job(index_t jobs, index_t first_block) {
#if RESILIN_DEVICE_PASS
  index_t const k = block_of_call(first_block) * (blockDim.x / 32u) + threadIdx.x / 32u;
  return k < jobs ? k : -1;
#else
  (void)jobs;
  (void)first_block;
  return -1;
#endif
}

/// Value of every job (one block per job). rings: null (shared memory) or jobs * 3 * stride.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void value_kernel(device_detail::value_args<T, Cost, Smooth> a, T* rings,
                                 index_t first_block) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  index_t const k = block_of_call(first_block);
  T* const ring = rings ? rings + k * 3 * a.stride : reinterpret_cast<T*>(resilin_shared);
  device_detail::value_block(cta_exec{}, a, k, ring);
}

/// Forward storing R, then backward, of every job. rings: null or jobs * 7 * stride.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void train_kernel(device_detail::train_args<T, Cost, Smooth> a, T* rings,
                                 index_t first_block) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  index_t const k = block_of_call(first_block);
  T* const ring = rings ? rings + k * 7 * a.stride : reinterpret_cast<T*>(resilin_shared);
  device_detail::train_block(cta_exec{}, a, k, ring);
}

/// The ring of job k in warp_per_pair (`values` per job): its slice of the workspace rings, or
/// of the CTA's dynamic shared memory.
template <class T>
RESILIN_HD T* warp_ring(T* rings, index_t k, index_t values, unsigned char* shared) {
#if RESILIN_DEVICE_PASS
  return rings ? rings + k * values : reinterpret_cast<T*>(shared) + (threadIdx.x / 32u) * values;
#else
  (void)k;
  (void)values;
  (void)shared;
  return rings;
#endif
}

/// value_kernel with one warp per job, blockDim.x / 32 jobs per block.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void value_warps_kernel(device_detail::value_args<T, Cost, Smooth> a, T* rings,
                                       index_t jobs, index_t first_block) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  if (index_t const k = warp_job(jobs, first_block); k >= 0)
    device_detail::value_block(warp_exec{}, a, k, warp_ring(rings, k, 3 * a.stride, resilin_shared));
}

/// Values of jobs of at most 32 rows: one warp per job, one row per lane, shuffles.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void value_shuffle_kernel(device_detail::value_args<T, Cost, Smooth> a, index_t jobs,
                                         index_t first_block) {
  if (index_t const k = warp_job(jobs, first_block); k >= 0) device_detail::value_shuffle_block(shuffle_warp{}, a, k);
}

/// Values of jobs of at most 992 rows (value_plan::strip): one warp per job, a strip of rows
/// per lane, shuffles; the rows series staged in the warp's stage_values of dynamic shared
/// memory (0: read in place). Univariate: batches of one channel.
template <class T, class Cost, class Smooth, bool Univariate>
RESILIN_KERNEL void value_strip_kernel(device_detail::value_args<T, Cost, Smooth> a, index_t jobs,
                                       index_t first_block, index_t stage_values) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  if (index_t const k = warp_job(jobs, first_block); k >= 0)
    device_detail::value_strip_block<Univariate>(
        shuffle_warp{}, a, k, stage_values ? warp_ring<T>(nullptr, k, stage_values, resilin_shared) : nullptr,
        stage_values);
}

/// train_kernel with one warp per job, blockDim.x / 32 jobs per block.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void train_warps_kernel(device_detail::train_args<T, Cost, Smooth> a, T* rings,
                                       index_t jobs, index_t first_block) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  if (index_t const k = warp_job(jobs, first_block); k >= 0)
    device_detail::train_block(warp_exec{}, a, k, warp_ring(rings, k, 7 * a.stride, resilin_shared));
}

/// Training of jobs of at most 32 rows: one warp per job, one row per lane, shuffles.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void train_shuffle_kernel(device_detail::train_args<T, Cost, Smooth> a, index_t jobs,
                                         index_t first_block) {
  if (index_t const k = warp_job(jobs, first_block); k >= 0) device_detail::train_shuffle_block(shuffle_warp{}, a, k);
}

/// The distance tile of a tiled kernel: in dynamic shared memory after its ring of
/// `ring_values`, or null when the launch does not use distance tiles.
template <class T>
RESILIN_HD T* distance_tile(unsigned char* shared, index_t ring_values, bool distances) {
  return distances ? reinterpret_cast<T*>(shared) + ring_values : nullptr;
}

/// Tile blockIdx.x of tile diagonal d of job blockIdx.y (the tiled wavefront, values).
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void tiled_value_kernel(device_detail::tiled_args<T, Cost, Smooth> a, index_t d,
                                       bool distances) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  device_detail::tiled_value_block(cta_exec{}, a, static_cast<index_t>(blockIdx.y), d,
                                   static_cast<index_t>(blockIdx.x), reinterpret_cast<T*>(resilin_shared),
                                   distance_tile<T>(resilin_shared, 3 * device_detail::tile_size, distances));
}

/// Tile blockIdx.x of tile diagonal d of training job blockIdx.y, forward (tiled training).
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void tiled_train_forward_kernel(device_detail::train_args<T, Cost, Smooth> a, index_t d,
                                               bool distances) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  device_detail::tiled_train_forward_block(cta_exec{}, a, static_cast<index_t>(blockIdx.y), d,
                                           static_cast<index_t>(blockIdx.x),
                                           reinterpret_cast<T*>(resilin_shared),
                                           distance_tile<T>(resilin_shared, 3 * device_detail::tile_size, distances));
}

/// Tile blockIdx.x of tile diagonal d of training job blockIdx.y, backward; parity >= 0: only
/// the tiles of tile rows of that parity.
template <class T, class Cost, class Smooth>
RESILIN_KERNEL void tiled_train_backward_kernel(device_detail::train_args<T, Cost, Smooth> a,
                                                index_t d, int parity, bool distances) {
  unsigned char* const resilin_shared = dynamic_shared_memory();
  device_detail::tiled_train_backward_block(cta_exec{}, a, static_cast<index_t>(blockIdx.y), d,
                                            static_cast<index_t>(blockIdx.x), parity,
                                            reinterpret_cast<T*>(resilin_shared),
                                            distance_tile<T>(resilin_shared, 7 * device_detail::tile_size, distances));
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

template <class T>
RESILIN_KERNEL void expand_pairwise_kernel(T const* src, index_t row, index_t ny, bool outer, T* dst,
                                           index_t count) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) device_detail::expand_pairwise(src, row, ny, outer, dst, k);
}

template <class T>
RESILIN_KERNEL void sum_pairwise_grads_kernel(T const* g, index_t row, index_t ny, T* gx, index_t count) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) device_detail::sum_pairwise_grads(g, row, ny, gx, k);
}

template <class T>
RESILIN_KERNEL void split_channels_kernel(T const* src, index_t series, index_t length,
                                          index_t channels, T* dst, index_t count) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) device_detail::split_channels(src, series, length, channels, dst, k);
}

template <class T>
RESILIN_KERNEL void merge_channels_kernel(T const* src, index_t series, index_t length,
                                          index_t channels, T* dst, index_t count) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) device_detail::merge_channels(src, series, length, channels, dst, k);
}

template <class T>
RESILIN_KERNEL void sum_channels_kernel(T const* per_channel, index_t count, index_t channels, T* out) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) device_detail::sum_channels(per_channel, count, channels, out, k);
}

inline unsigned elementwise_blocks(index_t count) noexcept {
  return static_cast<unsigned>((count + 255) / 256);
}

}  // namespace resilin::cuda_detail

#pragma once
// Stream-ordered device memory for the convenience layer's workspaces: cudaMallocAsync /
// cudaFreeAsync where the device has memory pools, else cudaMalloc and a free after the stream
// has drained. Some virtualised GPUs have no pools (cudaDevAttrMemoryPoolsSupported = 0, where
// cudaMallocAsync fails with cudaErrorNotSupported). Asked of the current device at every call:
// no cached global state. The convenience layer's workspaces come from here unless the backend
// brings its own allocator (device_backend::with_allocator).
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <resilin/backend/cuda/backend.cuh>

namespace resilin::cuda_memory {

/// The alignment the expert layers ask of a caller's workspace (cudaMalloc and memory pools
/// give 256 bytes): the regions carved from it hold values up to 16 bytes wide.
inline constexpr std::size_t workspace_alignment = 16;

/// Whether a caller's workspace of `bytes` at `ws` can hold `needed` bytes: large enough and,
/// when anything is stored in it, aligned (a misaligned access faults on a GPU, a sticky error,
/// where the host and the emulated device tolerate it).
inline bool workspace_fits(void const* ws, std::size_t bytes, std::size_t needed) noexcept {
  return bytes >= needed && (needed == 0 || reinterpret_cast<std::uintptr_t>(ws) % workspace_alignment == 0);
}

/// Whether the current device allocates in stream order (memory pools).
inline bool stream_ordered() noexcept {
  int device = 0, pools = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess) return false;
  return pools != 0;
}

/// `bytes` of device memory usable by work enqueued on `stream` from now on.
inline cudaError_t allocate(void** p, std::size_t bytes, cudaStream_t stream) noexcept {
  if (stream_ordered()) return cudaMallocAsync(p, bytes, stream);
  return cudaMalloc(p, bytes);
}

/// Frees `p` after the work enqueued on `stream` so far (without pools: waits for it).
inline cudaError_t release(void* p, cudaStream_t stream) noexcept {
  if (stream_ordered()) return cudaFreeAsync(p, stream);
  if (cudaError_t const e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
  return cudaFree(p);
}

/// A convenience-layer workspace of `bytes` on exec's stream: exec's allocator if it has one.
inline cudaError_t allocate(device_backend const& exec, void** p, std::size_t bytes) noexcept {
  if (!exec.allocator.allocate) return allocate(p, bytes, exec.stream);
  *p = exec.allocator.allocate(bytes, exec.stream, exec.allocator.context);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

/// Returns a workspace from allocate(exec, ...) after the work enqueued on exec's stream.
inline void release(device_backend const& exec, void* p, std::size_t bytes) noexcept {
  if (exec.allocator.deallocate) exec.allocator.deallocate(p, bytes, exec.stream, exec.allocator.context);
  else (void)release(p, exec.stream);
}

}  // namespace resilin::cuda_memory

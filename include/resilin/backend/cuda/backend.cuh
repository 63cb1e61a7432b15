#pragma once
// The CUDA backend object: resilin::device.on(stream). Every entry point of the CUDA backend
// takes it first (dispatch by overload, like resilin::host); it carries the stream and,
// optionally, the allocator the convenience layer uses for its workspace. No global state:
// the current device is the caller's, several threads and devices may use it at once.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cstddef>
#include <cuda_runtime_api.h>
#include <resilin/backend/device/schedule.hpp>
#include <resilin/core/concepts.hpp>

namespace resilin {

/// A stream-ordered workspace allocator for the convenience layer (e.g. a caching or counting
/// allocator). allocate returns nullptr on failure, else a block aligned to 16 bytes (the
/// expert layers refuse a misaligned workspace: cuda_memory::workspace_fits). The default (null
/// functions) uses cudaMallocAsync / cudaFreeAsync on the backend's stream (cudaMalloc and a
/// synchronised free on devices without memory pools: backend/cuda/stream_memory.cuh).
struct device_allocator {
  void* (*allocate)(std::size_t bytes, cudaStream_t stream, void* context) = nullptr;
  void (*deallocate)(void* p, std::size_t bytes, cudaStream_t stream, void* context) = nullptr;
  void* context = nullptr;
};

struct device_backend {
  using memory_space = device_memory;
  cudaStream_t stream = nullptr;
  device_allocator allocator{};
  device_schedule schedule = device_schedule::automatic;
  training_store storage = training_store::automatic;

  /// The same backend on another stream.
  constexpr device_backend on(cudaStream_t s) const noexcept {
    device_backend d = *this;
    d.stream = s;
    return d;
  }
  /// The same backend with the alignment kernels' job mapping forced (backend/device/schedule.hpp).
  constexpr device_backend with_schedule(device_schedule s) const noexcept {
    device_backend d = *this;
    d.schedule = s;
    return d;
  }
  /// The same backend with the training path's storage of R forced (checkpointed or not).
  constexpr device_backend with_training_store(training_store s) const noexcept {
    device_backend d = *this;
    d.storage = s;
    return d;
  }
  /// The same backend with a workspace allocator for the convenience layer.
  constexpr device_backend with_allocator(device_allocator a) const noexcept {
    device_backend d = *this;
    d.allocator = a;
    return d;
  }
};

/// The CUDA backend on the default stream; `resilin::device.on(stream)` for another.
inline constexpr device_backend device{};

static_assert(execution_backend<device_backend>);

namespace cuda_detail {
/// Whether a kernel can dereference p (device, managed or mapped host memory).
inline bool device_accessible(void const* p) noexcept {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.devicePointer != nullptr;
}
}  // namespace cuda_detail

}  // namespace resilin

#pragma once
#include <resilin/backend/cuda/require_cuda.hpp>
#include <source_location>
#include <stdexcept>
#include <string>
#include <cuda_runtime_api.h>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>

namespace resilin {

/// A failed CUDA runtime call: the status, the expression and where it was called. A
/// resilin::runtime_error, so that code which tells the caller's errors and device failures
/// apart from an optimiser's own exceptions (learn/lbfgs_barycenter.hpp) passes it on.
class cuda_error : public runtime_error {
 public:
  cuda_error(cudaError_t status, char const* expr, std::source_location where)
      : runtime_error(std::string(where.file_name()) + ":" + std::to_string(where.line()) +
                           ": " + expr + ": " + cudaGetErrorName(status) + " (" +
                           cudaGetErrorString(status) + ")"),
        status_(status) {}
  [[nodiscard]] cudaError_t status() const noexcept { return status_; }

 private:
  cudaError_t status_;
};

namespace detail {
/// Discards an error that an earlier runtime call left pending, so that the status an expert
/// call returns is its own: the calls read their launches' status with cudaGetLastError, which
/// also returns, say, the out-of-memory of the caller's own cudaMalloc that failed and was
/// handled (a correct result was reported as cudaErrorMemoryAllocation). A sticky error (an
/// illegal address) stays, and comes back from the next launch.
inline void discard_pending_error() noexcept { (void)cudaGetLastError(); }

inline void cuda_check(cudaError_t s, char const* expr,
                       std::source_location where = std::source_location::current()) {
  if (s == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error before reporting it
  RESILIN_THROW(cuda_error(s, expr, where));
}
}  // namespace detail
}  // namespace resilin

/// Throws resilin::cuda_error unless expr returns cudaSuccess. Sticky errors (illegal address,
/// launch failure) leave the context unusable: they are reported, not recovered from.
#define RESILIN_CUDA_TRY(expr) ::resilin::detail::cuda_check((expr), #expr)

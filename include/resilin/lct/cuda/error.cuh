#pragma once
#if !defined(__CUDACC__) && !defined(RESILIN_CUDA_EMULATION)
#  error "resilin/lct/cuda/*.cuh need a CUDA compiler; include resilin/lct/lct.hpp for host code"
#endif
// CUDA error type of lct's convenience layer (the expert layer returns cudaError_t).
#include <cuda_runtime.h>

#include <source_location>
#include <stdexcept>
#include <string>

#include <resilin/lct/config.hpp>

namespace resilin::lct {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t s, char const* expr, std::source_location where)
      : std::runtime_error(std::string("lct: CUDA error ") + cudaGetErrorName(s) + " (" + cudaGetErrorString(s) +
                           ") in " + expr + " at " + where.file_name() + ":" + std::to_string(where.line())),
        status_(s) {}
  [[nodiscard]] cudaError_t status() const noexcept { return status_; }

 private:
  cudaError_t status_;
};

namespace detail {
inline void cuda_check(cudaError_t s, char const* expr, std::source_location where = std::source_location::current()) {
  if (s == cudaSuccess) return;
  (void)cudaGetLastError();
  RESILIN_LCT_THROW(cuda_error(s, expr, where));
}
}  // namespace detail
}  // namespace resilin::lct

#define RESILIN_LCT_CUDA_TRY(expr) ::resilin::lct::detail::cuda_check((expr), #expr)

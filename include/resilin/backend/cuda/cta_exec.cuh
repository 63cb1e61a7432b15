#pragma once
// The executor of a CTA for the block programs written against executors (for_each / sync /
// leader: backend/device/wavefront.hpp, fcdtw/block_fit.hpp), whose host twin, emulated_cta,
// runs the same programs on the CPU one thread index after the other.
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

}  // namespace resilin::cuda_detail

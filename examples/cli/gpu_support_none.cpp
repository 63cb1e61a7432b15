// The tool without CUDA: no device, and a clear error if the GPU is asked for.
#include <resilin/core/error.hpp>
#include "gpu_support.hpp"

namespace resilin_cli::gpu {

namespace {
[[noreturn]] void no_cuda() {
  RESILIN_THROW(resilin::runtime_error("this build of resilin has no CUDA backend"));
}
}  // namespace

std::string device_name() { return {}; }

std::string unavailable_reason() {
  return "this build of resilin has no CUDA backend (configure it where nvcc is found)";
}

template <class T>
void pairwise(measure_choice const&, resilin::batch_view<T const>, resilin::batch_view<T const>,
              resilin::matrix_view<T>) {
  no_cuda();
}

template <class T>
void pairwise_gradients(measure_choice const&, resilin::batch_view<T const>,
                        resilin::batch_view<T const>, resilin::batch_view<T>) {
  no_cuda();
}

template <class T>
void fcdtw_pairwise(fast_cdtw_metric const&, resilin::batch_view<T const>, resilin::batch_view<T const>,
                    resilin::matrix_view<T>, int) {
  no_cuda();
}

template <class T>
void fcdtw_pairwise_gradients(fast_cdtw_metric const&, resilin::batch_view<T const>,
                              resilin::batch_view<T const>, resilin::batch_view<T>, int) {
  no_cuda();
}

template <class T>
resilin::learn::barycenter_result<T> barycenter(measure_choice const&, resilin::batch_view<T const>,
                                                resilin::learn::barycenter_options const&) {
  no_cuda();
}

template <class T>
resilin::learn::barycenter_result<T> fcdtw_barycenter(fast_cdtw_metric const&,
                                                      resilin::batch_view<T const>,
                                                      resilin::learn::barycenter_options const&) {
  no_cuda();
}

RESILIN_CLI_GPU_INSTANTIATE(float)
RESILIN_CLI_GPU_INSTANTIATE(double)

}  // namespace resilin_cli::gpu

// The tool without CUDA: no device, and a clear error if a GPU barycentre is asked for.
#include <resilin/core/error.hpp>
#include "gpu_support.hpp"

namespace resilin_cli::gpu {

std::string device_name() { return {}; }

resilin::learn::barycenter_result<double> barycenter(measure_choice const&,
                                                     resilin::batch_view<double const>,
                                                     resilin::learn::barycenter_options const&) {
  RESILIN_THROW(resilin::runtime_error("this build of resilin has no CUDA backend"));
}

}  // namespace resilin_cli::gpu

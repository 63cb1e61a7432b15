#pragma once
// The tool's GPU path, compiled by nvcc into the tool when the build has CUDA (gpu_support.cu;
// otherwise gpu_support_none.cpp reports that there is none): barycentres whose per-iteration
// gradients of all series run as one batched call on the GPU (learn/cuda.cuh).
#include <string>
#include <resilin/core/views.hpp>
#include <resilin/learn/options.hpp>
#include "metric.hpp"

namespace resilin_cli::gpu {

/// The name of the CUDA device the tool would use; empty when the build has no CUDA or no
/// device can be used.
std::string device_name();

/// The L-BFGS barycentre of `series` for a soft metric, gradients on the GPU.
resilin::learn::barycenter_result<double> barycenter(measure_choice const& metric,
                                                     resilin::batch_view<double const> series,
                                                     resilin::learn::barycenter_options const& opt);

}  // namespace resilin_cli::gpu

#pragma once
// CUDA umbrella (nvcc only): the host library plus the CUDA-side headers. The CUDA backend's
// kernels (wavefront traversals) are the next milestone; today this header provides the error
// type and guarantees that the policies and the cell function compile as device code.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <resilin/resilin.hpp>
#include <resilin/backend/cuda/error.cuh>

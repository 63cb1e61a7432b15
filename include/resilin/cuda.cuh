#pragma once
// CUDA umbrella (nvcc only): the host library plus the CUDA backend: resilin::device.on(stream),
// the batch API on device memory (values, values_and_grads, pairwise, alignment_matrices), its
// allocation-free expert layer (resilin::expert::*, CUB-style workspace query) and the error type.
// The kernels run the block programs of backend/device/wavefront.hpp with the one cell function.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <resilin/resilin.hpp>
#include <resilin/backend/cuda/error.cuh>
#include <resilin/backend/cuda/backend.cuh>
#include <resilin/backend/cuda/kernels.cuh>
#include <resilin/backend/cuda/alignment.cuh>
#include <resilin/fcdtw/cuda/fcdtw.cuh>

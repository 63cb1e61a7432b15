#pragma once
#if !defined(__CUDACC__) && !defined(RESILIN_CUDA_EMULATION)
#  error "resilin/lct/lct.cuh needs a CUDA compiler; include resilin/lct/lct.hpp for host code"
#endif
// CUDA umbrella of lct: the host API plus the device encoder and decoder.
#include <resilin/lct/lct.hpp>

#include <resilin/lct/cuda/bits.cuh>
#include <resilin/lct/cuda/decode.cuh>
#include <resilin/lct/cuda/encode.cuh>
#include <resilin/lct/cuda/error.cuh>

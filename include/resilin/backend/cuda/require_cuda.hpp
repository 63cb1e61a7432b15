#pragma once
// Every .cuh of resilin starts here: CUDA headers need a CUDA compiler.
#if !defined(__CUDACC__) && !(defined(__clang__) && defined(__CUDA__)) && !defined(RESILIN_CUDA_EMULATION)
#  error "resilin CUDA headers (.cuh) need a CUDA compiler; host code includes <resilin/resilin.hpp>"
#endif

#pragma once
// Host/device portability macros of the lct header set (independent of the alignment headers).

// RESILIN_CUDA_EMULATION: the emulated device of the tests (see resilin/core/config.hpp).
#if defined(__CUDACC__) || (defined(__clang__) && defined(__CUDA__)) || defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_LCT_CUDA_COMPILATION 1
#  define RESILIN_LCT_HD __host__ __device__
#else
#  define RESILIN_LCT_CUDA_COMPILATION 0
#  define RESILIN_LCT_HD
#endif
// RESILIN_LCT_LAUNCH(grid, block, shared bytes, stream, kernel)(arguments...): a kernel launch.
#if defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_LCT_LAUNCH(grid, block, shared, stream, ...) RESILIN_EMULATED_LAUNCH(grid, block, shared, stream, __VA_ARGS__)
#else
#  define RESILIN_LCT_LAUNCH(grid, block, shared, stream, ...) __VA_ARGS__<<<grid, block, shared, stream>>>
#endif

// Throws on the host; aborts with the message when exceptions are disabled. Overridable.
#ifndef RESILIN_LCT_THROW
#  if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#    define RESILIN_LCT_THROW(...) throw __VA_ARGS__
#  else
#    include <cstdio>
#    include <cstdlib>
#    define RESILIN_LCT_THROW(...)                                   \
       do {                                                          \
         std::fputs((__VA_ARGS__).what(), stderr);                   \
         std::abort();                                               \
       } while (0)
#  endif
#endif

// x86 bit-manipulation instructions for the host hot loops (BEXTR, PEXT); never in a CUDA
// device pass.
#if defined(__BMI__) && !defined(__CUDA_ARCH__)
#  define RESILIN_LCT_HAS_BMI 1
#else
#  define RESILIN_LCT_HAS_BMI 0
#endif
#if defined(__BMI2__) && !defined(__CUDA_ARCH__)
#  define RESILIN_LCT_HAS_BMI2 1
#else
#  define RESILIN_LCT_HAS_BMI2 0
#endif
#if RESILIN_LCT_HAS_BMI || RESILIN_LCT_HAS_BMI2
#  include <immintrin.h>
#endif

// Inlining hints for the host hot loops.
#if defined(__GNUC__) || defined(__clang__)
#  define RESILIN_LCT_INLINE inline __attribute__((always_inline))
#  define RESILIN_LCT_NOINLINE __attribute__((noinline))
#else
#  define RESILIN_LCT_INLINE inline
#  define RESILIN_LCT_NOINLINE
#endif

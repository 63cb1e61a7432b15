#pragma once
// One spelling for host and device: RESILIN_HD marks every function reachable from a kernel;
// it is empty for host compilers, so every .hpp compiles with plain g++ -std=c++20.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// RESILIN_CUDA_EMULATION: the CUDA sources compiled as host C++ for the emulated device of the
// tests (tests/emulation: kernels run on the CPU); never defined by users.
#if defined(__CUDACC__) || (defined(__clang__) && defined(__CUDA__)) || defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_CUDA_COMPILATION 1
#  define RESILIN_HD __host__ __device__
#  define RESILIN_KERNEL __global__ static
#else
#  define RESILIN_CUDA_COMPILATION 0
#  define RESILIN_HD
#endif

#if defined(__CUDA_ARCH__) || defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_DEVICE_PASS 1
#else
#  define RESILIN_DEVICE_PASS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define RESILIN_INLINE inline __attribute__((always_inline))
#else
#  define RESILIN_INLINE inline
#endif

// RESILIN_DEVICE_NOINLINE: a rarely taken, long piece of device code (the Itakura band's 128-bit
// divisions) kept out of line, so that nvcc compiles it once per program rather than into
// every kernel that tests a cell against the band.
#if RESILIN_CUDA_COMPILATION && !defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_DEVICE_NOINLINE __noinline__
#else
#  define RESILIN_DEVICE_NOINLINE
#endif

// RESILIN_HD_CALLS_FUNCTOR: before a RESILIN_HD function template that calls a caller's functor
// (a piece visitor): nvcc then checks that call only where the template is instantiated for the
// device, so host-only functors (the FastCDTW barycentre's normal equations) pass through it
// without a warning; nothing elsewhere.
#if defined(__CUDACC__) && !defined(__clang__)
#  define RESILIN_HD_CALLS_FUNCTOR _Pragma("nv_exec_check_disable")
#else
#  define RESILIN_HD_CALLS_FUNCTOR
#endif

// RESILIN_UNROLL(n): ask GCC to unroll the next loop n times (host SIMD loops); nothing
// elsewhere (nvcc's front end and other compilers warn about GCC's pragma).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#  define RESILIN_PRAGMA(x) _Pragma(#x)
#  define RESILIN_UNROLL(n) RESILIN_PRAGMA(GCC unroll n)
#else
#  define RESILIN_UNROLL(n)
#endif

// RESILIN_DEVICE_UNROLL: unroll the next loop fully in device code (register arrays indexed by
// the loop counter stay in registers); nothing on the host.
// RESILIN_DEVICE_NO_UNROLL: keep the next loop rolled in device code (compile time, code size).
#if RESILIN_DEVICE_PASS && !defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_DEVICE_UNROLL _Pragma("unroll")
#  define RESILIN_DEVICE_NO_UNROLL _Pragma("unroll 1")
#else
#  define RESILIN_DEVICE_UNROLL
#  define RESILIN_DEVICE_NO_UNROLL
#endif

// RESILIN_LAUNCH(grid, block, shared bytes, stream, kernel)(arguments...): a kernel launch,
// kernel<<<grid, block, shared bytes, stream>>>(arguments...), which the emulated device of the
// tests runs on the CPU.
#if defined(RESILIN_CUDA_EMULATION)
#  define RESILIN_LAUNCH(grid, block, shared, stream, ...) RESILIN_EMULATED_LAUNCH(grid, block, shared, stream, __VA_ARGS__)
#else
#  define RESILIN_LAUNCH(grid, block, shared, stream, ...) __VA_ARGS__<<<grid, block, shared, stream>>>
#endif

namespace resilin {
/// Signed index type of every length, channel count and cell index.
using index_t = std::int64_t;

namespace detail {
[[noreturn]] inline void fail_fast(char const* what) noexcept {
  std::fprintf(stderr, "resilin: %s\n", what);
  std::abort();
}
}  // namespace detail
}  // namespace resilin

// RESILIN_THROW(e): overridable (fmt style); aborts with the message when exceptions are off.
#ifndef RESILIN_THROW
#  if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#    define RESILIN_THROW(...) throw __VA_ARGS__
#  else
#    define RESILIN_THROW(...) ::resilin::detail::fail_fast((__VA_ARGS__).what())
#  endif
#endif

// RESILIN_ASSERT: internal invariants of RESILIN_HD code (never input validation).
#ifndef RESILIN_ASSERT
#  if defined(NDEBUG) || RESILIN_DEVICE_PASS
#    define RESILIN_ASSERT(cond) ((void)0)
#  else
#    define RESILIN_ASSERT(cond) \
      ((cond) ? (void)0 : ::resilin::detail::fail_fast("assertion failed: " #cond))
#  endif
#endif

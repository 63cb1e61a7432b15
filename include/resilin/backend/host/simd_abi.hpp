#pragma once
// The host SIMD width, and the inline namespace that carries it into every mangled name of
// the host backend (resilin::simd and resilin::host_detail).
//
// Width: 64 bytes where the compiler targets AVX-512F (-march=native on a machine that has it,
// or -mavx512f), 32 with AVX, else 16. Define RESILIN_NO_AVX512 to keep 32-byte vectors on an
// AVX-512 target. Results are deterministic for a given width; the last bits of gradients may
// differ between widths (the strips, and so some sums, are laid out differently).
//
// Why the namespace: translation units built for different ISAs (one file with -mavx2, another
// without) would otherwise define the same host templates with different pack layouts under
// one name, and the linker would keep one of them for both (an ODR violation that reads and
// writes buffers with the wrong element size). With the width in the namespace they are
// different entities, and no call mixes two layouts. Which width a call runs is not settled by
// it: the front-end templates that call in (resilin::value, the learners) and any other inline
// code are one entity across the TUs, and the linker keeps one TU's copy, so a narrow TU may run
// the wide code (on a CPU without that ISA, an illegal instruction). Per-CPU dispatch needs each
// ISA's code in its own shared library with hidden symbols (README, "CMake").
#if defined(__AVX512F__) && !defined(RESILIN_NO_AVX512)
#define RESILIN_SIMD_BYTES 64
#define RESILIN_HOST_ABI simd64
#elif defined(__AVX__)
#define RESILIN_SIMD_BYTES 32
#define RESILIN_HOST_ABI simd32
#else
#define RESILIN_SIMD_BYTES 16
#define RESILIN_HOST_ABI simd16
#endif

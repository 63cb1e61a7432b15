#pragma once
#if !defined(__CUDACC__) && !defined(RESILIN_CUDA_EMULATION)
#  error "resilin/lct/cuda/*.cuh need a CUDA compiler; include resilin/lct/lct.hpp for host code"
#endif
// CUDA decoder (spec/lct.md §3.6): one CTA per chunk; each thread owns a run of 128-bit windows
// found through the gap plane, counts its codes, a block scan places them, a second pass decodes
// into shared memory, and the merge with the raw planes is written coalesced. Stream-ordered;
// caller-provided workspace (decode_workspace_bytes). Deterministic: no atomics on data.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <cub/block/block_scan.cuh>

#include <resilin/lct/cuda/bits.cuh>
#include <resilin/lct/config.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/tables.hpp>

namespace resilin::lct::cuda_codec {

inline constexpr unsigned block_threads = 256;
inline constexpr unsigned max_device_chunk_log2 = 13;   ///< K <= 8192 on the device

/// An encoded tensor in device memory (same sections as stream_view).
struct device_stream {
  dtype type = dtype::bf16;
  std::uint64_t count = 0;
  unsigned chunk_log2 = default_chunk_log2;
  unsigned key_ref = 0;
  code_lengths lengths{};                 ///< the book (passed to kernels by value)
  std::uint8_t const* raw = nullptr;      ///< raw_plane_bytes(type, count)
  std::uint32_t const* offsets = nullptr; ///< C + 1
  std::uint32_t const* bits = nullptr;    ///< C
  std::uint32_t const* stream = nullptr;  ///< stream_words words
  std::uint64_t stream_words = 0;
};

/// Workspace: the decode LUT and an error word (nonzero after a corrupt chunk).
inline std::size_t decode_workspace_bytes() noexcept { return lut_size * sizeof(std::uint16_t) + 16; }

namespace detail {

__global__ static void build_lut_kernel(code_lengths cl, unsigned key_ref, std::uint16_t* lut, std::uint32_t* error) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    std::uint32_t codes[257] = {};
    canonical_codes(cl, codes);
    build_decode_lut(cl, key_ref, codes, lut);
    *error = 0;
  }
}

template <dtype T>
__device__ __forceinline__ void merge_store(std::uint8_t const* raw, std::uint64_t n, std::uint64_t i, unsigned e,
                                            void* out) {
  raw_planes const p = planes_of(T, const_cast<std::uint8_t*>(raw), n);
  if constexpr (T == dtype::bf16) {
    static_cast<std::uint16_t*>(out)[i] = merge_bf16(e, p.p8[i]);
  } else if constexpr (T == dtype::fp16) {
    std::uint8_t const* g = p.p3 + (i / 8) * 3;
    std::uint32_t const f = (g[0] | (std::uint32_t{g[1]} << 8) | (std::uint32_t{g[2]} << 16)) >> (3 * (i % 8));
    static_cast<std::uint16_t*>(out)[i] = merge_fp16(e, p.p8[i], f & 7u);
  } else {
    std::uint16_t const lo = static_cast<std::uint16_t>(p.p16[2 * i] | (p.p16[2 * i + 1] << 8));
    static_cast<std::uint32_t*>(out)[i] = merge_fp32(e, lo, p.p8[i]);
  }
}

template <dtype T>
__global__ static void __launch_bounds__(block_threads)
decode_chunks_kernel(device_stream s, std::uint16_t const* g_lut, std::uint32_t* error, void* out) {
  using scan_t = cub::BlockScan<std::uint32_t, block_threads>;
  __shared__ std::uint16_t lut[lut_size];
  __shared__ std::uint8_t sym[1u << max_device_chunk_log2];
  __shared__ typename scan_t::TempStorage scan_tmp;
  __shared__ std::uint64_t run_start[block_threads];  // where each thread's codes begin
  __shared__ std::uint32_t misplaced;                 // some run does not end where the next begins
  unsigned constexpr b = exponent_bits(T);
  std::uint64_t const c = blockIdx.x;
  for (unsigned i = threadIdx.x; i < lut_size; i += block_threads) lut[i] = g_lut[i];
  if (threadIdx.x == 0) misplaced = 0;
  std::uint32_t const count = chunk_elements(s.count, s.chunk_log2, c);
  std::uint32_t const word0 = s.offsets[c];
  std::uint32_t const bits = s.bits[c] & ~raw_chunk_flag;
  std::uint64_t const base = std::uint64_t{word0} * 32;
  __syncthreads();
  // the chunk table as the host decoder checks it (block-uniform: every thread reads the same
  // words); a raw flag or an offset edited in place was decoded as it came, wrongly
  std::uint32_t const word1 = s.offsets[c + 1];
  if (word1 < word0 || word1 > s.stream_words || !chunk_layout_ok(s.bits[c], word1 - word0, count, b)) {
    if (threadIdx.x == 0) atomicOr(error, 1u);
    return;
  }
  if (s.bits[c] & raw_chunk_flag) {
    for (std::uint32_t i = threadIdx.x; i < count; i += block_threads)
      sym[i] = static_cast<std::uint8_t>(lct::detail::peek32(s.stream, s.stream_words, base + std::uint64_t{i} * b) >> (32 - b));
  } else {
    std::uint32_t const nwin = window_count(bits);
    std::uint32_t const wpt = (nwin + block_threads - 1) / block_threads;
    std::uint32_t const w0 = threadIdx.x * wpt;
    std::uint32_t const w1 = min(nwin, w0 + wpt);
    std::uint64_t const gap_base = base + div_up(bits, 32) * 32;
    std::uint64_t start = 0, end = 0;
    if (w0 < w1) {
      unsigned const gap = lct::detail::peek32(s.stream, s.stream_words, gap_base + std::uint64_t{w0} * gap_field_bits) >> 27;
      start = base + std::uint64_t{w0} * window_bits + gap;
      end = base + min(std::uint64_t{w1} * window_bits, std::uint64_t{bits});
      run_start[threadIdx.x] = start;
    }
    // phase 1: count the codes starting in my windows
    std::uint32_t n = 0;
    std::uint64_t pos = start;
    for (; pos < end; ++n) {
      std::uint16_t const e = lut[lct::detail::peek32(s.stream, s.stream_words, pos) >> (32 - lut_bits)];
      // an empty entry (never, for the complete books decode() accepts) still moves on, so that
      // a bad LUT ends in the count check below instead of an endless loop
      pos += lut_length(e) + ((e & lut_escape) ? b : 0u) + (lut_length(e) == 0u);
    }
    std::uint32_t first = 0, total = 0;
    scan_t(scan_tmp).ExclusiveSum(n, first, total);
    // The gaps must put every thread on a code boundary: the first run starts the chunk, each
    // run's last code ends where the next run begins, the last one's at the chunk's end. A wrong
    // gap (the host decoder never reads them) resynchronises after a few codes, so the count
    // alone often still adds up while elements come out wrong.
    __syncthreads();
    if (w0 < w1) {
      std::uint32_t const runs = (nwin + wpt - 1) / wpt;
      std::uint64_t const next = threadIdx.x + 1 < runs ? run_start[threadIdx.x + 1] : base + bits;
      if (pos != next || (threadIdx.x == 0 && start != base)) misplaced = 1;
    }
    __syncthreads();
    if (total != count || misplaced) {   // block-uniform
      if (threadIdx.x == 0) atomicOr(error, 1u);
      return;
    }
    // phase 2: decode into shared memory at my place
    std::uint32_t k = first;
    for (pos = start; pos < end && k < count; ++k) {
      std::uint32_t const w = lct::detail::peek32(s.stream, s.stream_words, pos);
      std::uint16_t const e = lut[w >> (32 - lut_bits)];
      unsigned const l = lut_length(e);
      if (e & lut_escape) {
        sym[k] = static_cast<std::uint8_t>((w >> (32 - l - b)) & ((1u << b) - 1u));
        pos += l + b;
      } else {
        sym[k] = static_cast<std::uint8_t>(lut_symbol(e));
        pos += l;
      }
    }
  }
  __syncthreads();
  std::uint64_t const first_elem = c << s.chunk_log2;
  for (std::uint32_t i = threadIdx.x; i < count; i += block_threads)
    merge_store<T>(s.raw, s.count, first_elem + i, sym[i], out);
}

/// Discards an error that an earlier runtime call left pending, so that the status encode and
/// decode return is their own: they read their launches' status with cudaGetLastError, which
/// also returns, say, the out-of-memory of the caller's own cudaMalloc that failed and was
/// handled. A sticky error (an illegal address) stays, and comes back from the next launch.
inline void discard_pending_error() noexcept { (void)cudaGetLastError(); }
}  // namespace detail

/// Decodes `s` into `out` (count * element_bytes bytes of device memory) on `stream`.
/// cudaErrorInvalidValue for a book that is not complete for s.type (or whose escape payload
/// is not s.type's exponent width), key_ref outside the alphabet, missing sections,
/// offsets/bits/stream or the workspace not 4-byte aligned, or `out` not aligned to its
/// element size (a GPU faults on misaligned words where the host tolerates them), and for an
/// `out` or workspace that overlaps the sections or each other (written while they are read).
/// The workspace must stay alive until the work completes; read_decode_error() reports a
/// corrupt chunk (a chunk table entry that disagrees with its region, counts that do not add
/// up, or threads' runs of codes that do not join: a wrong gap field) after the stream has been
/// synchronised.
inline cudaError_t decode(device_stream const& s, void* out, void* workspace, std::size_t workspace_bytes,
                          cudaStream_t stream = nullptr) {
  if (!is_valid(s.type) || s.chunk_log2 < min_chunk_log2 || s.chunk_log2 > max_device_chunk_log2 ||
      workspace == nullptr || workspace_bytes < decode_workspace_bytes() ||
      !is_complete_book(s.lengths, alphabet_size(s.type)) || s.lengths.exp_bits != exponent_bits(s.type) ||
      s.key_ref >= alphabet_size(s.type))
    return cudaErrorInvalidValue;
  // the sections are read as 32-bit words (a container's sections are not aligned: copy them)
  if (!is_aligned_to(workspace, 4)) return cudaErrorInvalidValue;  // the LUT and the error word
  if (s.count > 0 && (out == nullptr || s.raw == nullptr || s.offsets == nullptr || s.bits == nullptr ||
                      s.stream == nullptr || !is_aligned_to(s.offsets, 4) || !is_aligned_to(s.bits, 4) ||
                      !is_aligned_to(s.stream, 4) || !is_aligned_for(s.type, out)))
    return cudaErrorInvalidValue;
  {
    std::uint64_t const C = chunk_count(s.count, s.chunk_log2);
    std::uint64_t const out_bytes = s.count * element_bytes(s.type);
    std::uint64_t const ws_bytes = decode_workspace_bytes();
    for (auto const& [p, bytes] : {std::pair<void const*, std::uint64_t>{s.raw, raw_plane_bytes(s.type, s.count)},
                                   {s.offsets, 4 * (C + 1)}, {s.bits, 4 * C}, {s.stream, 4 * s.stream_words}})
      if (overlaps(out, out_bytes, p, bytes) || overlaps(workspace, ws_bytes, p, bytes)) return cudaErrorInvalidValue;
    if (overlaps(out, out_bytes, workspace, ws_bytes)) return cudaErrorInvalidValue;
  }
  auto* lut = static_cast<std::uint16_t*>(workspace);
  auto* error = reinterpret_cast<std::uint32_t*>(static_cast<char*>(workspace) + lut_size * sizeof(std::uint16_t));
  detail::discard_pending_error();
  RESILIN_LCT_LAUNCH(1, 1, 0, stream, detail::build_lut_kernel)(s.lengths, s.key_ref, lut, error);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  std::uint64_t const C = chunk_count(s.count, s.chunk_log2);
  if (C == 0) return cudaSuccess;
  if (C > 0x7FFFFFFFull) return cudaErrorInvalidValue;
  switch (s.type) {
    case dtype::bf16: RESILIN_LCT_LAUNCH(static_cast<unsigned>(C), block_threads, 0, stream, detail::decode_chunks_kernel<dtype::bf16>)(s, lut, error, out); break;
    case dtype::fp16: RESILIN_LCT_LAUNCH(static_cast<unsigned>(C), block_threads, 0, stream, detail::decode_chunks_kernel<dtype::fp16>)(s, lut, error, out); break;
    case dtype::fp32: RESILIN_LCT_LAUNCH(static_cast<unsigned>(C), block_threads, 0, stream, detail::decode_chunks_kernel<dtype::fp32>)(s, lut, error, out); break;
  }
  return cudaGetLastError();
}

/// Copies the error word of a decode workspace to `*error` (synchronous on `stream`).
inline cudaError_t read_decode_error(void const* workspace, std::uint32_t* error, cudaStream_t stream = nullptr) {
  auto const* e = reinterpret_cast<std::uint32_t const*>(static_cast<char const*>(workspace) + lut_size * sizeof(std::uint16_t));
  if (cudaError_t r = cudaMemcpyAsync(error, e, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream); r != cudaSuccess) return r;
  return cudaStreamSynchronize(stream);
}

}  // namespace resilin::lct::cuda_codec

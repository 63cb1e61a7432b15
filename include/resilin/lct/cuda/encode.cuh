#pragma once
#if !defined(__CUDACC__) && !defined(RESILIN_CUDA_EMULATION)
#  error "resilin/lct/cuda/*.cuh need a CUDA compiler; include resilin/lct/lct.hpp for host code"
#endif
// CUDA encoder (spec/lct.md §3.7): histogram kernel -> one-thread kernel picking the modal
// exponent and building the encode table -> one CTA per chunk (table lookup, block scan of
// code lengths, bit packing in shared memory, gap fields, raw planes) -> scan of region sizes
// -> compaction. Stream-ordered, caller-provided workspace, no host synchronisation. Output is
// byte-identical to the host encoder's (same tables, same raw-fallback rule, same layout).
// Shared-memory atomicOr packs bits; OR is order-independent, so results are deterministic.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <cub/block/block_scan.cuh>

#include <resilin/lct/cuda/bits.cuh>
#include <resilin/lct/cuda/decode.cuh>
#include <resilin/lct/config.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/tables.hpp>

namespace resilin::lct::cuda_codec {

/// Where the encoder writes (device memory). stream needs max_stream_words() words.
struct device_encode_output {
  std::uint8_t* raw = nullptr;           ///< raw_plane_bytes(type, count)
  std::uint32_t* offsets = nullptr;      ///< C + 1 (offsets[C] = stream words used)
  std::uint32_t* bits = nullptr;         ///< C
  std::uint32_t* stream = nullptr;
  std::uint32_t* key_ref = nullptr;      ///< 1 word: the modal exponent the book was keyed on
  unsigned long long* histogram = nullptr;  ///< optional: 256 exponent counts (refresh statistics)
};

/// Upper bound of the stream words of an encode (every chunk is at most its raw region).
inline std::uint64_t max_stream_words(dtype t, std::uint64_t n, unsigned chunk_log2) noexcept {
  std::uint64_t const C = chunk_count(n, chunk_log2);
  if (C == 0) return 0;
  return (C - 1) * raw_region_words(1u << chunk_log2, exponent_bits(t)) +
         raw_region_words(chunk_elements(n, chunk_log2, C - 1), exponent_bits(t));
}

namespace detail {

inline std::size_t slot_words(dtype t, unsigned chunk_log2) noexcept {
  return max_region_words(1u << chunk_log2, exponent_bits(t));
}
struct encode_ws {
  unsigned long long* hist;   // 256
  std::uint32_t* table;       // 256
  std::uint32_t* sizes;       // C
  std::uint32_t* slots;       // C * slot_words
};
inline encode_ws carve(void* ws, std::uint64_t C) noexcept {
  char* p = static_cast<char*>(ws);
  encode_ws w;
  w.hist = reinterpret_cast<unsigned long long*>(p);
  w.table = reinterpret_cast<std::uint32_t*>(p + 256 * 8);
  w.sizes = reinterpret_cast<std::uint32_t*>(p + 256 * 8 + 256 * 4);
  w.slots = reinterpret_cast<std::uint32_t*>(p + 256 * 8 + 256 * 4 + ((4 * C + 15) / 16) * 16);
  return w;
}

template <dtype T>
__device__ __forceinline__ std::uint32_t load_bits(void const* in, std::uint64_t i) {
  if constexpr (T == dtype::fp32) return static_cast<std::uint32_t const*>(in)[i];
  else return static_cast<std::uint16_t const*>(in)[i];
}

template <dtype T>
__global__ static void histogram_kernel(void const* in, std::uint64_t n, unsigned long long* hist) {
  __shared__ unsigned int h[256];
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
  __syncthreads();
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n; i += std::uint64_t{gridDim.x} * blockDim.x)
    atomicAdd(&h[exponent_of(T, load_bits<T>(in, i))], 1u);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
    if (h[i]) atomicAdd(&hist[i], static_cast<unsigned long long>(h[i]));
}

__global__ static void prepare_kernel(code_lengths cl, unsigned long long const* hist, std::uint32_t* table,
                                      std::uint32_t* key_ref_out, unsigned long long* hist_out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  unsigned best = 0;   // modal exponent, smallest on ties (as the host)
  for (unsigned e = 1; e < cl.n_keys; ++e) if (hist[e] > hist[best]) best = e;
  std::uint32_t codes[257] = {};
  canonical_codes(cl, codes);
  build_encode_table(cl, best, codes, table);
  if (key_ref_out) *key_ref_out = best;
  if (hist_out) for (unsigned e = 0; e < 256; ++e) hist_out[e] = hist[e];
}

template <dtype T>
__device__ __forceinline__ void split_store(void const* in, std::uint64_t n, std::uint64_t i, std::uint8_t* raw) {
  raw_planes const p = planes_of(T, raw, n);
  std::uint32_t const u = load_bits<T>(in, i);
  if constexpr (T == dtype::bf16) {
    p.p8[i] = raw_bf16(static_cast<std::uint16_t>(u));
  } else if constexpr (T == dtype::fp16) {
    p.p8[i] = static_cast<std::uint8_t>(u);
  } else {
    p.p16[2 * i] = static_cast<std::uint8_t>(u);
    p.p16[2 * i + 1] = static_cast<std::uint8_t>(u >> 8);
    p.p8[i] = hi_fp32(u);
  }
}

template <dtype T>
__global__ static void __launch_bounds__(block_threads)
encode_chunks_kernel(void const* in, std::uint64_t n, unsigned chunk_log2, std::uint32_t const* g_table,
                     std::uint32_t* slots, std::size_t slot_words, std::uint32_t* sizes, std::uint32_t* bits_out,
                     std::uint8_t* raw) {
  using scan_t = cub::BlockScan<std::uint32_t, block_threads>;
  constexpr unsigned kmax = 1u << max_device_chunk_log2;
  constexpr unsigned per_thread = kmax / block_threads;
  constexpr unsigned b = exponent_bits(T);
  __shared__ std::uint32_t table[256];
  __shared__ std::uint32_t buf[max_region_words(kmax, b)];
  __shared__ typename scan_t::TempStorage scan_tmp;
  std::uint64_t const c = blockIdx.x;
  std::uint32_t const count = chunk_elements(n, chunk_log2, c);
  std::uint64_t const first = c << chunk_log2;
  for (unsigned i = threadIdx.x; i < 256; i += block_threads) table[i] = i < (1u << b) ? g_table[i] : 0u;
  // raw planes (coalesced)
  for (std::uint32_t i = threadIdx.x; i < count; i += block_threads) split_store<T>(in, n, first + i, raw);
  if constexpr (T == dtype::fp16) {
    raw_planes const p = planes_of(T, raw, n);
    for (std::uint32_t g = threadIdx.x; g < (count + 7) / 8; g += block_threads) {
      std::uint32_t v = 0;
      for (unsigned k = 0; k < 8 && 8 * g + k < count; ++k)
        v |= f3_fp16(static_cast<std::uint16_t>(load_bits<T>(in, first + 8 * g + k))) << (3 * k);
      std::uint8_t* q = p.p3 + (first / 8 + g) * 3;
      q[0] = static_cast<std::uint8_t>(v); q[1] = static_cast<std::uint8_t>(v >> 8); q[2] = static_cast<std::uint8_t>(v >> 16);
    }
  }
  __syncthreads();
  // table lookup and block scan of code lengths: thread t owns elements [t*ipt, (t+1)*ipt)
  unsigned const ipt = (count + block_threads - 1) / block_threads;   // <= per_thread
  std::uint32_t ent[per_thread];
  std::uint32_t mine = 0;
  for (unsigned k = 0; k < per_thread; ++k) {
    std::uint32_t const i = threadIdx.x * ipt + k;
    ent[k] = (k < ipt && i < count) ? table[exponent_of(T, load_bits<T>(in, first + i))] : 0u;
    mine += ent[k] & 31u;
  }
  std::uint32_t start = 0, code_bits = 0;
  scan_t(scan_tmp).ExclusiveSum(mine, start, code_bits);
  bool const raw_chunk = prefer_raw(code_bits, count, b);
  std::uint32_t const region = raw_chunk ? raw_region_words(count, b) : coded_region_words(code_bits);
  for (std::uint32_t w = threadIdx.x; w < region; w += block_threads) buf[w] = 0;
  __syncthreads();
  if (raw_chunk) {
    for (unsigned k = 0; k < per_thread; ++k) {
      std::uint32_t const i = threadIdx.x * ipt + k;
      if (k < ipt && i < count)
        lct::detail::or_bits(buf, i * b, exponent_of(T, load_bits<T>(in, first + i)), b);
    }
  } else {
    std::uint32_t const code_words = static_cast<std::uint32_t>(div_up(code_bits, 32));
    std::uint32_t const nwin = window_count(code_bits);
    std::uint32_t pos = start;
    for (unsigned k = 0; k < per_thread; ++k) {
      unsigned const len = ent[k] & 31u;
      if (len == 0) continue;
      lct::detail::or_bits(buf, pos, ent[k] >> 5, len);
      std::uint32_t const boundary = (pos / window_bits + 1) * window_bits;
      std::uint32_t const end = pos + len;
      if (end > boundary && boundary / window_bits < nwin)   // end == boundary -> gap 0 (already zero)
        lct::detail::or_bits(buf, code_words * 32 + (boundary / window_bits) * gap_field_bits, end - boundary, gap_field_bits);
      pos = end;
    }
  }
  __syncthreads();
  std::uint32_t* slot = slots + c * slot_words;
  for (std::uint32_t w = threadIdx.x; w < region; w += block_threads) slot[w] = lct::detail::bswap32(buf[w]);
  if (threadIdx.x == 0) {
    sizes[c] = region;
    bits_out[c] = raw_chunk ? ((count * b) | raw_chunk_flag) : code_bits;
  }
}

__global__ static void __launch_bounds__(1024) scan_sizes_kernel(std::uint32_t const* sizes, std::uint64_t C, std::uint32_t* offsets) {
  using scan_t = cub::BlockScan<std::uint64_t, 1024>;
  __shared__ typename scan_t::TempStorage tmp;
  __shared__ std::uint64_t carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (std::uint64_t base = 0; base < C; base += 1024) {
    std::uint64_t const i = base + threadIdx.x;
    std::uint64_t v = i < C ? sizes[i] : 0, ex = 0, agg = 0;
    scan_t(tmp).ExclusiveSum(v, ex, agg);
    if (i < C) offsets[i] = static_cast<std::uint32_t>(carry + ex);
    __syncthreads();
    if (threadIdx.x == 0) carry += agg;
    __syncthreads();
  }
  if (threadIdx.x == 0) offsets[C] = static_cast<std::uint32_t>(carry);
}

__global__ static void compact_kernel(std::uint32_t const* slots, std::size_t slot_words, std::uint32_t const* sizes,
                                      std::uint32_t const* offsets, std::uint32_t* stream) {
  std::uint64_t const c = blockIdx.x;
  std::uint32_t const* src = slots + c * slot_words;
  std::uint32_t* dst = stream + offsets[c];
  for (std::uint32_t w = threadIdx.x; w < sizes[c]; w += blockDim.x) dst[w] = src[w];
}

}  // namespace detail

/// Workspace bytes for encoding n elements.
inline std::size_t encode_workspace_bytes(dtype t, std::uint64_t n, unsigned chunk_log2 = default_chunk_log2) noexcept {
  std::uint64_t const C = chunk_count(n, chunk_log2);
  return 256 * 8 + 256 * 4 + ((4 * C + 15) / 16) * 16 + 4 * C * detail::slot_words(t, chunk_log2);
}

/// Encodes n elements at `in` (device memory) with book `lengths` on `stream`. The layout of
/// `out` matches stream_view; read offsets[C] for the stream words used. cudaErrorInvalidValue
/// for bad parameters (a book that is not complete for t, or whose escape payload is not t's
/// exponent width: such streams could not be decoded), null or misaligned outputs (words: 4 bytes; the histogram: 8), an input
/// not aligned to its element size, a workspace not 8-byte aligned, or inputs whose stream
/// could pass 2^32 words (about 1.7e10 elements with 8-bit exponents, 2.7e10 in fp16).
inline cudaError_t encode(dtype t, void const* in, std::uint64_t n, code_lengths const& lengths, unsigned chunk_log2,
                          device_encode_output const& out, void* workspace, std::size_t workspace_bytes,
                          cudaStream_t stream = nullptr) {
  if (!is_valid(t) || chunk_log2 < min_chunk_log2 || chunk_log2 > max_device_chunk_log2 ||
      lengths.n_keys != alphabet_size(t) || !is_complete_book(lengths, alphabet_size(t)) ||
      lengths.exp_bits != exponent_bits(t) || workspace == nullptr ||
      workspace_bytes < encode_workspace_bytes(t, n, chunk_log2) || out.offsets == nullptr)
    return cudaErrorInvalidValue;
  if (n > 0 && (in == nullptr || out.raw == nullptr || out.bits == nullptr || out.stream == nullptr))
    return cudaErrorInvalidValue;
  // a GPU faults (sticky cudaErrorMisalignedAddress) where the host tolerates it: the input is
  // read as whole elements, the workspace's histogram takes 64-bit atomics, the outputs are words
  if (!is_aligned_to(workspace, 8) || !is_aligned_to(out.offsets, 4) ||
      !is_aligned_to(out.key_ref, 4) || !is_aligned_to(out.histogram, 8) ||
      (n > 0 && (!is_aligned_for(t, in) || !is_aligned_to(out.bits, 4) || !is_aligned_to(out.stream, 4))))
    return cudaErrorInvalidValue;
  std::uint64_t const C = chunk_count(n, chunk_log2);
  if (C > 0x7FFFFFFFull) return cudaErrorInvalidValue;
  // the offsets are 32-bit words (the host encoder throws past them): refuse what could overflow
  if (max_stream_words(t, n, chunk_log2) > 0xFFFFFFFFull) return cudaErrorInvalidValue;
  detail::encode_ws const ws = detail::carve(workspace, C);
  detail::discard_pending_error();
  if (cudaError_t e = cudaMemsetAsync(ws.hist, 0, 256 * 8, stream); e != cudaSuccess) return e;
  unsigned const hist_blocks = static_cast<unsigned>(n == 0 ? 1 : (n + 4095) / 4096 < 1024 ? (n + 4095) / 4096 : 1024);
  std::size_t const slot = detail::slot_words(t, chunk_log2);
  switch (t) {
    case dtype::bf16: RESILIN_LCT_LAUNCH(hist_blocks, 256, 0, stream, detail::histogram_kernel<dtype::bf16>)(in, n, ws.hist); break;
    case dtype::fp16: RESILIN_LCT_LAUNCH(hist_blocks, 256, 0, stream, detail::histogram_kernel<dtype::fp16>)(in, n, ws.hist); break;
    case dtype::fp32: RESILIN_LCT_LAUNCH(hist_blocks, 256, 0, stream, detail::histogram_kernel<dtype::fp32>)(in, n, ws.hist); break;
  }
  RESILIN_LCT_LAUNCH(1, 1, 0, stream, detail::prepare_kernel)
      (lengths, ws.hist, ws.table, out.key_ref, out.histogram);
  if (C > 0) {
    unsigned const grid = static_cast<unsigned>(C);
    switch (t) {
      case dtype::bf16: RESILIN_LCT_LAUNCH(grid, block_threads, 0, stream, detail::encode_chunks_kernel<dtype::bf16>)(in, n, chunk_log2, ws.table, ws.slots, slot, ws.sizes, out.bits, out.raw); break;
      case dtype::fp16: RESILIN_LCT_LAUNCH(grid, block_threads, 0, stream, detail::encode_chunks_kernel<dtype::fp16>)(in, n, chunk_log2, ws.table, ws.slots, slot, ws.sizes, out.bits, out.raw); break;
      case dtype::fp32: RESILIN_LCT_LAUNCH(grid, block_threads, 0, stream, detail::encode_chunks_kernel<dtype::fp32>)(in, n, chunk_log2, ws.table, ws.slots, slot, ws.sizes, out.bits, out.raw); break;
    }
  }
  RESILIN_LCT_LAUNCH(1, 1024, 0, stream, detail::scan_sizes_kernel)(ws.sizes, C, out.offsets);
  if (C > 0) RESILIN_LCT_LAUNCH(static_cast<unsigned>(C), 256, 0, stream, detail::compact_kernel)
      (ws.slots, slot, ws.sizes, out.offsets, out.stream);
  return cudaGetLastError();
}

}  // namespace resilin::lct::cuda_codec

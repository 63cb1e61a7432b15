#pragma once
// The CUDA front end of the alignment recursion, in two layers (CUB / Thrust style):
//
//   resilin::expert::values(workspace, workspace_bytes, exec, measure, X, Y, out)   etc.
//     allocates nothing and throws nothing: with workspace == nullptr it only writes the
//     workspace size in bytes; otherwise it validates, enqueues the kernels on exec.stream and
//     returns a cudaError_t (cudaErrorInvalidValue for bad input, or for a workspace smaller
//     than asked or not 16-byte aligned: cudaMalloc's and memory pools' are).
//   resilin::values(resilin::device.on(stream), measure, X, Y, out)                  etc.
//     the same names and semantics as the host batch API (alignment.hpp); allocates its
//     workspace stream-ordered (cuda_memory::allocate, or the backend's allocator) and throws
//     resilin::invalid_argument (bad input) or resilin::cuda_error (CUDA failures).
//
// Every pointer (X, Y, their per-series lengths, out, gradients, upstream, E) must be device
// accessible (device, managed, or mapped pinned memory); this is checked on the host. What the
// host cannot check without a copy is documented instead: the values must be finite, and the
// per-series lengths must lie in [1, max_length] (a pair with a length outside that range gets
// a NaN result and zero gradients). All calls are asynchronous on the stream.
//
// Memory (beyond inputs and outputs): value-only calls use 3 rolling anti-diagonals of
// min(n, m) values per pair (shared memory up to 48 KB per block, else workspace; nothing for
// the shuffle warps of pairs with min(n, m) <= 32, which keep their cells in registers, nor
// for the strip warps (large batches, a job's rows at most 992: min(n, m), with the divergence
// max(n, m)), whose lanes keep a strip of rows each in registers and stage the rows series in
// shared memory; the tiled wavefront keeps three diagonals of tile borders, 6 min(n, m) values per problem,
// rounded up to whole tiles of 128: with the divergence, whose self terms are (n, n) and
// (m, m), 6 max(n, m) for each of the three); training calls store R only, one value per
// cell of each pair's grid (anti-diagonal-major), plus 7 rolling diagonals per pair (none for
// the shuffle warps of jobs of at most 32 rows), or, checkpointed (device.with_training_store,
// automatic beyond 4 GiB where that takes less), two diagonals every k ~ sqrt(2 (n + m)) and one
// segment of k diagonals per pair, each diagonal at X's length n, recomputed once in the
// backward (same bits); the divergence adds its two self problems
// and four input-sized gradient buffers. Tiled calls (device_schedule::tiled, automatic for a
// few very long pairs and for DTW costs of 16 channels or more) train by tiles of 128 x 128
// cells: R as above plus every tile's bottom row and right column (2 n m / 128 values), or,
// checkpointed, only those borders and one scratch tile per running tile (each tile recomputed
// once in the backward); G crosses the tile borders through 6 (n + m) values per pair. With
// DTW costs of 16 channels or more a tile's distances live in its shared memory (128 x 128
// values and two staged chunks: 77 KB per CTA in float, 155 KB in double; without that much
// opt-in shared memory the tiles compute each cell's distance instead). No distance matrix in
// global memory, no E unless asked for.
// pairwise_grads trains the |X| |Y| pairs as one paired batch: its workspace adds copies of X
// and Y and the gradients of every pair (|X| |Y| (X.max_length + Y.max_length) d values).
// Independent channels (measure::independent_channels, as the MSM family's factories set it,
// with d > 1 channels) run as d univariate problems, as on the host: X and Y are copied
// channel-major into the workspace, each channel runs as one launch sequence on a one-channel
// batch, and the channels' values are summed in channel order (the gradients copied back):
// the workspace adds X and Y once more (GX and GY too for gradients) and d values per result.
// Determinism: no atomics; results are bitwise identical run to run on the same GPU and build.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <cuda_runtime_api.h>
#include <resilin/alignment.hpp>
#include <resilin/backend/cuda/backend.cuh>
#include <resilin/backend/cuda/error.cuh>
#include <resilin/backend/cuda/kernels.cuh>
#include <resilin/backend/cuda/stream_memory.cuh>
#include <resilin/backend/device/wavefront.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/measure.hpp>

namespace resilin {

namespace cuda_detail {

/// "" when the batch is usable on the device, else the reason.
template <class T>
std::string check_device_batch(batch_view<T const> b, char const* name) {
  if (b.batch < 0) return detail::message(name, ": batch must be >= 0, got ", b.batch);
  if (b.channels < 1) return detail::message(name, ": channels must be >= 1, got ", b.channels);
  if (b.batch == 0) return {};
  if (b.max_length < 1) return detail::message(name, ": max_length must be >= 1, got ", b.max_length);
  if (!b.data) return detail::message(name, ": data is null");
  if (!device_accessible(b.data))
    return detail::message(name, ": data is not device memory (host pointer?)");
  if (b.lengths && !device_accessible(b.lengths))
    return detail::message(name, ": lengths must point to device memory");
  return {};
}

/// The outputs of a values launch (out: `count` values; the alignment matrices e, when given)
/// apart from X and Y: the expert layer's check and the convenience layer's message, one rule.
template <class T>
std::string outputs_overlap_error(batch_view<T const> X, batch_view<T const> Y, T const* out,
                                  index_t count, T const* e = nullptr) {
  index_t const e_count = e ? X.batch * X.max_length * Y.max_length : 0;
  return detail::disjoint_error({detail::region(out, count, "out"), detail::region(e, e_count, "E")},
                                {detail::region(X, "X"), detail::region(Y, "Y")});
}

/// values_and_grads' overlap rule on device batches (detail::gradients_overlap_error), except
/// that GX and GY are never one buffer here, not even for Y = X as on the host: the cells of
/// one anti-diagonal run in parallel, and cell (i, j) adds to x_i while cell (j, i) adds to
/// y_i, the same word, unordered (a reviewer's lock-step model lost half of a gradient).
template <class T>
std::string gradients_overlap_error(batch_view<T const> X, batch_view<T const> Y, T const* out,
                                    batch_view<T> gx, batch_view<T> gy, T const* upstream) {
  if (gx.data != nullptr && gx.data == gy.data)
    return "GY is GX: on the device the two gradients need separate buffers (for Y = X, add GY to GX "
           "after the call)";
  return detail::gradients_overlap_error(
      detail::region(X, "X"), detail::region(Y, "Y"), detail::region(gx, "GX"), detail::region(gy, "GY"),
      detail::region(out, X.batch, "out"), detail::region(upstream, upstream ? X.batch : 0, "upstream"));
}

/// m.validate<T>()'s message, or empty (a build without exceptions lets it terminate).
template <class T, class Measure>
std::string check_parameters(Measure const& m) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    m.template validate<T>();
  } catch (std::exception const& e) {
    return e.what();
  }
#else
  m.template validate<T>();
#endif
  return {};
}

template <class T, class Cost, class Smooth>
std::string check_common(measure<Cost, Smooth> const& m, batch_view<T const> X,
                         batch_view<T const> Y) {
  static_assert(cost_model<Cost, T>, "the measure's cost model does not model cost_model<T>");
  static_assert(smoothing_rule<Smooth, T>, "the smoothing does not model smoothing_rule<T>");
  std::string e = check_parameters<T>(m);
  if (e.empty()) e = check_device_batch(X, "X");
  if (e.empty()) e = check_device_batch(Y, "Y");
  if (e.empty() && X.channels != Y.channels)
    e = detail::message("channel mismatch: X has ", X.channels, ", Y has ", Y.channels);
  return e;
}

template <class T>
std::string check_output(T const* p, char const* name) {
  if (!p) return detail::message(name, " is null");
  if (!device_accessible(p)) return detail::message(name, " is not device memory");
  return {};
}

inline char* at(void* base, std::size_t offset) noexcept {
  return static_cast<char*>(base) + offset;
}

/// Carves aligned regions out of one workspace: take(bytes) gives the next region's offset.
struct workspace_carver {
  std::size_t used = 0;
  std::size_t take(std::size_t n) noexcept {
    std::size_t const offset = used;
    used = device_detail::align_up(used + n);
    return offset;
  }
};

/// An attribute of the current device, or 0 when it cannot be read (the error is cleared).
inline int current_device_attribute(cudaDeviceAttr attribute) noexcept {
  int dev = 0, value = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return value;
}

/// The current device's SMs when the automatic schedule needs them (it tiles a few long pairs
/// across the SMs), else 0 (also when the query fails: no tiling).
inline int automatic_multiprocessors(device_backend const& exec) noexcept {
  if (exec.schedule != device_schedule::automatic) return 0;
  return current_device_attribute(cudaDevAttrMultiProcessorCount);
}

/// The dynamic shared memory of a tiled kernel with a distance tile after its ring.
template <class T>
constexpr std::size_t distance_tile_bytes(std::size_t ring_bytes) noexcept {
  return ring_bytes + static_cast<std::size_t>(device_detail::distance_tile_values()) * sizeof(T);
}

/// Whether the device's opt-in shared memory per block holds `bytes` (not when unknown).
inline bool fits_shared_optin(std::size_t bytes) noexcept {
  return bytes <= static_cast<std::size_t>(current_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
}

/// Whether the tiled programs of a call can use distance tiles: the cost model and channels
/// ask for them and the device holds a ring of `ring_rows` tile rows (3 for values, 7 for the
/// training backward) and the tile. The automatic schedule then tiles the call
/// (device_detail::tiles_automatically).
template <class T, class Cost>
bool distance_tiles_available(device_backend const& exec, index_t channels, index_t ring_rows) noexcept {
  using namespace device_detail;
  return exec.schedule == device_schedule::automatic && uses_distance_tiles<Cost>(channels) &&
         fits_shared_optin(distance_tile_bytes<T>(static_cast<std::size_t>(ring_rows * tile_size) * sizeof(T)));
}

/// Whether a tiled kernel's launches use distance tiles: the cost model and channels ask for
/// them and the device's opt-in shared memory holds the ring and the tile, and if so the
/// dynamic shared memory per CTA (`bytes`, raised as the kernel's limit). Else bytes = ring.
template <class T, class Cost, class Kernel>
bool enable_distance_tiles(Kernel kernel, index_t channels, std::size_t ring_bytes,
                           std::size_t& bytes) noexcept {
  using namespace device_detail;
  bytes = ring_bytes;
  if (!uses_distance_tiles<Cost>(channels)) return false;
  std::size_t const want = distance_tile_bytes<T>(ring_bytes);
  if (!fits_shared_optin(want) ||
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(want)) != cudaSuccess) {
    (void)cudaGetLastError();  // the per-cell distance then: same results
    return false;
  }
  bytes = want;
  return true;
}

/// Independent channels (measure::independent_channels with d > 1): the sum over channels of
/// univariate problems, as on the host. X and Y are copied channel-major into the workspace
/// (channel c of every series contiguous: a one-channel batch with X's and Y's lengths), `inner`
/// runs the univariate launch for each channel in turn on one inner workspace (stream-ordered
/// reuse), then the channels' values are summed in channel order into out (`count` values per
/// channel; out null: none asked for) and their gradients copied into gx and gy (null: none).
/// inner(ws, bytes, Xc, Yc, out_c, gx_c, gy_c) is a launch_* call; with ws null it is the size
/// query, given the caller's out, gx, gy (only their nullness matters to it).
/// Workspace: channel-major copies of X and Y (and of GX and GY when asked for), d * count
/// values, and one inner workspace.
template <class T, class Inner>
cudaError_t launch_per_channel(void* ws, std::size_t& bytes, cudaStream_t s, batch_view<T const> X,
                               batch_view<T const> Y, index_t count, T* out, T* gx, T* gy,
                               Inner const& inner) {
  index_t const d = X.channels, xn = X.batch * X.max_length, yn = Y.batch * Y.max_length;
  auto const values_of = [](index_t n) { return static_cast<std::size_t>(n) * sizeof(T); };
  workspace_carver w;
  std::size_t const xo = w.take(values_of(d * xn)), yo = w.take(values_of(d * yn));
  std::size_t const ro = out ? w.take(values_of(d * count)) : 0;
  std::size_t const gxo = gx ? w.take(values_of(d * xn)) : 0, gyo = gy ? w.take(values_of(d * yn)) : 0;
  auto const channel = [&](std::size_t offset, index_t c, index_t per_channel) {
    return ws ? reinterpret_cast<T*>(at(ws, offset)) + c * per_channel : nullptr;
  };
  auto const one_channel = [&](batch_view<T const> b, std::size_t offset, index_t c) {
    return batch_view<T const>{channel(offset, c, b.batch * b.max_length), b.batch, b.max_length, 1,
                               b.lengths};
  };
  std::size_t inner_bytes = 0;
  if (cudaError_t e = inner(nullptr, inner_bytes, one_channel(X, xo, 0), one_channel(Y, yo, 0), out,
                            gx, gy))
    return e;
  std::size_t const io = w.take(inner_bytes);
  if (!ws) {
    bytes = w.used;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, w.used)) return cudaErrorInvalidValue;
  // split, launch per channel, merge; each element-wise step only where it has elements
  auto const elementwise = [&](auto kernel, auto const* src, index_t series, index_t length, auto* dst) {
    index_t const n = series * length * d;
    if (n > 0) RESILIN_LAUNCH(elementwise_blocks(n), 256, 0, s, kernel)(src, series, length, d, dst, n);
    return cudaGetLastError();
  };
  if (cudaError_t e = elementwise(split_channels_kernel<T>, X.data, X.batch, X.max_length, channel(xo, 0, 0)))
    return e;
  if (cudaError_t e = elementwise(split_channels_kernel<T>, Y.data, Y.batch, Y.max_length, channel(yo, 0, 0)))
    return e;
  for (index_t c = 0; c < d; ++c) {
    if (cudaError_t e = inner(at(ws, io), inner_bytes, one_channel(X, xo, c), one_channel(Y, yo, c),
                              out ? channel(ro, c, count) : nullptr, gx ? channel(gxo, c, xn) : nullptr,
                              gy ? channel(gyo, c, yn) : nullptr))
      return e;
  }
  if (out && count > 0) {
    RESILIN_LAUNCH(elementwise_blocks(count), 256, 0, s, sum_channels_kernel<T>)
        (channel(ro, 0, 0), count, d, out);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  if (gx)
    if (cudaError_t e = elementwise(merge_channels_kernel<T>, channel(gxo, 0, 0), X.batch, X.max_length, gx))
      return e;
  if (gy)
    if (cudaError_t e = elementwise(merge_channels_kernel<T>, channel(gyo, 0, 0), Y.batch, Y.max_length, gy))
      return e;
  return cudaSuccess;
}

/// Whether a call runs as launch_per_channel.
template <class Cost, class Smooth, class T>
bool per_channel(measure<Cost, Smooth> const& m, batch_view<T const> X) noexcept {
  return m.independent_channels && X.channels > 1;
}

template <class T, class Cost, class Smooth>
cudaError_t launch_values(void* ws, std::size_t& bytes, device_backend exec,
                          measure<Cost, Smooth> const& m, batch_view<T const> X,
                          batch_view<T const> Y, device_detail::job_layout layout, T* out) {
  using namespace device_detail;
  if (per_channel(m, X))
    return launch_per_channel<T>(ws, bytes, exec.stream, X, Y,
                                 layout == job_layout::paired ? X.batch : X.batch * Y.batch, out,
                                 nullptr, nullptr,
                                 [&](void* w, std::size_t& b, batch_view<T const> Xc,
                                     batch_view<T const> Yc, T* o, T*, T*) {
                                   return launch_values<T>(w, b, exec, m.single_channel(), Xc, Yc,
                                                           layout, o);
                                 });
  int const sms = automatic_multiprocessors(exec);
  value_plan const plan = value_plan::make(layout, X.batch, Y.batch, X.max_length, Y.max_length,
                                           m.divergence, sizeof(T), exec.schedule, sms,
                                           distance_tiles_available<T, Cost>(exec, X.channels, 3),
                                           X.channels);
  if (!ws) {
    bytes = plan.bytes;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, plan.bytes)) return cudaErrorInvalidValue;
  if (plan.jobs == 0) return cudaSuccess;
  device_band const band = make_device_band(m.band);
  T* const results = m.divergence ? reinterpret_cast<T*>(at(ws, plan.results_offset)) : out;
  T* const rings = plan.shared_ring ? nullptr : reinterpret_cast<T*>(at(ws, plan.rings_offset));
  value_args<T, Cost, Smooth> const a{m.cost, m.smooth, band, X, Y, layout, results, plan.stride};
  if (plan.tiled) {  // one launch per tile diagonal; the borders need no initialisation
    tiled_args<T, Cost, Smooth> const ta{a, reinterpret_cast<T*>(at(ws, plan.borders_offset)),
                                         plan.tiles_per_diagonal};
    dim3 const grid(static_cast<unsigned>(plan.tiles_per_diagonal), static_cast<unsigned>(plan.jobs));
    std::size_t shared = 0;
    bool const dist = enable_distance_tiles<T, Cost>(tiled_value_kernel<T, Cost, Smooth>, X.channels,
                                                     plan.ring_bytes, shared);
    for (index_t d = 0; d < plan.tile_diagonals; ++d) {
      RESILIN_LAUNCH(grid, static_cast<unsigned>(plan.threads), shared, exec.stream,
                     tiled_value_kernel<T, Cost, Smooth>)
          (ta, d, dist);
      if (cudaError_t e = cudaGetLastError()) return e;
    }
  } else {
    unsigned const threads = static_cast<unsigned>(plan.threads * plan.mapping.jobs_per_block);
    auto const launch = [&](index_t first, index_t count) {
      unsigned const blocks = static_cast<unsigned>(count);
      if (plan.shuffle)
        RESILIN_LAUNCH(blocks, threads, 0, exec.stream, value_shuffle_kernel<T, Cost, Smooth>)
            (a, plan.jobs, first);
      else if (plan.strip)
        with_univariate(X.channels, [&](auto univariate) {
          RESILIN_LAUNCH(blocks, threads, plan.shared_bytes(), exec.stream,
                         value_strip_kernel<T, Cost, Smooth, decltype(univariate)::value>)
              (a, plan.jobs, first, plan.stage_values);
        });
      else if (plan.mapping.warps)
        RESILIN_LAUNCH(blocks, threads, plan.shared_bytes(), exec.stream,
                       value_warps_kernel<T, Cost, Smooth>)
            (a, rings, plan.jobs, first);
      else
        RESILIN_LAUNCH(blocks, threads, plan.shared_bytes(), exec.stream,
                       value_kernel<T, Cost, Smooth>)
            (a, rings, first);
      return cudaGetLastError();
    };
    if (cudaError_t e = for_each_block_chunk(plan.mapping.blocks(plan.jobs), max_grid_blocks, launch))
      return e;
  }
  if (!m.divergence) return cudaSuccess;
  if (layout == job_layout::paired) {
    RESILIN_LAUNCH(elementwise_blocks(X.batch), 256, 0, exec.stream, divergence_paired_kernel<T>)(
        results, X.batch, out);
  } else {
    RESILIN_LAUNCH(elementwise_blocks(X.batch * Y.batch), 256, 0, exec.stream,
                   divergence_pairwise_kernel<T>)(
        results, X.batch, Y.batch, out);
  }
  return cudaGetLastError();
}

/// The training launch behind values_and_grads (gx, gy non-null) and alignment_matrices (e).
template <class T, class Cost, class Smooth>
cudaError_t launch_train(void* ws, std::size_t& bytes, device_backend exec,
                         measure<Cost, Smooth> const& m, batch_view<T const> X,
                         batch_view<T const> Y, T* out, T* gx, T* gy, T const* upstream, T* e) {
  using namespace device_detail;
  if (per_channel(m, X)) {  // gradients only: the front ends refuse E for independent channels
    if (e) return cudaErrorInvalidValue;
    return launch_per_channel<T>(ws, bytes, exec.stream, X, Y, X.batch, out, gx, gy,
                                 [&](void* w, std::size_t& b, batch_view<T const> Xc,
                                     batch_view<T const> Yc, T* o, T* gxc, T* gyc) {
                                   return launch_train<T>(w, b, exec, m.single_channel(), Xc, Yc, o,
                                                          gxc, gyc, upstream, static_cast<T*>(nullptr));
                                 });
  }
  index_t const B = X.batch, d = X.channels;
  train_plan const plan = train_plan::make(B, X.max_length, Y.max_length, d, m.divergence, false,
                                           sizeof(T), exec.schedule, exec.storage,
                                           automatic_multiprocessors(exec),
                                           distance_tiles_available<T, Cost>(exec, d, 7));
  if (!ws) {
    bytes = plan.bytes;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, plan.bytes)) return cudaErrorInvalidValue;
  if (B == 0) return cudaSuccess;
  cudaStream_t const s = exec.stream;
  std::size_t const xs = static_cast<std::size_t>(B * X.max_length * d),
                    ys = static_cast<std::size_t>(B * Y.max_length * d);
  train_args<T, Cost, Smooth> a{};
  a.band = make_device_band(m.band);
  a.cost = m.cost;
  a.smooth = m.smooth;
  a.X = X;
  a.Y = Y;
  a.results = m.divergence ? reinterpret_cast<T*>(at(ws, plan.results_offset)) : out;
  a.upstream = upstream;
  a.store = reinterpret_cast<T*>(at(ws, plan.store_offset));
  for (int p = 0; p < 3; ++p) {
    a.slot_offset[p] = plan.slot_offset[p];
    a.slot_size[p] = plan.slot_size[p];
  }
  a.stride = plan.stride;
  a.checkpoint = plan.checkpoint;
  if (gx) {
    if (cudaError_t err = cudaMemsetAsync(gx, 0, xs * sizeof(T), s)) return err;
    if (cudaError_t err = cudaMemsetAsync(gy, 0, ys * sizeof(T), s)) return err;
    a.gx0 = gx;
    a.gy0 = gy;
    if (m.divergence) {
      T* const self = reinterpret_cast<T*>(at(ws, plan.selfgrad_offset));
      if (cudaError_t err = cudaMemsetAsync(self, 0, 2 * (xs + ys) * sizeof(T), s)) return err;
      a.gx1 = self;
      a.gx2 = self + xs;
      a.gy1 = self + 2 * xs;
      a.gy2 = self + 2 * xs + ys;
    }
  }
  if (e) {
    std::size_t const es = static_cast<std::size_t>(B * X.max_length * Y.max_length);
    if (cudaError_t err = cudaMemsetAsync(e, 0, es * sizeof(T), s)) return err;
    a.e = e;
  }
  if (plan.tiled) {  // forward, then backward, one launch per tile diagonal (two: wide stencils)
    dim3 const grid(static_cast<unsigned>(plan.tiles_per_diagonal), static_cast<unsigned>(plan.jobs));
    unsigned const threads = static_cast<unsigned>(plan.threads);
    std::size_t const forward_ring = static_cast<std::size_t>(3 * tile_size) * sizeof(T);
    std::size_t forward_shared = 0, backward_shared = 0;
    bool dist = enable_distance_tiles<T, Cost>(tiled_train_forward_kernel<T, Cost, Smooth>, d,
                                               forward_ring, forward_shared);
    dist = dist && enable_distance_tiles<T, Cost>(tiled_train_backward_kernel<T, Cost, Smooth>, d,
                                                  plan.ring_bytes, backward_shared);
    if (!dist) {  // both sweeps alike (either way, the same bits)
      forward_shared = forward_ring;
      backward_shared = plan.ring_bytes;
    }
    for (index_t t = 0; t < plan.tile_diagonals; ++t) {
      RESILIN_LAUNCH(grid, threads, forward_shared, s, tiled_train_forward_kernel<T, Cost, Smooth>)
          (a, t, dist);
      if (cudaError_t err = cudaGetLastError()) return err;
    }
    int const launches = tiled_backward_launches<Cost>(gx != nullptr);
    if (gx || e) {
      for (index_t t = plan.tile_diagonals - 1; t >= 0; --t) {
        for (int l = 0; l < launches; ++l) {
          RESILIN_LAUNCH(grid, threads, backward_shared, s,
                         tiled_train_backward_kernel<T, Cost, Smooth>)
              (a, t, launches > 1 ? l : -1, dist);
          if (cudaError_t err = cudaGetLastError()) return err;
        }
      }
    }
  } else {
    T* const rings = plan.shared_ring ? nullptr : reinterpret_cast<T*>(at(ws, plan.rings_offset));
    unsigned const threads = static_cast<unsigned>(plan.threads * plan.mapping.jobs_per_block);
    auto const launch = [&](index_t first, index_t count) {
      unsigned const blocks = static_cast<unsigned>(count);
      if (plan.shuffle)
        RESILIN_LAUNCH(blocks, threads, 0, s,
                       train_shuffle_kernel<T, Cost, Smooth>)(a, plan.jobs, first);
      else if (plan.mapping.warps)
        RESILIN_LAUNCH(blocks, threads, plan.shared_bytes(), s, train_warps_kernel<T, Cost, Smooth>)
            (a, rings, plan.jobs, first);
      else
        RESILIN_LAUNCH(blocks, threads, plan.shared_bytes(), s, train_kernel<T, Cost, Smooth>)
            (a, rings, first);
      return cudaGetLastError();
    };
    if (cudaError_t err = for_each_block_chunk(plan.mapping.blocks(plan.jobs), max_grid_blocks, launch))
      return err;
  }
  if (!m.divergence) return cudaSuccess;
  RESILIN_LAUNCH(elementwise_blocks(B), 256, 0, s, divergence_paired_kernel<T>)(a.results, B, out);
  if (cudaError_t err = cudaGetLastError()) return err;
  if (gx) {
    RESILIN_LAUNCH(elementwise_blocks(static_cast<index_t>(xs)), 256, 0, s, add_two_kernel<T>)(
        gx, a.gx1, a.gx2, static_cast<index_t>(xs));
    RESILIN_LAUNCH(elementwise_blocks(static_cast<index_t>(ys)), 256, 0, s, add_two_kernel<T>)(
        gy, a.gy1, a.gy2, static_cast<index_t>(ys));
  }
  return cudaGetLastError();
}

/// pairwise_grads: the |X| |Y| pairs are expanded into a paired batch (copies of X and Y, job
/// k = a |Y| + b), trained as values_and_grads with upstream = weights, and each GX[a] is the
/// sum of its |Y| jobs' gradients in the order of b. Workspace: the expanded batches and
/// lengths, both sides' job gradients, the values when out is null, then launch_train's.
template <class T, class Cost, class Smooth>
cudaError_t launch_pairwise_grads(void* ws, std::size_t& bytes, device_backend exec,
                                  measure<Cost, Smooth> const& m, batch_view<T const> X,
                                  batch_view<T const> Y, T* out, T* gx, T const* weights) {
  using namespace device_detail;
  if (per_channel(m, X))
    return launch_per_channel<T>(ws, bytes, exec.stream, X, Y, X.batch * Y.batch, out, gx,
                                 static_cast<T*>(nullptr),
                                 [&](void* w, std::size_t& b, batch_view<T const> Xc,
                                     batch_view<T const> Yc, T* o, T* gxc, T*) {
                                   return launch_pairwise_grads<T>(w, b, exec, m.single_channel(), Xc,
                                                                   Yc, o, gxc, weights);
                                 });
  index_t const nx = X.batch, ny = Y.batch, jobs = nx * ny, d = X.channels;
  index_t const xrow = X.max_length * d, yrow = Y.max_length * d;
  workspace_carver w;
  auto const values_of = [](index_t n) { return static_cast<std::size_t>(n) * sizeof(T); };
  std::size_t const xe = w.take(values_of(jobs * xrow)), ye = w.take(values_of(jobs * yrow));
  std::size_t const xl = X.lengths ? w.take(static_cast<std::size_t>(jobs) * sizeof(index_t)) : 0;
  std::size_t const yl = Y.lengths ? w.take(static_cast<std::size_t>(jobs) * sizeof(index_t)) : 0;
  std::size_t const gxe = w.take(values_of(jobs * xrow)), gye = w.take(values_of(jobs * yrow));
  std::size_t const ve = out ? 0 : w.take(values_of(jobs));
  batch_view<T const> const Xe{ws ? reinterpret_cast<T const*>(at(ws, xe)) : nullptr, jobs, X.max_length, d,
                               ws && X.lengths ? reinterpret_cast<index_t const*>(at(ws, xl)) : nullptr};
  batch_view<T const> const Ye{ws ? reinterpret_cast<T const*>(at(ws, ye)) : nullptr, jobs, Y.max_length, d,
                               ws && Y.lengths ? reinterpret_cast<index_t const*>(at(ws, yl)) : nullptr};
  std::size_t train_bytes = 0;
  if (cudaError_t e = launch_train<T>(nullptr, train_bytes, exec, m, Xe, Ye, out, gx, gx, weights,
                                      static_cast<T*>(nullptr)))
    return e;
  std::size_t const tr = w.take(train_bytes);
  if (!ws) {
    bytes = w.used;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, w.used)) return cudaErrorInvalidValue;
  cudaStream_t const s = exec.stream;
  if (nx == 0) return cudaSuccess;
  if (ny == 0)  // no pair: every gradient is an empty sum
    return cudaMemsetAsync(gx, 0, values_of(nx * xrow), s);
  auto expand = [&](auto const* src, index_t row, bool outer, auto* dst) {
    index_t const count = jobs * row;
    using value = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
    RESILIN_LAUNCH(elementwise_blocks(count), 256, 0, s, expand_pairwise_kernel<value>)
        (src, row, ny, outer, dst, count);
    return cudaGetLastError();
  };
  if (cudaError_t e = expand(X.data, xrow, true, reinterpret_cast<T*>(at(ws, xe)))) return e;
  if (cudaError_t e = expand(Y.data, yrow, false, reinterpret_cast<T*>(at(ws, ye)))) return e;
  if (X.lengths)
    if (cudaError_t e = expand(X.lengths, 1, true, reinterpret_cast<index_t*>(at(ws, xl)))) return e;
  if (Y.lengths)
    if (cudaError_t e = expand(Y.lengths, 1, false, reinterpret_cast<index_t*>(at(ws, yl)))) return e;
  T* const gx_jobs = reinterpret_cast<T*>(at(ws, gxe));
  if (cudaError_t e = launch_train<T>(at(ws, tr), train_bytes, exec, m, Xe, Ye,
                                      out ? out : reinterpret_cast<T*>(at(ws, ve)), gx_jobs,
                                      reinterpret_cast<T*>(at(ws, gye)), weights, static_cast<T*>(nullptr)))
    return e;
  index_t const count = nx * xrow;
  RESILIN_LAUNCH(elementwise_blocks(count), 256, 0, s, sum_pairwise_grads_kernel<T>)
      (gx_jobs, xrow, ny, gx, count);
  return cudaGetLastError();
}

/// The workspace of one convenience call: allocated on the stream, freed on the stream.
class workspace {
 public:
  workspace(device_backend const& exec, std::size_t bytes) : exec_(exec), bytes_(bytes) {
    if (bytes == 0) return;
    RESILIN_CUDA_TRY(cuda_memory::allocate(exec, &ptr_, bytes));
  }
  workspace(workspace const&) = delete;
  workspace& operator=(workspace const&) = delete;
  ~workspace() {
    if (ptr_) cuda_memory::release(exec_, ptr_, bytes_);  // stream-ordered after the kernels
  }
  void* get() const noexcept { return ptr_; }
  std::size_t& bytes() noexcept { return bytes_; }

 private:
  device_backend exec_;
  std::size_t bytes_;
  void* ptr_ = nullptr;
};

inline void require_ok(std::string const& e) {
  if (!e.empty()) RESILIN_THROW(::resilin::invalid_argument(e));
}

}  // namespace cuda_detail

// --- expert layer: caller's workspace, no allocation, no exceptions ------------------------------

namespace expert {

/// out[b] = M(X[b], Y[b]) on exec.stream; out: (batch) device values.
/// With workspace == nullptr, only sets workspace_bytes.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
cudaError_t values(void* workspace, std::size_t& workspace_bytes, device_backend exec,
                   measure<Cost, Smooth> const& m, XB xs, YB ys, value_of<XB>* out) noexcept {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  if (workspace) {
    std::string e = cuda_detail::check_common<T>(m, X, Y);
    if (e.empty() && X.batch != Y.batch) e = "X and Y must hold as many series";
    if (e.empty() && X.batch > 0) e = cuda_detail::check_output(out, "out");
    if (e.empty()) e = cuda_detail::outputs_overlap_error<T>(X, Y, out, X.batch);
    if (!e.empty()) return cudaErrorInvalidValue;
    detail::discard_pending_error();
  }
  return cuda_detail::launch_values<T>(workspace, workspace_bytes, exec, m, X, Y,
                                       device_detail::job_layout::paired, out);
}

/// out(a, b) = M(X[a], Y[b]); out: (|X|, |Y|) row-major device values.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
cudaError_t pairwise(void* workspace, std::size_t& workspace_bytes, device_backend exec,
                     measure<Cost, Smooth> const& m, XB xs, YB ys, value_of<XB>* out) noexcept {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  if (workspace) {
    std::string e = cuda_detail::check_common<T>(m, X, Y);
    if (e.empty() && X.batch * Y.batch > 0) e = cuda_detail::check_output(out, "out");
    if (e.empty()) e = cuda_detail::outputs_overlap_error<T>(X, Y, out, X.batch * Y.batch);
    if (!e.empty()) return cudaErrorInvalidValue;
    detail::discard_pending_error();
  }
  return cuda_detail::launch_values<T>(workspace, workspace_bytes, exec, m, X, Y,
                                       device_detail::job_layout::pairwise, out);
}

/// values() plus GX[b] = upstream[b] dM/dX[b], GY likewise (shapes of X and Y, padding set to
/// 0); upstream: (batch) device values or nullptr for ones.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
cudaError_t values_and_grads(void* workspace, std::size_t& workspace_bytes, device_backend exec,
                             measure<Cost, Smooth> const& m, XB xs, YB ys, value_of<XB>* out,
                             batch_view<value_of<XB>> gx, batch_view<value_of<XB>> gy,
                             value_of<XB> const* upstream = nullptr) noexcept {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  if (workspace) {
    std::string e = cuda_detail::check_common<T>(m, X, Y);
    if (e.empty() && X.batch != Y.batch) e = "X and Y must hold as many series";
    if (e.empty() && X.batch > 0) e = cuda_detail::check_output(out, "out");
    if (e.empty() && X.batch > 0) e = cuda_detail::check_output(gx.data, "GX");
    if (e.empty() && X.batch > 0) e = cuda_detail::check_output(gy.data, "GY");
    if (e.empty() && X.batch > 0 && upstream) e = cuda_detail::check_output(upstream, "upstream");
    if (e.empty() && (gx.batch != X.batch || gx.max_length != X.max_length ||
                      gx.channels != X.channels || gy.batch != Y.batch ||
                      gy.max_length != Y.max_length || gy.channels != Y.channels))
      e = "GX and GY must have the shapes of X and Y";
    if (e.empty()) e = cuda_detail::gradients_overlap_error<T>(X, Y, out, gx, gy, upstream);
    if (!e.empty()) return cudaErrorInvalidValue;
    detail::discard_pending_error();
  }
  return cuda_detail::launch_train<T>(workspace, workspace_bytes, exec, m, X, Y, out, gx.data,
                                      gy.data, upstream, static_cast<T*>(nullptr));
}

/// GX[a] = sum_b weights(a, b) dM(X[a], Y[b]) / dX[a] (GX: the shape of X, padding set to 0),
/// and out(a, b) = M(X[a], Y[b]) when out is not null; weights: (|X|, |Y|) row-major device
/// values or nullptr for ones. The sums over b run in a fixed order: deterministic.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
cudaError_t pairwise_grads(void* workspace, std::size_t& workspace_bytes, device_backend exec,
                           measure<Cost, Smooth> const& m, XB xs, YB ys, batch_view<value_of<XB>> gx,
                           value_of<XB>* out = nullptr, value_of<XB> const* weights = nullptr) noexcept {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  if (workspace) {
    std::string e = cuda_detail::check_common<T>(m, X, Y);
    if (e.empty() && X.batch > 0) e = cuda_detail::check_output(gx.data, "GX");
    if (e.empty() && X.batch * Y.batch > 0 && out) e = cuda_detail::check_output(out, "out");
    if (e.empty() && X.batch * Y.batch > 0 && weights) e = cuda_detail::check_output(weights, "weights");
    if (e.empty() && (gx.batch != X.batch || gx.max_length != X.max_length || gx.channels != X.channels))
      e = "GX must have the shape of X";
    if (e.empty())
      e = detail::pairwise_grads_overlap_error(
          gx, X, Y, detail::region(static_cast<T const*>(out), out ? X.batch * Y.batch : 0, "out"),
          detail::region(weights, weights ? X.batch * Y.batch : 0, "weights"));
    if (!e.empty()) return cudaErrorInvalidValue;
    detail::discard_pending_error();
  }
  return cuda_detail::launch_pairwise_grads<T>(workspace, workspace_bytes, exec, m, X, Y, out, gx.data,
                                               weights);
}

/// values() plus the soft alignment matrices E[b](i, j) = dS(X[b], Y[b]) / dR(i, j), written to
/// e: (batch, X.max_length, Y.max_length) device values, zero outside each pair's grid.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
cudaError_t alignment_matrices(void* workspace, std::size_t& workspace_bytes, device_backend exec,
                               measure<Cost, Smooth> const& m, XB xs, YB ys, value_of<XB>* out,
                               value_of<XB>* e) noexcept {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  if (m.divergence || cuda_detail::per_channel(m, X)) return cudaErrorInvalidValue;
  if (workspace) {
    std::string err = cuda_detail::check_common<T>(m, X, Y);
    if (err.empty() && X.batch != Y.batch) err = "X and Y must hold as many series";
    if (err.empty() && X.batch > 0) err = cuda_detail::check_output(out, "out");
    if (err.empty() && X.batch > 0) err = cuda_detail::check_output(e, "E");
    if (err.empty()) err = cuda_detail::outputs_overlap_error<T>(X, Y, out, X.batch, e);
    if (!err.empty()) return cudaErrorInvalidValue;
    detail::discard_pending_error();
  }
  return cuda_detail::launch_train<T>(workspace, workspace_bytes, exec, m, X, Y, out,
                                      static_cast<T*>(nullptr), static_cast<T*>(nullptr),
                                      static_cast<T const*>(nullptr), e);
}

}  // namespace expert

// --- convenience layer: the host batch API's names, on the device ------------------------------

/// out[b] = M(X[b], Y[b]) for every pair of a paired batch (ragged lengths allowed); X, Y, their
/// lengths and out in device memory. Asynchronous on exec.stream.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void values(device_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
            std::span<value_of<XB>> out) {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  cuda_detail::require_ok(cuda_detail::check_common<T>(m, X, Y));
  detail::require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch, " and ",
                  Y.batch);
  detail::require(static_cast<index_t>(out.size()) == X.batch, "out has ", out.size(),
                  " entries, expected batch = ", X.batch);
  if (X.batch == 0) return;
  cuda_detail::require_ok(cuda_detail::check_output(out.data(), "out"));
  cuda_detail::require_ok(cuda_detail::outputs_overlap_error<T>(X, Y, out.data(), X.batch));
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(expert::values(nullptr, bytes, exec, m, X, Y, out.data()));
  cuda_detail::workspace ws(exec, bytes);
  RESILIN_CUDA_TRY(expert::values(ws.get(), ws.bytes(), exec, m, X, Y, out.data()));
}

/// The pairwise (cdist) form: out(a, b) = M(X[a], Y[b]); out is (|X|, |Y|) in device memory.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise(device_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
              matrix_view<value_of<XB>> out) {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  cuda_detail::require_ok(cuda_detail::check_common<T>(m, X, Y));
  detail::require(out.rows == X.batch && out.cols == Y.batch, "out must be (", X.batch, ", ",
                  Y.batch, "), got (", out.rows, ", ", out.cols, ")");
  if (X.batch * Y.batch == 0) return;
  cuda_detail::require_ok(cuda_detail::check_output(out.data, "out"));
  cuda_detail::require_ok(cuda_detail::outputs_overlap_error<T>(X, Y, out.data, X.batch * Y.batch));
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(expert::pairwise(nullptr, bytes, exec, m, X, Y, out.data));
  cuda_detail::workspace ws(exec, bytes);
  RESILIN_CUDA_TRY(expert::pairwise(ws.get(), ws.bytes(), exec, m, X, Y, out.data));
}

/// values() plus the gradients: GX[b] = upstream[b] dM(X[b], Y[b]) / dX[b] (GY likewise);
/// padding samples get exactly 0; upstream (device, batch values) defaults to ones.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void values_and_grads(device_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                      std::span<value_of<XB>> out, batch_view<value_of<XB>> gxs,
                      batch_view<value_of<XB>> gys,
                      std::span<value_of<XB> const> upstream = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  cuda_detail::require_ok(cuda_detail::check_common<T>(m, X, Y));
  detail::require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch, " and ",
                  Y.batch);
  detail::require(static_cast<index_t>(out.size()) == X.batch, "out has ", out.size(),
                  " entries, expected batch = ", X.batch);
  detail::require(upstream.empty() || static_cast<index_t>(upstream.size()) == X.batch,
                  "upstream has ", upstream.size(), " entries, expected batch = ", X.batch);
  detail::check_same_shape(gxs, X, "GX", "X");
  detail::check_same_shape(gys, Y, "GY", "Y");
  if (X.batch == 0) return;
  cuda_detail::require_ok(cuda_detail::check_output(out.data(), "out"));
  cuda_detail::require_ok(cuda_detail::check_output(gxs.data, "GX"));
  cuda_detail::require_ok(cuda_detail::check_output(gys.data, "GY"));
  if (!upstream.empty()) cuda_detail::require_ok(cuda_detail::check_output(upstream.data(), "upstream"));
  T const* const up = upstream.empty() ? nullptr : upstream.data();
  cuda_detail::require_ok(cuda_detail::gradients_overlap_error<T>(X, Y, out.data(), gxs, gys, up));
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(expert::values_and_grads(nullptr, bytes, exec, m, X, Y, out.data(), gxs, gys, up));
  cuda_detail::workspace ws(exec, bytes);
  RESILIN_CUDA_TRY(
      expert::values_and_grads(ws.get(), ws.bytes(), exec, m, X, Y, out.data(), gxs, gys, up));
}

/// The host's pairwise_grads on the device: GX[a] = sum_b weights(a, b) dM(X[a], Y[b]) / dX[a]
/// (weights default to ones; padding samples get 0) and, when out is given, out(a, b) =
/// M(X[a], Y[b]). Everything in device memory; the workspace holds copies of X and Y for all
/// |X| |Y| pairs and their gradients.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void pairwise_grads(device_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                    batch_view<value_of<XB>> gxs, matrix_view<value_of<XB>> out = {},
                    matrix_view<value_of<XB> const> weights = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  cuda_detail::require_ok(cuda_detail::check_common<T>(m, X, Y));
  detail::check_pairwise_grads_shapes(gxs, X, Y, out, weights);
  if (X.batch == 0) return;
  cuda_detail::require_ok(cuda_detail::check_output(gxs.data, "GX"));
  if (out.data) cuda_detail::require_ok(cuda_detail::check_output(out.data, "out"));
  if (weights.data) cuda_detail::require_ok(cuda_detail::check_output(weights.data, "weights"));
  cuda_detail::require_ok(detail::pairwise_grads_overlap_error(
      gxs, X, Y, detail::region(out, "out"), detail::region(weights, "weights")));
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(expert::pairwise_grads(nullptr, bytes, exec, m, X, Y, gxs, out.data, weights.data));
  cuda_detail::workspace ws(exec, bytes);
  RESILIN_CUDA_TRY(expert::pairwise_grads(ws.get(), ws.bytes(), exec, m, X, Y, gxs, out.data, weights.data));
}

/// values() plus the soft alignment matrix of every pair: e is (batch, X.max_length,
/// Y.max_length) in device memory, E[b](i, j) = dS/dR(i, j), zero outside the pair's grid.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void alignment_matrices(device_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                        std::span<value_of<XB>> out, value_of<XB>* e) {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  detail::require(!m.divergence, "alignment_matrices: a divergence has no single alignment matrix");
  detail::require(!cuda_detail::per_channel(m, X), "alignment_matrices: independent channels have "
                  "one alignment each; pass one channel, got ", X.channels);
  cuda_detail::require_ok(cuda_detail::check_common<T>(m, X, Y));
  detail::require(X.batch == Y.batch, "X and Y must hold as many series, got ", X.batch, " and ",
                  Y.batch);
  detail::require(static_cast<index_t>(out.size()) == X.batch, "out has ", out.size(),
                  " entries, expected batch = ", X.batch);
  if (X.batch == 0) return;
  cuda_detail::require_ok(cuda_detail::check_output(out.data(), "out"));
  cuda_detail::require_ok(cuda_detail::check_output(e, "E"));
  cuda_detail::require_ok(cuda_detail::outputs_overlap_error<T>(X, Y, out.data(), X.batch, e));
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(expert::alignment_matrices(nullptr, bytes, exec, m, X, Y, out.data(), e));
  cuda_detail::workspace ws(exec, bytes);
  RESILIN_CUDA_TRY(expert::alignment_matrices(ws.get(), ws.bytes(), exec, m, X, Y, out.data(), e));
}

}  // namespace resilin

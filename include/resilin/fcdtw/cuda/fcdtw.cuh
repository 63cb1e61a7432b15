#pragma once
// FastCDTW on the GPU (spec/cdtw.md B.4.2): the closed-form objective and its gradients over a
// batch of (x, y, phi) pairs, and the Monte Carlo estimator for smooth warps (B.3.7).
//
// Two layouts for the closed form, both deterministic (no atomics, fixed-order sums):
//   thread_per_pair  one thread runs the sequential sweep of objective.hpp for its pair and
//                    writes its own slice of every gradient (1-NN cdist: up to 10^6 pairs);
//   block_per_pair   one block per pair; thread i takes phi segments i, i + 256, ... and a
//                    fixed-order tree in shared memory sums the value. Warp adjoints are
//                    segment-local (two slots per segment, combined after a barrier); dF/dx and
//                    dF/dy are *gathered* per knot (each knot walks the few segments that reach
//                    it, in increasing t), which is the host's scatter order, without atomics.
//   automatic        thread_per_pair for >= 4096 pairs or warps with < 64 segments.
// Series use the uniform grids linspace(0, 1, length(b)) (ragged batches allowed); warps have
// `knots` values per pair on linspace(0, 1, knots). Results agree with the host closed form to
// rounding; run to run they are bitwise identical on one GPU and build.
//
// FastCDTW distances by the fit (fit_distances), in the same two layouts: one thread per pair
// runs the host's Adam fit (solver.hpp, detail::adam_fit) from the identity, or from given
// logits that then receive the final ones (warm starts), in its own slice of the workspace; or one block per pair runs it with each step's sums split over the block
// (block_fit.hpp: thread i owns a contiguous share of the logits and the segments i, i + 256,
// ...; the leader adds the partial sums in thread order). Then F at the final warp and, on
// request, its gradients with respect to both series at that warp (per pair, or gathered per
// knot as above). automatic: thread_per_pair for >= 4096 pairs or fits of < 64 segments.
//
// Layers (as resilin/backend/cuda/alignment.cuh):
//   resilin::fcdtw::expert::values(ws, bytes, exec, batch, out[, layout]) etc. allocate and
//     throw nothing: ws == nullptr only writes the workspace size; bad input (a workspace
//     smaller than asked or not 16-byte aligned too) returns cudaErrorInvalidValue; otherwise
//     the work is enqueued on exec.stream.
//   resilin::fcdtw::values(resilin::device.on(stream), batch, out[, layout]) etc. allocate the
//     workspace stream-ordered and throw resilin::invalid_argument / resilin::cuda_error.
// All pointers are device accessible. What the host cannot check without a copy is a
// precondition: finite values, per-pair lengths in [2, max_length], monotone warps in [0, 1].
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cstddef>
#include <string>
#include <type_traits>
#include <cuda_runtime_api.h>
#include <resilin/backend/cuda/backend.cuh>
#include <resilin/backend/cuda/error.cuh>
#include <resilin/backend/cuda/stream_memory.cuh>
#include <resilin/core/error.hpp>
#include <resilin/core/validate.hpp>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/monte_carlo.hpp>
#include <resilin/backend/cuda/cta_exec.cuh>
#include <resilin/fcdtw/block_fit.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/segments.hpp>
#include <resilin/fcdtw/solver.hpp>

namespace resilin::fcdtw {

/// How pairs map onto the GPU (see the file comment).
enum class pair_layout { automatic, thread_per_pair, block_per_pair };

/// A batch of problems in device memory: pair b warps x[b] against the axis of y[b] with the
/// PL warp warps[b * knots .. (b + 1) * knots) on linspace(0, 1, knots).
template <class T>
struct pair_batch {
  batch_view<T const> x, y;    // (pairs, max_length, channels) each, same pairs and channels
  T const* warps = nullptr;    // (pairs, knots)
  index_t knots = 0;           // K + 1 >= 2
  path_norm norm = path_norm::l2;
};

/// Gradient outputs (overwritten; nullptr skips one): dv (pairs, knots), dx and dy shaped like
/// x and y (padding rows of ragged pairs are set to 0).
template <class T>
struct pair_grads {
  T* dv = nullptr;
  T* dx = nullptr;
  T* dy = nullptr;
};

namespace fcdtw_cuda_detail {

inline constexpr unsigned block_threads = 256;

template <class T>
RESILIN_HD interpolant<T> series_of(batch_view<T const> const& b, index_t p) noexcept {
  return uniform_interpolant(b[p]);
}
template <class T>
RESILIN_HD warp_view<T> warp_of(pair_batch<T> const& b, index_t p) noexcept {
  return uniform_warp(b.warps + p * b.knots, b.knots - 1);
}

// ---------------------------------------------------------------- thread programs
// What one thread does, as RESILIN_HD functions of (pair, thread) so the kernels below are thin
// launch wrappers and the programs can be run and checked on the CPU.

/// Points og's dx / dy at pair p's slices of dx / dy (shaped like x and y; null: skipped),
/// zeroed first, padding rows included.
template <class T>
RESILIN_HD void series_grads_of(batch_view<T const> const& x, batch_view<T const> const& y,
                                index_t p, T* dx, T* dy, objective_grads<T>& og) noexcept {
  index_t const d = x.channels, xs = x.max_length * d, ys = y.max_length * d;
  if (dx) {
    for (index_t k = 0; k < xs; ++k) dx[p * xs + k] = T(0);
    og.dx = series_view<T>{dx + p * xs, x.length(p), d};
  }
  if (dy) {
    for (index_t k = 0; k < ys; ++k) dy[p * ys + k] = T(0);
    og.dy = series_view<T>{dy + p * ys, y.length(p), d};
  }
}

/// thread_per_pair, pair p: F, and the gradients when g has outputs (its slices zeroed first).
template <class T>
RESILIN_HD T pair_program(pair_batch<T> const& b, index_t p, pair_grads<T> const& g) noexcept {
  if (!g.dv && !g.dx && !g.dy) return value(series_of(b.x, p), series_of(b.y, p), warp_of(b, p), b.norm);
  objective_grads<T> og{};
  if (g.dv) {
    og.dv = g.dv + p * b.knots;
    for (index_t k = 0; k < b.knots; ++k) og.dv[k] = T(0);
  }
  series_grads_of(b.x, b.y, p, g.dx, g.dy, og);
  return value_and_grad(series_of(b.x, p), series_of(b.y, p), warp_of(b, p), og, b.norm);
}

/// block_per_pair, pair p, thread tid: the partial F of segments tid, tid + threads, ...; with
/// slots (pairs, 2K) also their adjoints (detail::strided_segments).
template <class T>
RESILIN_HD T segment_program(pair_batch<T> const& b, index_t p, index_t tid, index_t threads,
                             T* slots) noexcept {
  warp_view<T> const phi = warp_of(b, p);
  return detail::strided_segments(series_of(b.x, p), series_of(b.y, p), phi, b.norm, tid, threads,
                                  slots ? slots + p * 2 * phi.segments() : nullptr);
}

/// dF/dx (on_x) or dF/dy of pair p at flat index item = knot * channels + c of its
/// (max_length, channels) slice; 0 on padding rows.
template <class T>
RESILIN_HD T gather_program(pair_batch<T> const& b, index_t p, index_t item, bool on_x) noexcept {
  return detail::gather_knot(series_of(b.x, p), series_of(b.y, p), warp_of(b, p), b.norm, item, on_x);
}

/// The per-pair stride of the fit's scratch: the workspace of the most segments any pair of Y
/// can have, with the segment slots of the block layout.
inline index_t fit_stride(fit_options const& o, index_t y_max_length, bool thread_layout) noexcept {
  index_t const K = detail::segments_for(o, y_max_length);
  return thread_layout ? fit_workspace_size(K) : detail::block_fit_size(K);
}

/// NaN in every entry of a series gradient (a diverged fit's).
template <class T>
RESILIN_HD void fill_nan(series_view<T> const& g) noexcept {
  for (index_t k = 0; k < g.length * g.channels; ++k) g.data[k] = math::infinity<T>() - math::infinity<T>();
}

/// fit_distances, pair p: the host distances()' fit (Adam from the identity, detail::adam_fit;
/// with logits, from the first K entries of row p of logits (rows of logit_stride), which then
/// receive the final logits, as the host fit() from initial_logits) in
/// scratch[p * stride, (p + 1) * stride), F at the final warp; with gx / gy (shaped like X
/// and Y, the pair's slices overwritten) its gradients with respect to the series at that warp,
/// as distances_and_grads(). NaN where the logits overflowed (the host API refuses those),
/// and NaN in that pair's gradient rows.
template <class T>
RESILIN_HD T fit_program(batch_view<T const> const& X, batch_view<T const> const& Y,
                         fit_options const& o, index_t p, T* scratch, index_t stride, T* gx,
                         T* gy, T* logits, index_t logit_stride) noexcept {
  interpolant<T> const x = series_of(X, p), y = series_of(Y, p);
  index_t const K = detail::segments_for(o, Y.length(p));
  fit_workspace<T> const ws = fit_workspace_in(scratch + p * stride, K);
  T value = T(0);
  T* const row = logits ? logits + p * logit_stride : nullptr;
  for (index_t i = 0; i < K; ++i) ws.r[i] = row ? row[i] : T(0);  // zeros: the identity
  bool const finite = detail::fit_from_logits(x, y, K, o, ws, value);
  if (row)
    for (index_t i = 0; i < K; ++i) row[i] = ws.r[i];
  if (!gx && !gy) return finite ? value : math::infinity<T>() - math::infinity<T>();
  objective_grads<T> og{};
  series_grads_of(X, Y, p, gx, gy, og);
  if (!finite) {
    fill_nan(og.dx);
    fill_nan(og.dy);
    return math::infinity<T>() - math::infinity<T>();
  }
  value_and_grad(x, y, uniform_warp<T>(ws.v, K), og, o.norm);
  return value;
}

/// The block fit's gather, pair p: dD/dx (on_x) or dD/dy at flat index item of the pair's
/// slice, at the final warp the fit left in its workspace; NaN on the rows of a diverged fit
/// (D = NaN), 0 on padding rows.
template <class T>
RESILIN_HD T fit_gather_program(batch_view<T const> const& X, batch_view<T const> const& Y,
                                fit_options const& o, index_t p, T* scratch,
                                index_t stride, T d, index_t item, bool on_x) noexcept {
  interpolant<T> const x = series_of(X, p), y = series_of(Y, p);
  if (!(d == d))
    return item / X.channels < (on_x ? x.length() : y.length()) ? d : T(0);
  index_t const K = detail::segments_for(o, Y.length(p));
  T const* const v = fit_workspace_in(scratch + p * stride, K).v;  // read only
  return detail::gather_knot(x, y, uniform_warp<T>(v, K), o.norm, item, on_x);
}

/// Monte Carlo chunk c: draws [c * per, (c + 1) * per) with its own scratch and gradient slice
/// (zeroed first; layout x | y | warp); writes sums[2c] = sum g, sums[2c + 1] = the sum of
/// squared deviations from the chunk's mean (mc_sums).
template <class T, class X, class W>
RESILIN_HD void mc_chunk_program(X const& x, interpolant<T> const& y, W const& warp,
                                 mc_options const& opt, index_t per, index_t c, index_t px,
                                 index_t pw, T* sums, T* grad_slices, T* scratch) noexcept {
  index_t const py = y.values.size(), P = px + py + pw;
  mc_gradients<T> g{};
  if (grad_slices) {
    T* const mine = grad_slices + c * P;
    for (index_t k = 0; k < P; ++k) mine[k] = T(0);
    g = mc_gradients<T>{px ? mine : nullptr, mine + px, pw ? mine + px + py : nullptr};
  }
  index_t const first = c * per, last = first + per < opt.samples ? first + per : opt.samples;
  mc_sums<T> const s = mc_accumulate(x, y, warp, opt, first, last,
                                     scratch + c * mc_scratch_size(y.channels()), g);
  sums[2 * c] = s.value;
  sums[2 * c + 1] = s.centred;
}

/// Monte Carlo output k: k = 0 the estimate, k = 1 + e gradient entry e (x | y | warp), each
/// summed over the chunks in chunk order.
template <class T>
RESILIN_HD void mc_reduce_program(index_t k, index_t chunks, index_t per, index_t samples, T const* sums,
                                  T const* grad_slices, index_t px, index_t py, index_t pw,
                                  mc_estimate<T>* out, mc_gradients<T> const& g) noexcept {
  index_t const P = px + py + pw;
  if (k == 0) {  // the chunks merged in chunk order, as the host's mc_run merges them
    mc_sums<T> total{};
    for (index_t c = 0; c < chunks; ++c) {
      index_t const first = c * per, last = first + per < samples ? first + per : samples;
      total = merged(total, mc_sums<T>{sums[2 * c], sums[2 * c + 1], last - first});
    }
    *out = detail::finish(total, samples);
    return;
  }
  index_t const e = k - 1;
  if (!grad_slices || e >= P) return;
  T* const base = e < px ? g.x : (e < px + py ? g.y : g.warp);
  if (!base) return;
  T acc = T(0);
  for (index_t c = 0; c < chunks; ++c) acc += grad_slices[c * P + e];
  base[e < px ? e : (e < px + py ? e - px : e - px - py)] = acc;
}

// ---------------------------------------------------------------- kernels

template <class T>
RESILIN_KERNEL void pair_kernel(pair_batch<T> b, T* out, pair_grads<T> g) {
  index_t const p = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p < b.x.batch) out[p] = pair_program(b, p, g);
}

template <class T>
RESILIN_KERNEL void fit_kernel(batch_view<T const> X, batch_view<T const> Y, fit_options o,
                               T* scratch, index_t stride, T* out, T* gx, T* gy, T* logits,
                               index_t logit_stride) {
  index_t const p = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p < X.batch) out[p] = fit_program(X, Y, o, p, scratch, stride, gx, gy, logits, logit_stride);
}

/// One block per pair: the block fit (block_fit.hpp) in the pair's slice of scratch, from row
/// p of logits when not null (which then receives the final logits).
template <class T>
RESILIN_KERNEL void fit_block_kernel(batch_view<T const> X, batch_view<T const> Y, fit_options o,
                                     T* scratch, index_t stride, T* out, T* logits,
                                     index_t logit_stride) {
  __shared__ T shared[detail::block_scratch_size(block_threads)];
  index_t const p = blockIdx.x;
  index_t const K = detail::segments_for(o, Y.length(p));
  T* const mine = scratch + p * stride;
  fit_workspace<T> const ws = fit_workspace_in(mine, K);
  T* const row = logits ? logits + p * logit_stride : nullptr;
  T const d = detail::block_fit(cuda_detail::cta_exec{}, static_cast<int>(block_threads), series_of(X, p),
                                series_of(Y, p), K, o, ws, mine + fit_workspace_size(K),
                                detail::block_scratch_in(shared, static_cast<int>(block_threads)), row);
  if (threadIdx.x == 0) out[p] = d;
  if (row)  // block_fit ends with a barrier: every thread's final logits are in ws.r
    for (index_t i = threadIdx.x; i < K; i += block_threads) row[i] = ws.r[i];
}

template <class T>
RESILIN_KERNEL void fit_gather_kernel(batch_view<T const> X, batch_view<T const> Y, fit_options o,
                                      T* scratch, index_t stride, T const* out, T* grad,
                                      bool on_x) {
  index_t const p = blockIdx.x;
  index_t const items = (on_x ? X.max_length : Y.max_length) * X.channels;
  T const d = out[p];
  for (index_t item = threadIdx.x; item < items; item += block_threads)
    grad[p * items + item] = fit_gather_program(X, Y, o, p, scratch, stride, d, item, on_x);
}

/// One block per pair: partial values, a fixed-order shared-memory tree, then dv from slots.
template <class T>
RESILIN_KERNEL void segment_kernel(pair_batch<T> b, T* out, T* slots, T* dv) {
  __shared__ T partial[block_threads];
  index_t const p = blockIdx.x;
  unsigned const tid = threadIdx.x;
  partial[tid] = segment_program(b, p, tid, block_threads, slots);
  __syncthreads();  // also publishes this block's slots to the whole block
  for (unsigned s = block_threads / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[p] = partial[0];
  if (!slots) return;
  index_t const K = b.knots - 1;
  for (index_t k = tid; k <= K; k += block_threads) dv[p * (K + 1) + k] = detail::combine_slots(slots + p * 2 * K, K, k);
}

template <class T>
RESILIN_KERNEL void gather_kernel(pair_batch<T> b, T* grad, bool on_x) {
  index_t const p = blockIdx.x;
  index_t const items = (on_x ? b.x.max_length : b.y.max_length) * b.x.channels;
  for (index_t item = threadIdx.x; item < items; item += block_threads)
    grad[p * items + item] = gather_program(b, p, item, on_x);
}

template <class T, class X, class W>
RESILIN_KERNEL void mc_chunk_kernel(X x, interpolant<T> y, W warp, mc_options opt, index_t per,
                                    index_t chunks, index_t px, index_t pw, T* sums,
                                    T* grad_slices, T* scratch) {
  index_t const c = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < chunks) mc_chunk_program(x, y, warp, opt, per, c, px, pw, sums, grad_slices, scratch);
}

template <class T>
RESILIN_KERNEL void mc_reduce_kernel(index_t chunks, index_t per, index_t samples, T const* sums,
                                     T const* grad_slices, index_t px, index_t py, index_t pw,
                                     mc_estimate<T>* out, mc_gradients<T> g) {
  index_t const k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  mc_reduce_program(k, chunks, per, samples, sums, grad_slices, px, py, pw, out, g);
}

// ---------------------------------------------------------------- host-side checks and plans

using ::resilin::cuda_detail::device_accessible;

template <class T>
std::string check_pointer(T const* p, char const* name) {
  if (!p) return resilin::detail::message(name, " is null");
  if (!device_accessible(p)) return resilin::detail::message(name, " is not device memory (host pointer?)");
  return {};
}

/// "" when each of the three optional outputs is null or device accessible.
template <class T>
std::string check_grads(T const* a, T const* b, T const* c, char const* na, char const* nb,
                        char const* nc) {
  T const* const pointers[] = {a, b, c};
  char const* const names[] = {na, nb, nc};
  for (int i = 0; i < 3; ++i)
    if (pointers[i] && !device_accessible(pointers[i]))
      return resilin::detail::message(names[i], " is not device memory");
  return {};
}

/// "" when x and y are a paired batch of piecewise-linear series in device memory.
template <class T>
std::string check_series_pairs(batch_view<T const> const& x, batch_view<T const> const& y) {
  using resilin::detail::message;
  if (x.batch < 0) return message("x: batch must be >= 0, got ", x.batch);
  if (x.batch != y.batch) return message("pair count mismatch: x has ", x.batch, " series, y has ", y.batch);
  if (x.channels < 1 || x.channels != y.channels)
    return message("channel mismatch: x has ", x.channels, ", y has ", y.channels);
  if (x.batch == 0) return {};
  if (x.max_length < 2) return message("x: max_length must be >= 2, got ", x.max_length);
  if (y.max_length < 2) return message("y: max_length must be >= 2, got ", y.max_length);
  if (auto e = check_pointer(x.data, "x data"); !e.empty()) return e;
  if (auto e = check_pointer(y.data, "y data"); !e.empty()) return e;
  if (x.lengths && !device_accessible(x.lengths)) return "x: lengths must be device memory";
  if (y.lengths && !device_accessible(y.lengths)) return "y: lengths must be device memory";
  return {};
}

/// "" for the pair layouts the enum names (an integer cast to it ran the block layout).
inline std::string layout_error(pair_layout l) {
  if (l == pair_layout::automatic || l == pair_layout::thread_per_pair || l == pair_layout::block_per_pair)
    return {};
  return resilin::detail::message("pair_layout must be automatic, thread_per_pair or block_per_pair, got ",
                                  static_cast<int>(l));
}

template <class T>
std::string check_batch(pair_batch<T> const& b, pair_layout layout) {
  if (b.knots < 2) return resilin::detail::message("knots must be >= 2, got ", b.knots);
  if (auto e = detail::option_error(b.norm); !e.empty()) return e;
  if (auto e = layout_error(layout); !e.empty()) return e;
  if (auto e = check_series_pairs(b.x, b.y); !e.empty() || b.x.batch == 0) return e;
  return check_pointer(b.warps, "warps");
}

/// "" when a batch's outputs (out, and the gradients where g is not null) are device memory
/// and apart from its inputs and each other: the per-pair kernels zero a pair's gradient rows
/// before they read its series and warp, and the block kernels write dx while other threads of
/// the block still read x (dx = x gave F 0.3134 for 0.8298, without an error).
template <class T>
std::string check_pair_outputs(pair_batch<T> const& b, T const* out, pair_grads<T> const* g) {
  if (b.x.batch == 0) return {};
  if (auto e = check_pointer(out, "out"); !e.empty()) return e;
  T const *dv = g ? g->dv : nullptr, *dx = g ? g->dx : nullptr, *dy = g ? g->dy : nullptr;
  if (g)
    if (auto e = check_grads(dv, dx, dy, "dv", "dx", "dy"); !e.empty()) return e;
  using resilin::detail::region;
  index_t const pairs = b.x.batch;
  return resilin::detail::disjoint_error(
      {region(out, pairs, "out"), region(dv, dv ? pairs * b.knots : 0, "dv"),
       region(dx, dx ? pairs * b.x.max_length * b.x.channels : 0, "dx"),
       region(dy, dy ? pairs * b.y.max_length * b.y.channels : 0, "dy")},
      {region(b.x, "x"), region(b.y, "y"), region(b.warps, pairs * b.knots, "warps")});
}

/// "" when X and Y are a valid paired batch for fit_distances in device memory, the options
/// hold in T (o.init = grid only with logits), out (and gx, gy, logits where not null) are
/// device memory, and those outputs are apart from X, Y and each other.
template <class T>
std::string check_fit(fit_options const& o, batch_view<T const> const& X,
                      batch_view<T const> const& Y, T const* out, T const* gx, T const* gy,
                      T const* logits = nullptr, pair_layout layout = pair_layout::automatic) {
  if (auto e = detail::options_error<T>(o); !e.empty()) return e;
  if (auto e = layout_error(layout); !e.empty()) return e;
  if (o.init != warp_init::identity && !logits)
    return "fit_options::init = grid: the grid CDTW start is computed on the host (fcdtw::distances, "
           "or grid_start_logits as the GPU fit's logits); the GPU fit starts from the identity "
           "or from given logits";
  if (auto e = check_series_pairs(X, Y); !e.empty() || X.batch == 0) return e;
  if (auto e = check_pointer(out, "out"); !e.empty()) return e;
  if (auto e = check_grads(gx, gy, logits, "gx", "gy", "logits"); !e.empty()) return e;
  using resilin::detail::region;
  return resilin::detail::disjoint_error(
      {region(out, X.batch, "out"), region(gx, gx ? X.batch * X.max_length * X.channels : 0, "gx"),
       region(gy, gy ? Y.batch * Y.max_length * Y.channels : 0, "gy"),
       region(logits, logits ? X.batch * detail::segments_for(o, Y.max_length) : 0, "logits")},
      {region(X, "X"), region(Y, "Y")});
}

/// Whether `pairs` problems of up to `segments` warp segments run one thread per pair.
inline bool per_pair(index_t pairs, index_t segments, pair_layout layout) noexcept {
  if (layout != pair_layout::automatic) return layout == pair_layout::thread_per_pair;
  return pairs >= 4096 || segments < 64;
}

/// One block per pair puts the pair in blockIdx.x, at most 2^31 - 1.
inline bool too_many_blocks(index_t pairs, bool thread_layout) noexcept {
  return !thread_layout && pairs > 2147483647;
}

inline unsigned blocks_for(index_t n) noexcept {
  return static_cast<unsigned>((n + block_threads - 1) / block_threads);
}

template <class T>
cudaError_t launch_pairs(void* ws, std::size_t& bytes, device_backend exec,
                         pair_batch<T> const& b, T* out, pair_grads<T> const* g,
                         pair_layout layout) {
  bool const thread_layout = per_pair(b.x.batch, b.knots - 1, layout);
  if (too_many_blocks(b.x.batch, thread_layout)) return cudaErrorInvalidValue;
  bool const slots = g && g->dv && !thread_layout;
  std::size_t const need =
      slots ? static_cast<std::size_t>(b.x.batch) * 2 * static_cast<std::size_t>(b.knots - 1) * sizeof(T) : 0;
  if (!ws) {
    bytes = need;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, need)) return cudaErrorInvalidValue;
  if (b.x.batch == 0) return cudaSuccess;
  ::resilin::detail::discard_pending_error();
  cudaStream_t const s = exec.stream;
  if (thread_layout) {
    RESILIN_LAUNCH(blocks_for(b.x.batch), block_threads, 0, s, pair_kernel<T>)
        (b, out, g ? *g : pair_grads<T>{});
    return cudaGetLastError();
  }
  auto const pairs = static_cast<unsigned>(b.x.batch);
  RESILIN_LAUNCH(pairs, block_threads, 0, s, segment_kernel<T>)(
      b, out, slots ? static_cast<T*>(ws) : nullptr, slots ? g->dv : nullptr);
  if (cudaError_t e = cudaGetLastError()) return e;
  if (g && g->dx) {
    RESILIN_LAUNCH(pairs, block_threads, 0, s, gather_kernel<T>)(b, g->dx, true);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  if (g && g->dy) {
    RESILIN_LAUNCH(pairs, block_threads, 0, s, gather_kernel<T>)(b, g->dy, false);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  return cudaSuccess;
}

/// The workspace of the Monte Carlo launch: sums (chunks, 2), gradient slices (chunks, P)
/// when gradients are wanted, scratch (chunks, 2d), each aligned to 256 bytes.
struct mc_plan {
  index_t chunks = 0;
  std::size_t sums_offset = 0, grads_offset = 0, scratch_offset = 0, bytes = 0;

  static std::size_t align(std::size_t n) noexcept { return (n + 255) / 256 * 256; }
  template <class T>
  static mc_plan make(index_t samples, index_t per, index_t parameters, index_t channels,
                      bool grads) noexcept {
    mc_plan p;
    p.chunks = samples / per + (samples % per != 0);  // (samples + per - 1) / per overflowed
    auto const c = static_cast<std::size_t>(p.chunks);
    p.grads_offset = align(c * 2 * sizeof(T));
    p.scratch_offset =
        p.grads_offset + (grads ? align(c * static_cast<std::size_t>(parameters) * sizeof(T)) : 0);
    p.bytes = p.scratch_offset +
              align(c * static_cast<std::size_t>(mc_scratch_size(channels)) * sizeof(T));
    return p;
  }
};

/// "" when a piecewise-linear function's samples (named `name` + `what`) and its knots, if any,
/// are device memory.
template <class T>
std::string check_knotted_data(T const* values, knot_grid<T> const& grid, char const* name, char const* what) {
  if (auto e = check_pointer(values, (std::string(name) + " " + what).c_str()); !e.empty()) return e;
  if (grid.knots && !device_accessible(grid.knots)) return resilin::detail::message(name, ": knots must be device memory");
  return {};
}
/// The data of the library's own signals and warps must be device memory (a host pointer runs on
/// the emulated device but is an illegal address on a GPU); a caller's functor is its own.
/// Their shapes too, as the host's check_interpolant has them (the samples are not read here):
/// with one sample or knot the kernels read index -1, with more knots than samples past the end.
template <class T>
std::string check_device_data(interpolant<T> const& f, char const* name) {
  using resilin::detail::message;
  if (f.channels() < 1) return message(name, ": channels must be >= 1, got ", f.channels());
  if (f.length() < 2) return message(name, ": a piecewise-linear series needs >= 2 samples, got ", f.length());
  if (f.grid.size != f.length())
    return message(name, ": the knot grid has ", f.grid.size, " knots for ", f.length(), " samples");
  return check_knotted_data(f.values.data, f.grid, name, "data");
}
template <class T>
std::string check_device_data(pl_signal<T> const& s, char const* name) { return check_device_data(s.x, name); }
template <class T>
std::string check_device_data(pl_warp_function<T> const& w, char const* name) {
  if (w.phi.grid.size < 2)
    return resilin::detail::message(name, ": a piecewise-linear warp needs >= 2 knots, got ", w.phi.grid.size);
  return check_knotted_data(w.phi.values, w.phi.grid, name, "values");
}
template <class F>
std::string check_device_data(F const&, char const*) { return {}; }

template <class T, class X, class W>
std::string check_mc_device(X const& x, interpolant<T> const& y, W const& warp,
                            mc_options const& opt, index_t per, mc_estimate<T> const* out) {
  using resilin::detail::message;
  if (auto e = detail::mc_options_error(opt); !e.empty()) return e;
  if (per < 1) return message("samples_per_thread must be >= 1, got ", per);
  if (auto e = check_device_data(y, "y"); !e.empty()) return e;
  if (auto e = check_device_data(x, "x"); !e.empty()) return e;
  if (auto e = check_device_data(warp, "warp"); !e.empty()) return e;
  if (static_cast<index_t>(x.channels()) != y.channels())
    return message("channel mismatch: x has ", static_cast<index_t>(x.channels()), ", y has ",
                   y.channels());
  if (static_cast<index_t>(x.parameter_count()) < 0 ||
      static_cast<index_t>(warp.parameter_count()) < 0)
    return "parameter_count must be >= 0";
  return check_pointer(out, "out");
}

}  // namespace fcdtw_cuda_detail

namespace expert {

/// F for every pair into out (pairs). Workspace: none (bytes = 0; pass any non-null ws to
/// run: ws == nullptr is always a size query).
template <class T>
cudaError_t values(void* ws, std::size_t& bytes, device_backend exec, pair_batch<T> const& b,
                   T* out, pair_layout layout = pair_layout::automatic) {
  namespace cd = fcdtw_cuda_detail;
  if (!cd::check_batch(b, layout).empty() || !cd::check_pair_outputs<T>(b, out, nullptr).empty())
    return cudaErrorInvalidValue;
  return cd::launch_pairs<T>(ws, bytes, exec, b, out, nullptr, layout);
}

/// F and its gradients (overwritten; null outputs skipped). Workspace: 2K values per pair
/// for dv under block_per_pair, none otherwise.
template <class T>
cudaError_t values_and_grads(void* ws, std::size_t& bytes, device_backend exec,
                             pair_batch<T> const& b, T* out, pair_grads<T> const& g,
                             pair_layout layout = pair_layout::automatic) {
  namespace cd = fcdtw_cuda_detail;
  if (!cd::check_batch(b, layout).empty() || !cd::check_pair_outputs(b, out, &g).empty())
    return cudaErrorInvalidValue;
  return cd::launch_pairs<T>(ws, bytes, exec, b, out, &g, layout);
}

/// FastCDTW distances of the paired batch (X[b] warped onto Y[b]'s axis, uniform grids, ragged
/// lengths allowed) into out (pairs), by the host distances()' fit with options o (its
/// `threads` is not used); with gx / gy (device, shaped like X and Y, overwritten) also the
/// gradients with respect to the series at each pair's final warp, as distances_and_grads().
/// Each fit starts from the identity (o.init must be identity), or, with logits (device,
/// (pairs, K) for K = o.segments or Y.max_length - 1; pair b uses the first K_b entries of its
/// row), from those logits, which then receive the final ones: the host fit() from
/// initial_logits, for warm starts (the barycentre's rounds; o.init is then not used).
/// One thread or one block per pair (layout; see the file comment). A pair whose fit diverged
/// (non-finite logits) gets NaN, and NaN gradient rows, where the host API throws. Workspace
/// per pair: fit_workspace_size(K) values of T (thread_per_pair), 2K more (block_per_pair).
template <class T>
cudaError_t fit_distances(void* ws, std::size_t& bytes, device_backend exec, fit_options const& o,
                          batch_view<T const> X, batch_view<T const> Y, T* out,
                          std::type_identity_t<T>* gx = nullptr, std::type_identity_t<T>* gy = nullptr,
                          pair_layout layout = pair_layout::automatic,
                          std::type_identity_t<T>* logits = nullptr) {
  namespace cd = fcdtw_cuda_detail;
  if (!cd::check_fit<T>(o, X, Y, out, gx, gy, logits, layout).empty()) return cudaErrorInvalidValue;
  bool const thread_layout =
      X.batch == 0 || cd::per_pair(X.batch, detail::segments_for(o, Y.max_length), layout);
  if (cd::too_many_blocks(X.batch, thread_layout)) return cudaErrorInvalidValue;
  index_t const stride = X.batch > 0 ? cd::fit_stride(o, Y.max_length, thread_layout) : 0;
  std::size_t const need = static_cast<std::size_t>(X.batch) * static_cast<std::size_t>(stride) * sizeof(T);
  if (!ws) {
    bytes = need;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, need)) return cudaErrorInvalidValue;
  if (X.batch == 0) return cudaSuccess;
  ::resilin::detail::discard_pending_error();
  T* const scratch = static_cast<T*>(ws);
  cudaStream_t const s = exec.stream;
  index_t const logit_stride = detail::segments_for(o, Y.max_length);
  if (thread_layout) {
    RESILIN_LAUNCH(cd::blocks_for(X.batch), cd::block_threads, 0, s, cd::fit_kernel<T>)(
        X, Y, o, scratch, stride, out, gx, gy, logits, logit_stride);
    return cudaGetLastError();
  }
  auto const pairs = static_cast<unsigned>(X.batch);
  RESILIN_LAUNCH(pairs, cd::block_threads, 0, s, cd::fit_block_kernel<T>)(X, Y, o, scratch, stride,
                                                                          out, logits, logit_stride);
  if (cudaError_t e = cudaGetLastError()) return e;
  for (bool const on_x : {true, false}) {
    T* const grad = on_x ? gx : gy;
    if (!grad) continue;
    RESILIN_LAUNCH(pairs, cd::block_threads, 0, s, cd::fit_gather_kernel<T>)(
        X, Y, o, scratch, stride, out, grad, on_x);
    if (cudaError_t e = cudaGetLastError()) return e;
  }
  return cudaSuccess;
}

/// The Monte Carlo estimate (into *out, device) and, where grads has non-null device pointers,
/// its gradients (overwritten): one thread per `samples_per_thread` draws, chunk sums added in
/// chunk order. The draws are those of the host mc_value with the same options. x, y's data
/// and the warp's data must be device accessible; X and W are trivially copyable with
/// RESILIN_HD members (their host validate() is not called: it would read device memory).
template <class T, class X, class W>
  requires signal_function<X, T> && warp_function<W, T>
cudaError_t mc_value_and_grad(void* ws, std::size_t& bytes, device_backend exec, X const& x,
                              interpolant<T> const& y, W const& warp, mc_options const& opt,
                              mc_estimate<T>* out, mc_gradients<T> const& grads = {},
                              index_t samples_per_thread = mc_chunk_samples) {
  static_assert(std::is_trivially_copyable_v<X> && std::is_trivially_copyable_v<W>,
                "kernel arguments: the signal and the warp must be trivially copyable");
  namespace cd = fcdtw_cuda_detail;
  if (!cd::check_mc_device(x, y, warp, opt, samples_per_thread, out).empty())
    return cudaErrorInvalidValue;
  if (!cd::check_grads(grads.x, grads.y, grads.warp, "grads.x", "grads.y", "grads.warp").empty())
    return cudaErrorInvalidValue;
  auto const px = static_cast<index_t>(x.parameter_count());
  auto const pw = static_cast<index_t>(warp.parameter_count());
  index_t const py = y.values.size();
  bool const want = grads.any();
  cd::mc_plan const plan =
      cd::mc_plan::make<T>(opt.samples, samples_per_thread, px + py + pw, y.channels(), want);
  if (!ws) {
    bytes = plan.bytes;
    return cudaSuccess;
  }
  if (!cuda_memory::workspace_fits(ws, bytes, plan.bytes)) return cudaErrorInvalidValue;
  ::resilin::detail::discard_pending_error();
  char* const base = static_cast<char*>(ws);
  T* const sums = reinterpret_cast<T*>(base + plan.sums_offset);
  T* const slices = want ? reinterpret_cast<T*>(base + plan.grads_offset) : nullptr;
  T* const scratch = reinterpret_cast<T*>(base + plan.scratch_offset);
  cudaStream_t const s = exec.stream;
  RESILIN_LAUNCH(cd::blocks_for(plan.chunks), cd::block_threads, 0, s,
                 cd::mc_chunk_kernel<T, X, W>)(
      x, y, warp, opt, samples_per_thread, plan.chunks, px, pw, sums, slices, scratch);
  if (cudaError_t e = cudaGetLastError()) return e;
  index_t const outputs = 1 + (want ? px + py + pw : 0);
  RESILIN_LAUNCH(cd::blocks_for(outputs), cd::block_threads, 0, s, cd::mc_reduce_kernel<T>)(
      plan.chunks, samples_per_thread, opt.samples, sums, slices, px, py, pw, out, grads);
  return cudaGetLastError();
}

}  // namespace expert

namespace fcdtw_cuda_detail {
/// Runs an expert call twice (size query, then work) with a stream-ordered workspace.
template <class Call>
void with_workspace(device_backend exec, Call&& call) {
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(call(nullptr, bytes));
  char none = 0;  // a non-null workspace of 0 bytes: "run", not "query"
  void* ws = &none;
  if (bytes > 0) RESILIN_CUDA_TRY(cuda_memory::allocate(exec, &ws, bytes));
  cudaError_t const st = call(ws, bytes);
  if (bytes > 0) cuda_memory::release(exec, ws, bytes);
  RESILIN_CUDA_TRY(st);
}
}  // namespace fcdtw_cuda_detail

/// F for every pair of the batch into out (pairs, device); asynchronous on exec.stream.
/// Throws resilin::invalid_argument (bad input) or resilin::cuda_error.
template <class T>
void values(device_backend exec, pair_batch<T> const& b, T* out,
            pair_layout layout = pair_layout::automatic) {
  namespace cd = fcdtw_cuda_detail;
  std::string e = cd::check_batch(b, layout);
  if (e.empty()) e = cd::check_pair_outputs<T>(b, out, nullptr);
  resilin::detail::require(e.empty(), e);
  cd::with_workspace(exec, [&](void* ws, std::size_t& bytes) {
    return expert::values(ws, bytes, exec, b, out, layout);
  });
}

/// F and the gradients (overwritten; null outputs skipped).
template <class T>
void values_and_grads(device_backend exec, pair_batch<T> const& b, T* out,
                      pair_grads<T> const& g, pair_layout layout = pair_layout::automatic) {
  namespace cd = fcdtw_cuda_detail;
  std::string e = cd::check_batch(b, layout);
  if (e.empty()) e = cd::check_pair_outputs(b, out, &g);
  resilin::detail::require(e.empty(), e);
  cd::with_workspace(exec, [&](void* ws, std::size_t& bytes) {
    return expert::values_and_grads(ws, bytes, exec, b, out, g, layout);
  });
}

/// FastCDTW distances by the fit, and optionally the series gradients and warm-started logits
/// (expert::fit_distances; NaN for a pair whose fit diverged); asynchronous on exec.stream.
/// Throws resilin::invalid_argument (bad input) or resilin::cuda_error.
template <class T>
void fit_distances(device_backend exec, fit_options const& o, batch_view<T const> X,
                   batch_view<T const> Y, T* out, std::type_identity_t<T>* gx = nullptr,
                   std::type_identity_t<T>* gy = nullptr, pair_layout layout = pair_layout::automatic,
                   std::type_identity_t<T>* logits = nullptr) {
  namespace cd = fcdtw_cuda_detail;
  std::string const e = cd::check_fit<T>(o, X, Y, out, gx, gy, logits, layout);
  resilin::detail::require(e.empty(), e);
  cd::with_workspace(exec, [&](void* ws, std::size_t& bytes) {
    return expert::fit_distances(ws, bytes, exec, o, X, Y, out, gx, gy, layout, logits);
  });
}

/// The Monte Carlo estimate into *out (device) and its gradients (device, overwritten; null
/// pointers skipped): the same draws, so the same result up to summation order, as the host
/// mc_value_and_grad with the same options.
template <class T, class X, class W>
  requires signal_function<X, T> && warp_function<W, T>
void mc_value_and_grad(device_backend exec, X const& x, interpolant<T> const& y, W const& warp,
                       mc_options const& opt, mc_estimate<T>* out,
                       mc_gradients<T> const& grads = {},
                       index_t samples_per_thread = mc_chunk_samples) {
  namespace cd = fcdtw_cuda_detail;
  std::string e = cd::check_mc_device(x, y, warp, opt, samples_per_thread, out);
  if (e.empty()) e = cd::check_grads(grads.x, grads.y, grads.warp, "grads.x", "grads.y", "grads.warp");
  resilin::detail::require(e.empty(), e);
  cd::with_workspace(exec, [&](void* ws, std::size_t& bytes) {
    return expert::mc_value_and_grad(ws, bytes, exec, x, y, warp, opt, out, grads,
                                     samples_per_thread);
  });
}

}  // namespace resilin::fcdtw

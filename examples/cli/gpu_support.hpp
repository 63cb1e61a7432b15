#pragma once
// The tool's GPU path, compiled by nvcc into the tool when the build has CUDA (gpu_support.cu;
// otherwise gpu_support_none.cpp, whose functions report that there is none): `--backend cuda`
// runs the pairwise values and gradients of the alignment metrics and of fast-cdtw (its warp
// fits, fcdtw::fit_distances) on the device, the barycentres of the soft metrics with their
// per-iteration gradients of all series in one batched call, and fast-cdtw's barycentres with
// every round's warp fits in one call (learn/cuda.cuh). Every call blocks until its results are
// in host memory.
#include <string>
#include <resilin/core/views.hpp>
#include <resilin/learn/options.hpp>
#include "metric.hpp"

namespace resilin_cli::gpu {

/// The name of the CUDA device the tool would use; empty when the build has no CUDA or no
/// device can be used.
std::string device_name();

/// Why `--backend cuda` cannot run here (no CUDA in this build, or no device); empty if it can.
std::string unavailable_reason();

/// out(i, j) = M(A_i, B_j) for an alignment metric (not fast-cdtw), on the GPU.
template <class T>
void pairwise(measure_choice const& metric, resilin::batch_view<T const> a,
              resilin::batch_view<T const> b, resilin::matrix_view<T> out);

/// g[i] = d/dA_i sum_j M(A_i, B_j) for an alignment metric (not fast-cdtw), on the GPU.
template <class T>
void pairwise_gradients(measure_choice const& metric, resilin::batch_view<T const> a,
                        resilin::batch_view<T const> b, resilin::batch_view<T> g);

/// out(i, j) = D(A_i -> B_j) for fast-cdtw, by fcdtw::fit_distances on the pairs in chunks of
/// bounded device memory (--warp-init grid: each fit starts from logits computed on `threads`
/// host threads).
template <class T>
void fcdtw_pairwise(fast_cdtw_metric const& metric, resilin::batch_view<T const> a,
                    resilin::batch_view<T const> b, resilin::matrix_view<T> out, int threads);

/// g[i] = d/dA_i sum_j D(A_i -> B_j) for fast-cdtw, at each pair's fitted warp.
template <class T>
void fcdtw_pairwise_gradients(fast_cdtw_metric const& metric, resilin::batch_view<T const> a,
                              resilin::batch_view<T const> b, resilin::batch_view<T> g, int threads);

/// The L-BFGS barycentre of `series` for a soft metric, gradients on the GPU.
template <class T>
resilin::learn::barycenter_result<T> barycenter(measure_choice const& metric,
                                                resilin::batch_view<T const> series,
                                                resilin::learn::barycenter_options const& opt);

/// The fast-cdtw barycentre of `series` (the centroid warped onto each series), every round's
/// warp fits on the GPU.
template <class T>
resilin::learn::barycenter_result<T> fcdtw_barycenter(fast_cdtw_metric const& metric,
                                                      resilin::batch_view<T const> series,
                                                      resilin::learn::barycenter_options const& opt);

// Both implementations instantiate the templates for float and double with this.
#define RESILIN_CLI_GPU_INSTANTIATE(T)                                                         \
  template void pairwise<T>(measure_choice const&, resilin::batch_view<T const>,              \
                            resilin::batch_view<T const>, resilin::matrix_view<T>);           \
  template void pairwise_gradients<T>(measure_choice const&, resilin::batch_view<T const>,    \
                                      resilin::batch_view<T const>, resilin::batch_view<T>);  \
  template resilin::learn::barycenter_result<T> barycenter<T>(                                 \
      measure_choice const&, resilin::batch_view<T const>, resilin::learn::barycenter_options const&); \
  template void fcdtw_pairwise<T>(fast_cdtw_metric const&, resilin::batch_view<T const>,      \
                                  resilin::batch_view<T const>, resilin::matrix_view<T>, int); \
  template void fcdtw_pairwise_gradients<T>(fast_cdtw_metric const&, resilin::batch_view<T const>, \
                                            resilin::batch_view<T const>, resilin::batch_view<T>, int); \
  template resilin::learn::barycenter_result<T> fcdtw_barycenter<T>(                           \
      fast_cdtw_metric const&, resilin::batch_view<T const>, resilin::learn::barycenter_options const&);

}  // namespace resilin_cli::gpu

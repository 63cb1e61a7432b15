#pragma once
// Host-backend references for the CUDA tests, compiled by the host compiler in
// host_reference.cpp: the host backend's SIMD packs cannot be instantiated by nvcc in a .cu
// translation unit, so the .cu tests call these declarations instead.
#include <span>
#include <resilin/core/band.hpp>
#include <resilin/core/views.hpp>

namespace resilin_test {

/// soft-DTW (gamma > 0) or DTW (gamma == 0), squared Euclidean, with a band, plain or divergence;
/// or, with cost = soft_msm (gamma > 0) / msm (hard), the MSM family with split/merge cost c,
/// whose channels are independent (the sum of per-channel problems) as its factories make it.
struct ref_measure {
  enum class cost_kind { dtw, soft_msm, msm };
  double gamma = 1;
  resilin::band_spec band{};
  bool divergence = false;
  cost_kind cost = cost_kind::dtw;
  double c = 1;
  double warp_penalty = 0;  // > 0: soft-DTW (dtw, gamma > 0, double) with_warp_penalty
};

template <class T>
void ref_values(ref_measure const& m, resilin::batch_view<T const> X, resilin::batch_view<T const> Y,
                std::span<T> out);
template <class T>
void ref_pairwise(ref_measure const& m, resilin::batch_view<T const> X,
                  resilin::batch_view<T const> Y, resilin::matrix_view<T> out);
template <class T>
void ref_values_and_grads(ref_measure const& m, resilin::batch_view<T const> X,
                          resilin::batch_view<T const> Y, std::span<T> out,
                          resilin::batch_view<T> gx, resilin::batch_view<T> gy,
                          std::span<T const> upstream);
template <class T>
void ref_pairwise_grads(ref_measure const& m, resilin::batch_view<T const> X,
                        resilin::batch_view<T const> Y, resilin::batch_view<T> gx,
                        resilin::matrix_view<T> out, resilin::matrix_view<T const> weights);
template <class T>
T ref_alignment_matrix(ref_measure const& m, resilin::series_view<T const> x,
                       resilin::series_view<T const> y, resilin::matrix_view<T> e);

}  // namespace resilin_test

#pragma once
// Barycentres with their heavy part on a GPU (nvcc; link resilin::learn and resilin::cuda).
// L-BFGS barycentres: every evaluation of L(z) = sum_k w_k M(z, x_k) is one batched
// values_and_grads call on the device for all pairs (z, x_k). The series are uploaded once; per
// evaluation only z goes up and the per-pair values and gradients come back, summed on the host
// in k order, so results are deterministic. The optimiser (LBFGS++) and the initialisation are
// the host's.
// FastCDTW barycentres: every round's E-step (a warp fit per series against the centroid, warm
// started from its last logits) is one fcdtw::fit_distances call; the M-step, a tridiagonal
// solve, and the rule for keeping a refit stay on the host.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cmath>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>
#include <resilin/core/thread_pool.hpp>
#include <resilin/cuda.cuh>
#include <resilin/fcdtw/cuda/fcdtw.cuh>
#include <resilin/learn/fcdtw_barycenter.hpp>
#include <resilin/learn/lbfgs_barycenter.hpp>

namespace resilin::learn {

namespace cuda_detail {
/// Copies count values of U (host <-> device), ordered on exec's stream.
template <class U>
void copy_async(device_backend const& exec, void* dst, void const* src, index_t count,
                cudaMemcpyKind kind) {
  if (count > 0)
    RESILIN_CUDA_TRY(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(count) * sizeof(U), kind, exec.stream));
}

template <class U>
std::size_t bytes(index_t count) { return static_cast<std::size_t>(count) * sizeof(U); }

/// The pairs (z, x_k) of a barycentre's batched calls: the series x_k on the device (values and
/// lengths, uploaded once) and n copies of the current centre z (`length` samples), replicated
/// on the host and uploaded as one batch per call.
template <class T>
class device_pairs {
 public:
  device_pairs(device_backend exec, batch_view<T const> series, index_t length)
      : exec_(exec), n_(series.batch), length_(length), channels_(series.channels),
        max_length_(series.max_length),
        series_(exec, bytes<T>(n_ * max_length_ * channels_)),
        lengths_(exec, bytes<index_t>(n_)),
        centres_(exec, bytes<T>(n_ * length_ * channels_)) {
    std::vector<index_t> lengths(static_cast<std::size_t>(n_));
    for (index_t b = 0; b < n_; ++b) lengths[static_cast<std::size_t>(b)] = series.length(b);
    copy_async<T>(exec_, series_.get(), series.data, n_ * max_length_ * channels_, cudaMemcpyHostToDevice);
    copy_async<index_t>(exec_, lengths_.get(), lengths.data(), n_, cudaMemcpyHostToDevice);
    RESILIN_CUDA_TRY(cudaStreamSynchronize(exec_.stream));
  }

  index_t size() const noexcept { return n_; }
  index_t const* lengths() const noexcept { return static_cast<index_t const*>(lengths_.get()); }
  /// The series (device, ragged).
  batch_view<T const> series() const noexcept {
    return {static_cast<T const*>(series_.get()), n_, max_length_, channels_, lengths()};
  }
  /// n copies of z (length samples) on the device, uploaded on the stream.
  batch_view<T const> centres(series_view<T const> z) {
    learn::detail::replicate(std::span<T const>(z.data, static_cast<std::size_t>(z.size())), n_, staging_);
    copy_async<T>(exec_, centres_.get(), staging_.data(), n_ * length_ * channels_, cudaMemcpyHostToDevice);
    return {static_cast<T const*>(centres_.get()), n_, length_, channels_, nullptr};
  }

 private:
  device_backend exec_;
  index_t n_, length_, channels_, max_length_;
  ::resilin::cuda_detail::workspace series_, lengths_, centres_;
  std::vector<T> staging_;  // the copies of z, alive until the stream has read them
};

/// L(z) and dL/dz from one batched values_and_grads call per evaluation; the per-pair values
/// and gradients come back and are summed on the host in k order.
template <class T>
class device_loss {
 public:
  device_loss(device_backend exec, batch_view<T const> series, std::span<double const> w,
              index_t length)
      : exec_(exec), pairs_(exec, series, length), w_(w.begin(), w.end()),
        out_(exec, bytes<T>(series.batch)),
        gz_(exec, bytes<T>(series.batch * length * series.channels)),
        gx_(exec, bytes<T>(series.batch * series.max_length * series.channels)),
        upstream_(exec, bytes<T>(series.batch)) {
    std::vector<T> up(w_.begin(), w_.end());
    copy_async<T>(exec_, upstream_.get(), up.data(), series.batch, cudaMemcpyHostToDevice);
    RESILIN_CUDA_TRY(cudaStreamSynchronize(exec_.stream));
  }

  /// L(z) and dL/dz (in grad) from one batched device call.
  template <class Measure>
  double operator()(Measure const& m, series_view<T const> z, std::span<double> grad) {
    index_t const n = pairs_.size();
    auto const size = static_cast<std::size_t>(z.size());
    batch_view<T const> const zb = pairs_.centres(z), xb = pairs_.series();
    values_and_grads(exec_, m, zb, xb, std::span<T>(static_cast<T*>(out_.get()), static_cast<std::size_t>(n)),
                     batch_view<T>{static_cast<T*>(gz_.get()), n, zb.max_length, zb.channels, nullptr},
                     batch_view<T>{static_cast<T*>(gx_.get()), n, xb.max_length, xb.channels, pairs_.lengths()},
                     std::span<T const>(static_cast<T const*>(upstream_.get()), static_cast<std::size_t>(n)));
    out_host_.resize(static_cast<std::size_t>(n));
    gz_host_.resize(size * static_cast<std::size_t>(n));
    copy_async<T>(exec_, out_host_.data(), out_.get(), n, cudaMemcpyDeviceToHost);
    copy_async<T>(exec_, gz_host_.data(), gz_.get(), static_cast<index_t>(gz_host_.size()), cudaMemcpyDeviceToHost);
    RESILIN_CUDA_TRY(cudaStreamSynchronize(exec_.stream));
    double loss = 0;
    std::fill(grad.begin(), grad.end(), 0.0);
    for (index_t k = 0; k < n; ++k) {
      loss += w_[static_cast<std::size_t>(k)] * static_cast<double>(out_host_[static_cast<std::size_t>(k)]);
      T const* g = gz_host_.data() + static_cast<std::size_t>(k) * size;
      for (std::size_t i = 0; i < size; ++i) grad[i] += static_cast<double>(g[i]);
    }
    return loss;
  }

 private:
  device_backend exec_;
  device_pairs<T> pairs_;
  std::vector<double> w_;
  ::resilin::cuda_detail::workspace out_, gz_, gx_, upstream_;
  std::vector<T> out_host_, gz_host_;
};

/// The FastCDTW barycentre's E-step on a GPU (detail::fcdtw_alternate's refit): the fits of
/// the centroid onto every series as one fcdtw::fit_distances call, each from the series' kept
/// logits. A diverged fit (NaN) is refused as the host's fit() refuses it; F at each refit's
/// warp is evaluated on the host from the returned logits (the value the host E-step compares),
/// and detail::keep_if_lower() keeps it or not, as on the host.
template <class T>
class device_refit {
 public:
  device_refit(device_backend exec, fcdtw::fit_options const& fo, batch_view<T const> series,
               index_t length, int threads)
      : exec_(exec), fo_(fo), series_(series), threads_(threads),
        stride_(fcdtw::detail::segments_for(fo, series.max_length)), pairs_(exec, series, length),
        logits_d_(exec, bytes<T>(series.batch * stride_)), out_d_(exec, bytes<T>(series.batch)) {}

  void operator()(series_view<T const> centroid, learn::detail::fcdtw_warps<T>& w) {
    index_t const n = pairs_.size();
    logits_.assign(static_cast<std::size_t>(n * stride_), T(0));
    for (index_t k = 0; k < n; ++k) {
      auto const& r = w.logits[static_cast<std::size_t>(k)];
      std::copy(r.begin(), r.end(), logits_.begin() + static_cast<std::ptrdiff_t>(k * stride_));
    }
    copy_async<T>(exec_, logits_d_.get(), logits_.data(), n * stride_, cudaMemcpyHostToDevice);
    fcdtw::fit_distances(exec_, fo_, pairs_.centres(centroid), pairs_.series(), static_cast<T*>(out_d_.get()),
                         nullptr, nullptr, fcdtw::pair_layout::automatic, static_cast<T*>(logits_d_.get()));
    out_.resize(static_cast<std::size_t>(n));
    copy_async<T>(exec_, logits_.data(), logits_d_.get(), n * stride_, cudaMemcpyDeviceToHost);
    copy_async<T>(exec_, out_.data(), out_d_.get(), n, cudaMemcpyDeviceToHost);
    RESILIN_CUDA_TRY(cudaStreamSynchronize(exec_.stream));
    std::vector<unsigned char> diverged(out_.size());
    for (std::size_t k = 0; k < out_.size(); ++k) diverged[k] = std::isnan(out_[k]) ? 1 : 0;
    fcdtw::detail::check_converged(diverged, fo_, "fcdtw_barycenter (GPU E-step)");
    auto const ci = fcdtw::uniform_interpolant(centroid);
    parallel_for(n, threads_, [&](index_t k, int) {
      index_t const K = fcdtw::detail::segments_for(fo_, series_.length(k));
      T const* const row = logits_.data() + k * stride_;
      std::vector<T> r(row, row + K), v(static_cast<std::size_t>(K + 1));
      fcdtw::warp_from_logits(fo_.map, r.data(), K, v.data());
      double const F = static_cast<double>(fcdtw::value(
          ci, fcdtw::uniform_interpolant(series_[k]), fcdtw::uniform_warp<T>(v.data(), K), fo_.norm));
      learn::detail::keep_if_lower(w, k, std::move(r), std::move(v), F);
    });
  }

 private:
  device_backend exec_;
  fcdtw::fit_options fo_;
  batch_view<T const> series_;  // host memory
  int threads_;
  index_t stride_;
  device_pairs<T> pairs_;
  ::resilin::cuda_detail::workspace logits_d_, out_d_;
  std::vector<T> logits_, out_;
};
}  // namespace cuda_detail

/// lbfgs_barycenter() with the gradients computed on the GPU of `exec` (series in host
/// memory, as for the host version; the result is in host memory).
template <alignment_measure Measure, std::floating_point T>
barycenter_result<T> lbfgs_barycenter(device_backend exec, Measure const& m,
                                      batch_view<T const> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  // a hard measure's sharp value is its value (learn/objective.hpp)
  detail::require(opt.objective == barycenter_objective::value || !detail::has_sharp_value_v<Measure, T>,
                  "lbfgs_barycenter: the sharp objective runs on the host (the GPU has no sharp "
                  "values); call the host lbfgs_barycenter");
  auto const start = detail::prepare_lbfgs(m, series, weights, opt);
  cuda_detail::device_loss<T> loss(exec, series, std::span<double const>(start.w), start.length);
  auto evaluate = [&](series_view<T const> z, std::span<double> grad) { return loss(m, z, grad); };
  return detail::minimise_lbfgs<T>(evaluate, start.z0, start.length, series.channels, opt);
}

/// fcdtw_barycenter() with every round's warp fits on the GPU of `exec` as one batched call
/// (series in host memory, as for the host version; the result is in host memory). The fits
/// are the host's Adam from the same logits (one thread or one block per series, as
/// fcdtw::fit_distances chooses), so the result agrees with the host's to rounding; it is the
/// same run to run. opt.threads runs the host's share (F at the refits, the M-step, and the
/// start: the medoid of opt.init = medoid, n^2 fits, and fo.init = grid's alignments).
template <std::floating_point T>
barycenter_result<T> fcdtw_barycenter(device_backend exec, fcdtw::fit_options const& fo,
                                      batch_view<T const> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  return detail::fcdtw_alternate(fo, series, weights, opt, [&](index_t length) {
    return cuda_detail::device_refit<T>(exec, fo, series, length, opt.threads);
  });
}

/// The same for a batch of mutable values.
template <std::floating_point T>
  requires(!std::is_const_v<T>)
barycenter_result<T> fcdtw_barycenter(device_backend exec, fcdtw::fit_options const& fo,
                                      batch_view<T> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  return fcdtw_barycenter(exec, fo, as_const(series), weights, opt);
}

/// The weighted loss and its gradient at z with one batched GPU call (as barycenter_loss_and_grad).
template <alignment_measure Measure, std::floating_point T>
double barycenter_loss_and_grad(device_backend exec, Measure const& m, series_view<T const> z,
                                batch_view<T const> series,
                                std::type_identity_t<std::span<T const>> weights,
                                std::span<double> grad) {
  auto const w = detail::check_loss_and_grad_call(z, series, weights, grad);
  cuda_detail::device_loss<T> loss(exec, series, std::span<double const>(w), z.length);
  return loss(m, z, grad);
}

/// The same for mutable views (z, the series or both), as the host's overload.
template <alignment_measure Measure, series_like Z, batch_like B>
  requires std::same_as<value_of<Z>, value_of<B>> && detail::any_mutable_view<Z, B>
double barycenter_loss_and_grad(device_backend exec, Measure const& m, Z z, B series,
                                std::type_identity_t<std::span<value_of<Z> const>> weights,
                                std::span<double> grad) {
  return barycenter_loss_and_grad(exec, m, as_const(z), as_const(series), weights, grad);
}

}  // namespace resilin::learn

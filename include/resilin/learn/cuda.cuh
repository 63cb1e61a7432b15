#pragma once
// L-BFGS barycentres with the gradients on a GPU (nvcc; link resilin::learn and resilin::cuda):
// every evaluation of L(z) = sum_k w_k M(z, x_k) is one batched values_and_grads call on the
// device for all pairs (z, x_k). The series are uploaded once; per evaluation only z goes up
// and the per-pair values and gradients come back, summed on the host in k order, so results
// are deterministic. The optimiser (LBFGS++) and the initialisation are the host's.
#include <resilin/backend/cuda/require_cuda.hpp>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>
#include <resilin/cuda.cuh>
#include <resilin/learn/lbfgs_barycenter.hpp>

namespace resilin::learn {

namespace cuda_detail {
/// Device copies of the series and the per-evaluation buffers; z is replicated on the host
/// (n copies) and uploaded as one batch.
template <class T>
class device_loss {
 public:
  device_loss(device_backend exec, batch_view<T const> series, std::span<double const> w,
              index_t length, index_t channels)
      : exec_(exec), n_(series.batch), length_(length), channels_(channels),
        max_length_(series.max_length), w_(w.begin(), w.end()),
        series_(exec, bytes<T>(n_ * max_length_ * channels_)),
        lengths_(exec, bytes<index_t>(n_)),
        zs_(exec, bytes<T>(n_ * length_ * channels_)),
        out_(exec, bytes<T>(n_)),
        gz_(exec, bytes<T>(n_ * length_ * channels_)),
        gx_(exec, bytes<T>(n_ * max_length_ * channels_)),
        upstream_(exec, bytes<T>(n_)) {
    std::vector<index_t> lengths(static_cast<std::size_t>(n_));
    for (index_t b = 0; b < n_; ++b) lengths[static_cast<std::size_t>(b)] = series.length(b);
    std::vector<T> up(w_.begin(), w_.end());
    upload(series_.get(), series.data, n_ * max_length_ * channels_);
    upload(lengths_.get(), lengths.data(), n_);
    upload(upstream_.get(), up.data(), n_);
    RESILIN_CUDA_TRY(cudaStreamSynchronize(exec_.stream));
  }

  /// L(z) and dL/dz (in grad) from one batched device call.
  template <class Measure>
  double operator()(Measure const& m, series_view<T const> z, std::span<double> grad) {
    auto const size = static_cast<std::size_t>(z.size());
    zs_host_.resize(size * static_cast<std::size_t>(n_));
    for (index_t k = 0; k < n_; ++k)
      std::copy(z.data, z.data + size, zs_host_.begin() + static_cast<std::ptrdiff_t>(size) * k);
    upload(zs_.get(), zs_host_.data(), n_ * length_ * channels_);
    batch_view<T const> const zb{static_cast<T const*>(zs_.get()), n_, length_, channels_, nullptr};
    batch_view<T const> const xb{static_cast<T const*>(series_.get()), n_, max_length_, channels_,
                                 static_cast<index_t const*>(lengths_.get())};
    values_and_grads(exec_, m, zb, xb, std::span<T>(static_cast<T*>(out_.get()), static_cast<std::size_t>(n_)),
                     batch_view<T>{static_cast<T*>(gz_.get()), n_, length_, channels_, nullptr},
                     batch_view<T>{static_cast<T*>(gx_.get()), n_, max_length_, channels_,
                                   static_cast<index_t const*>(lengths_.get())},
                     std::span<T const>(static_cast<T const*>(upstream_.get()), static_cast<std::size_t>(n_)));
    out_host_.resize(static_cast<std::size_t>(n_));
    gz_host_.resize(zs_host_.size());
    download(out_host_.data(), out_.get(), n_);
    download(gz_host_.data(), gz_.get(), n_ * length_ * channels_);
    RESILIN_CUDA_TRY(cudaStreamSynchronize(exec_.stream));
    double loss = 0;
    std::fill(grad.begin(), grad.end(), 0.0);
    for (index_t k = 0; k < n_; ++k) {
      loss += w_[static_cast<std::size_t>(k)] * static_cast<double>(out_host_[static_cast<std::size_t>(k)]);
      T const* g = gz_host_.data() + static_cast<std::size_t>(k) * size;
      for (std::size_t i = 0; i < size; ++i) grad[i] += static_cast<double>(g[i]);
    }
    return loss;
  }

 private:
  template <class U>
  static std::size_t bytes(index_t count) { return static_cast<std::size_t>(count) * sizeof(U); }
  template <class U>
  void upload(void* dst, U const* src, index_t count) {
    if (count > 0)
      RESILIN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes<U>(count), cudaMemcpyHostToDevice, exec_.stream));
  }
  template <class U>
  void download(U* dst, void const* src, index_t count) {
    if (count > 0)
      RESILIN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes<U>(count), cudaMemcpyDeviceToHost, exec_.stream));
  }

  device_backend exec_;
  index_t n_, length_, channels_, max_length_;
  std::vector<double> w_;
  ::resilin::cuda_detail::workspace series_, lengths_, zs_, out_, gz_, gx_, upstream_;
  std::vector<T> zs_host_, out_host_, gz_host_;
};
}  // namespace cuda_detail

/// lbfgs_barycenter() with the gradients computed on the GPU of `exec` (series in host
/// memory, as for the host version; the result is in host memory).
template <alignment_measure Measure, std::floating_point T>
barycenter_result<T> lbfgs_barycenter(device_backend exec, Measure const& m,
                                      batch_view<T const> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  auto const start = detail::prepare_lbfgs(m, series, weights, opt);
  cuda_detail::device_loss<T> loss(exec, series, std::span<double const>(start.w), start.length,
                                   series.channels);
  auto evaluate = [&](series_view<T const> z, std::span<double> grad) { return loss(m, z, grad); };
  return detail::minimise_lbfgs<T>(evaluate, start.z0, start.length, series.channels, opt);
}

/// The weighted loss and its gradient at z with one batched GPU call (as barycenter_loss_and_grad).
template <alignment_measure Measure, std::floating_point T>
double barycenter_loss_and_grad(device_backend exec, Measure const& m, series_view<T const> z,
                                batch_view<T const> series,
                                std::type_identity_t<std::span<T const>> weights,
                                std::span<double> grad) {
  auto const w = detail::check_loss_and_grad_call(z, series, weights, grad);
  cuda_detail::device_loss<T> loss(exec, series, std::span<double const>(w), z.length, z.channels);
  return loss(m, z, grad);
}

}  // namespace resilin::learn

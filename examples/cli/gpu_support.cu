// The tool's GPU path (CUDA builds): see gpu_support.hpp.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>
#include <cuda_runtime_api.h>
#include <resilin/backend/cuda/device_status.hpp>
#include <resilin/fcdtw/cuda/fcdtw.cuh>
#include <resilin/learn/cuda.cuh>
#include "fcdtw_pairs.hpp"
#include "gpu_support.hpp"

namespace resilin_cli::gpu {

namespace {

/// A device copy of host values for one call (cudaMalloc / cudaFree; the tool runs one call at
/// a time on the default stream, whose cudaMemcpy waits for the kernels before it).
template <class T>
class device_array {
 public:
  explicit device_array(std::size_t count) : count_(count) {
    if (count_ > 0) RESILIN_CUDA_TRY(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  device_array(T const* host, std::size_t count) : device_array(count) {
    if (count_ > 0) RESILIN_CUDA_TRY(cudaMemcpy(ptr_, host, count_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  device_array(device_array const&) = delete;
  device_array& operator=(device_array const&) = delete;
  ~device_array() {
    if (ptr_) (void)cudaFree(ptr_);
  }
  T* get() const noexcept { return ptr_; }
  void download(T* host) const {
    if (count_ > 0) RESILIN_CUDA_TRY(cudaMemcpy(host, ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  std::size_t count_;
  T* ptr_ = nullptr;
};

template <class T>
std::vector<index_t> lengths_of(resilin::batch_view<T const> b) {
  std::vector<index_t> lengths(static_cast<std::size_t>(b.batch));
  for (index_t k = 0; k < b.batch; ++k) lengths[static_cast<std::size_t>(k)] = b.length(k);
  return lengths;
}

/// A host batch (values and per-series lengths) copied to the device.
template <class T>
class device_batch {
 public:
  explicit device_batch(resilin::batch_view<T const> b)
      : shape_(b), values_(b.data, static_cast<std::size_t>(b.batch * b.max_length * b.channels)),
        lengths_(lengths_of(b).data(), static_cast<std::size_t>(b.batch)) {}
  resilin::batch_view<T const> view() const noexcept {
    return {values_.get(), shape_.batch, shape_.max_length, shape_.channels, lengths_.get()};
  }

 private:
  resilin::batch_view<T const> shape_;
  device_array<T> values_;
  device_array<index_t> lengths_;
};

/// Pairs per fit_distances call: their series, gradients, starting logits (--warp-init grid)
/// and workspace in about 256 MiB.
template <class T>
index_t pairs_per_call(resilin::fcdtw::fit_options const& o, resilin::batch_view<T const> a,
                       resilin::batch_view<T const> b, bool grads) {
  index_t const K = resilin::fcdtw::detail::segments_for(o, b.max_length);
  index_t const logits = o.init == resilin::fcdtw::warp_init::grid ? K : 0;
  auto const values = static_cast<std::size_t>((a.max_length * (grads ? 2 : 1) + b.max_length) * a.channels +
                                               resilin::fcdtw::detail::block_fit_size(K) + logits + 1);
  std::size_t const budget = std::size_t{256} << 20;
  return static_cast<index_t>(std::max<std::size_t>(1, budget / (values * sizeof(T))));
}

/// One layout for every call of a command, so that a pair's bits do not depend on the row
/// chunk it falls in: one thread per pair when the warps are short or a chunk of 16 rows of A
/// (the tool's smallest) holds 4096 pairs or more, else one block per pair (few long pairs).
template <class T>
resilin::fcdtw::pair_layout layout_for(resilin::fcdtw::fit_options const& o,
                                       resilin::batch_view<T const> b) {
  using resilin::fcdtw::pair_layout;
  bool const threads = resilin::fcdtw::fcdtw_cuda_detail::per_pair(
      16 * b.batch, resilin::fcdtw::detail::max_segments(o, b), pair_layout::automatic);
  return threads ? pair_layout::thread_per_pair : pair_layout::block_per_pair;
}

/// fit_distances' starting logits for o.init = grid: each pair's grid CDTW start (as the host's
/// fit_from_start computes it), on the host's threads, one row of K = max segments per pair.
template <class T>
std::vector<T> grid_starts(resilin::fcdtw::fit_options const& o, resilin::batch_view<T const> x,
                           resilin::batch_view<T const> y) {
  namespace fc = resilin::fcdtw;
  index_t const stride = fc::detail::segments_for(o, y.max_length);
  std::vector<T> r(static_cast<std::size_t>(x.batch * stride), T(0));
  resilin::parallel_for(x.batch, o.threads, [&](index_t k, int) {
    fc::grid_start_logits(o.map, fc::uniform_interpolant(x[k]), fc::uniform_interpolant(y[k]),
                          fc::detail::segments_for(o, y.length(k)), r.data() + k * stride);
  });
  return r;
}

/// Pairs [first, first + d.size()) of A x B fitted on the device: D into d, dD/dX into gx
/// (pairs, A.max_length, channels) when it is not null. A diverged fit (NaN) is refused as the
/// host refuses it (the pair named within this call's rows of A, as the host names it).
template <class T>
void fit_pairs(resilin::fcdtw::fit_options const& o, resilin::batch_view<T const> a,
               resilin::batch_view<T const> b, index_t first, std::vector<T>& d,
               std::vector<T>* gx) {
  auto const count = static_cast<index_t>(d.size());
  auto const xy = expand_pairs(a, b, first, first + count);
  device_batch<T> const dx(xy.x.view()), dy(xy.y.view());
  device_array<T> dd(d.size());
  std::unique_ptr<device_array<T>> dgx, logits;
  if (gx) dgx = std::make_unique<device_array<T>>(gx->size());
  if (o.init == resilin::fcdtw::warp_init::grid) {
    std::vector<T> const start = grid_starts(o, xy.x.view(), xy.y.view());
    logits = std::make_unique<device_array<T>>(start.data(), start.size());
  }
  resilin::fcdtw::fit_distances(resilin::device, o, dx.view(), dy.view(), dd.get(),
                                dgx ? dgx->get() : nullptr, nullptr, layout_for(o, b),
                                logits ? logits->get() : nullptr);
  dd.download(d.data());
  if (dgx) dgx->download(gx->data());
  for (index_t k = 0; k < count; ++k)
    resilin::detail::require(!std::isnan(d[static_cast<std::size_t>(k)]), "fast-cdtw: the Adam fit of pair (",
                             (first + k) / b.batch, ", ", (first + k) % b.batch,
                             ") diverged (non-finite logits after ", o.steps, " steps with lr = ", o.lr,
                             "): lower --lr");
}

}  // namespace

std::string device_name() {
  cudaDeviceProp prop{};
  if (!resilin::cuda_unavailable_reason().empty() || cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    return {};
  return prop.name;
}

std::string unavailable_reason() {
  std::string const why = resilin::cuda_unavailable_reason();
  return why.empty() ? why : "no CUDA device is available (" + why + ")";
}

template <class T>
void pairwise(measure_choice const& metric, resilin::batch_view<T const> a,
              resilin::batch_view<T const> b, resilin::matrix_view<T> out) {
  device_batch<T> const da(a), db(b);
  device_array<T> d(static_cast<std::size_t>(out.rows * out.cols));
  visit_measure<T>(metric, [&](auto const& m) {
    resilin::pairwise(resilin::device, m, da.view(), db.view(),
                      resilin::matrix_view<T>{d.get(), out.rows, out.cols});
  });
  d.download(out.data);
}

template <class T>
void pairwise_gradients(measure_choice const& metric, resilin::batch_view<T const> a,
                        resilin::batch_view<T const> b, resilin::batch_view<T> g) {
  device_batch<T> const da(a), db(b);
  device_array<T> dg(static_cast<std::size_t>(g.batch * g.max_length * g.channels));
  visit_measure<T>(metric, [&](auto const& m) {
    resilin::pairwise_grads(resilin::device, m, da.view(), db.view(),
                            resilin::batch_view<T>{dg.get(), g.batch, g.max_length, g.channels,
                                                   da.view().lengths});
  });
  dg.download(g.data);
}

template <class T>
void fcdtw_pairwise(fast_cdtw_metric const& metric, resilin::batch_view<T const> a,
                    resilin::batch_view<T const> b, resilin::matrix_view<T> out, int threads) {
  auto const o = fit_options_of(metric, threads);
  index_t const pairs = a.batch * b.batch, chunk = pairs_per_call(o, a, b, false);
  for (index_t first = 0; first < pairs; first += chunk) {
    std::vector<T> d(static_cast<std::size_t>(std::min(chunk, pairs - first)));
    fit_pairs<T>(o, a, b, first, d, nullptr);
    std::copy(d.begin(), d.end(), out.data + first);  // out is (|A|, |B|) row-major: pair order
  }
}

template <class T>
void fcdtw_pairwise_gradients(fast_cdtw_metric const& metric, resilin::batch_view<T const> a,
                              resilin::batch_view<T const> b, resilin::batch_view<T> g, int threads) {
  auto const o = fit_options_of(metric, threads);
  index_t const pairs = a.batch * b.batch, chunk = pairs_per_call(o, a, b, true);
  zero_gradients(g);
  for (index_t first = 0; first < pairs; first += chunk) {
    index_t const count = std::min(chunk, pairs - first);
    std::vector<T> d(static_cast<std::size_t>(count));
    std::vector<T> gx(static_cast<std::size_t>(count * a.max_length * a.channels));
    fit_pairs(o, a, b, first, d, &gx);
    add_row_gradients(resilin::batch_view<T const>{gx.data(), count, a.max_length, a.channels}, first,
                      b.batch, g);
  }
}

template <class T>
resilin::learn::barycenter_result<T> barycenter(measure_choice const& metric,
                                                resilin::batch_view<T const> series,
                                                resilin::learn::barycenter_options const& opt) {
  resilin::learn::barycenter_result<T> result;
  visit_measure<T>(metric, [&](auto const& m) {
    using M = std::remove_cvref_t<decltype(m)>;
    if constexpr (std::is_same_v<typename M::smoothing_type, resilin::soft_min<T>>) {
      result = resilin::learn::lbfgs_barycenter(resilin::device, m, series, {}, opt);
    } else {
      RESILIN_THROW(resilin::invalid_argument(
          "GPU L-BFGS barycentres are for the soft metrics (soft-dtw, soft-msm, soft-cdtw and their "
          "divergences)"));
    }
  });
  return result;
}

template <class T>
resilin::learn::barycenter_result<T> fcdtw_barycenter(fast_cdtw_metric const& metric,
                                                      resilin::batch_view<T const> series,
                                                      resilin::learn::barycenter_options const& opt) {
  return resilin::learn::fcdtw_barycenter(resilin::device, fit_options_of(metric, opt.threads), series,
                                          {}, opt);
}

RESILIN_CLI_GPU_INSTANTIATE(float)
RESILIN_CLI_GPU_INSTANTIATE(double)

}  // namespace resilin_cli::gpu

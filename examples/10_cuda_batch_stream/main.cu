// A soft-DTW loss over a ragged batch on the GPU, on a stream of the program's own: the series
// and their lengths go in, values and gradients come back, all ordered on the stream with one
// synchronisation at the end. Then the training-loop form: the expert layer with a workspace
// sized once and reused every step (no allocation in the loop), and the host backend's answer
// for the same batch as the check. Exits 77 (skipped, for CTest) without a CUDA device.
#include <cmath>
#include <cstdio>
#include <vector>
#include <resilin/cuda.cuh>

namespace r = resilin;

namespace {

/// Device memory for n values of T, freed on destruction (after the device is idle).
template <class T>
struct device_array {
  T* data = nullptr;
  explicit device_array(std::size_t n) {
    RESILIN_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(T)));
  }
  ~device_array() { (void)cudaFree(data); }
  device_array(device_array const&) = delete;
  device_array& operator=(device_array const&) = delete;
};

int run() {
  constexpr r::index_t batch = 8, max_len = 256, channels = 4;
  constexpr auto values_per_batch = static_cast<std::size_t>(batch * max_len * channels);
  std::vector<float> x(values_per_batch), y(values_per_batch);
  for (std::size_t k = 0; k < x.size(); ++k) {
    x[k] = std::sin(0.011f * static_cast<float>(k));
    y[k] = std::cos(0.017f * static_cast<float>(k));
  }
  std::vector<r::index_t> const len_x{256, 200, 128, 97, 64, 33, 16, 5};
  std::vector<r::index_t> const len_y{256, 256, 100, 128, 70, 40, 9, 12};
  auto const m = r::measures::soft_dtw(0.1f, r::band_spec::window(0.5));

  cudaStream_t stream = nullptr;
  RESILIN_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto const on = r::device.on(stream);
  device_array<float> dx(values_per_batch), dy(values_per_batch), dgx(values_per_batch),
      dgy(values_per_batch), dloss(batch);
  device_array<r::index_t> dlen_x(batch), dlen_y(batch);
  RESILIN_CUDA_TRY(cudaMemcpyAsync(dx.data, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  RESILIN_CUDA_TRY(cudaMemcpyAsync(dy.data, y.data(), y.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  RESILIN_CUDA_TRY(cudaMemcpyAsync(dlen_x.data, len_x.data(), batch * sizeof(r::index_t), cudaMemcpyHostToDevice, stream));
  RESILIN_CUDA_TRY(cudaMemcpyAsync(dlen_y.data, len_y.data(), batch * sizeof(r::index_t), cudaMemcpyHostToDevice, stream));
  r::batch_view<float const> const X{dx.data, batch, max_len, channels, dlen_x.data};
  r::batch_view<float const> const Y{dy.data, batch, max_len, channels, dlen_y.data};
  r::batch_view<float> const GX{dgx.data, batch, max_len, channels, dlen_x.data};
  r::batch_view<float> const GY{dgy.data, batch, max_len, channels, dlen_y.data};

  // The convenience layer: allocates its workspace on the stream, throws resilin::cuda_error.
  r::values_and_grads(on, m, X, Y, std::span<float>(dloss.data, batch), GX, GY);

  // The expert layer: size the workspace once, then every step only enqueues work.
  std::size_t bytes = 0;
  RESILIN_CUDA_TRY(r::expert::values_and_grads(nullptr, bytes, on, m, X, Y, dloss.data, GX, GY));
  device_array<unsigned char> workspace(bytes);
  for (int step = 0; step < 3; ++step)  // a training loop would update x between steps
    RESILIN_CUDA_TRY(r::expert::values_and_grads(workspace.data, bytes, on, m, X, Y, dloss.data, GX, GY));

  std::vector<float> loss(batch), gx(values_per_batch);
  RESILIN_CUDA_TRY(cudaMemcpyAsync(loss.data(), dloss.data, batch * sizeof(float), cudaMemcpyDeviceToHost, stream));
  RESILIN_CUDA_TRY(cudaMemcpyAsync(gx.data(), dgx.data, gx.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  RESILIN_CUDA_TRY(cudaStreamSynchronize(stream));
  RESILIN_CUDA_TRY(cudaStreamDestroy(stream));

  // The host backend on the same batch: the GPU agrees to float rounding.
  std::vector<float> host_loss(batch), host_gx(values_per_batch), host_gy(values_per_batch);
  r::values_and_grads(r::host, m, r::make_batch(x, batch, max_len, channels, len_x),
                      r::make_batch(y, batch, max_len, channels, len_y), std::span<float>(host_loss),
                      r::make_batch(host_gx, batch, max_len, channels),
                      r::make_batch(host_gy, batch, max_len, channels));
  std::printf("workspace of the expert call: %zu bytes\n", bytes);
  std::printf("pair   lengths     soft-DTW (GPU)   soft-DTW (host)   |dL/dx| (GPU)\n");
  bool agree = true;
  for (r::index_t b = 0; b < batch; ++b) {
    double norm = 0, diff = 0, scale = 0;
    for (r::index_t k = 0; k < max_len * channels; ++k) {
      auto const at = static_cast<std::size_t>(b * max_len * channels + k);
      norm += double(gx[at]) * gx[at];
      diff = std::fmax(diff, std::fabs(double(gx[at]) - host_gx[at]));
      scale = std::fmax(scale, std::fabs(double(host_gx[at])));
    }
    auto const u = static_cast<std::size_t>(b);
    double const value_error = std::fabs(double(loss[u]) - host_loss[u]) / std::fmax(1.0, std::fabs(host_loss[u]));
    agree = agree && value_error <= 1e-4 && diff <= 1e-4 * std::fmax(1.0, scale);
    std::printf("%4ld   %3ld x %3ld   %14.6f   %15.6f   %13.6f\n", static_cast<long>(b),
                static_cast<long>(len_x[u]), static_cast<long>(len_y[u]), loss[u], host_loss[u],
                std::sqrt(norm));
  }
  std::printf(agree ? "GPU and host agree\n" : "GPU and host DISAGREE\n");
  return agree ? 0 : 1;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  try {
    return run();
  } catch (r::cuda_error const& e) {
    std::fprintf(stderr, "CUDA error: %s\n", e.what());
  } catch (r::invalid_argument const& e) {
    std::fprintf(stderr, "invalid argument: %s\n", e.what());
  }
  return 1;
}

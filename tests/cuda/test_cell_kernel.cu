// The one cell function, instantiated in a kernel with every policy, must give the host's value.
#include <cmath>
#include <vector>
#include <support/catch.hpp>
#include <resilin/cuda.cuh>

namespace {
struct cell_inputs {
  double r_diag, r_up, r_left;
  double x, y;
};

template <class Smooth>
RESILIN_KERNEL void cell_kernel(Smooth smooth, cell_inputs const* in, double* out, int count) {
  int const k = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k >= count) return;
  resilin::dtw_cost<> const cost{};
  resilin::series_view<double const> const x{&in[k].x, 1, 1}, y{&in[k].y, 1, 1};
  resilin::step3<double> const c = cost.step(x, y, 0, 0);
  out[k] = resilin::cell_value(smooth, c, in[k].r_diag, in[k].r_up, in[k].r_left);
}

template <class Smooth>
std::vector<double> on_device(Smooth smooth, std::vector<cell_inputs> const& in) {
  cell_inputs* d_in = nullptr;
  double* d_out = nullptr;
  int const count = static_cast<int>(in.size());
  RESILIN_CUDA_TRY(cudaMalloc(&d_in, sizeof(cell_inputs) * in.size()));
  RESILIN_CUDA_TRY(cudaMalloc(&d_out, sizeof(double) * in.size()));
  RESILIN_CUDA_TRY(cudaMemcpy(d_in, in.data(), sizeof(cell_inputs) * in.size(), cudaMemcpyHostToDevice));
  RESILIN_LAUNCH((count + 127) / 128, 128, 0, nullptr, cell_kernel<Smooth>)(smooth, d_in, d_out, count);
  RESILIN_CUDA_TRY(cudaGetLastError());
  std::vector<double> out(in.size());
  RESILIN_CUDA_TRY(cudaMemcpy(out.data(), d_out, sizeof(double) * in.size(), cudaMemcpyDeviceToHost));
  RESILIN_CUDA_TRY(cudaFree(d_in));
  RESILIN_CUDA_TRY(cudaFree(d_out));
  return out;
}
}  // namespace

TEST_CASE("the cell function runs on the device and matches the host", "[cuda][cell]") {
  double const inf = INFINITY;
  std::vector<cell_inputs> const in{{0.0, 1.0, 2.0, 0.5, -0.5},
                                    {3.0, inf, 1.0, 2.0, 2.0},
                                    {inf, inf, inf, 1.0, 0.0},
                                    {1e4, 1e4 + 1e-3, 1e4 - 2e-3, 0.1, 0.2}};
  resilin::soft_min<double> const soft{0.01};
  resilin::hard_min const hard{};
  auto const soft_gpu = on_device(soft, in);
  auto const hard_gpu = on_device(hard, in);
  for (std::size_t k = 0; k < in.size(); ++k) {
    double const d = (in[k].x - in[k].y) * (in[k].x - in[k].y);
    resilin::step3<double> const c{d, d, d};
    double const soft_host = resilin::cell_value(soft, c, in[k].r_diag, in[k].r_up, in[k].r_left);
    double const hard_host = resilin::cell_value(hard, c, in[k].r_diag, in[k].r_up, in[k].r_left);
    if (std::isinf(soft_host)) CHECK(std::isinf(soft_gpu[k]));
    else CHECK(soft_gpu[k] == Approx(soft_host).epsilon(1e-12));
    CHECK(hard_gpu[k] == hard_host);
  }
}

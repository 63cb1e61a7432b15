// example-begin quickstart
// g++ -std=c++20 -O2 -march=native -Iinclude examples/00_soft_dtw_host/main.cpp -pthread
#include <cstdio>
#include <vector>
#include <resilin/resilin.hpp>

int main() {
  std::vector<double> x{0.3, -1.2, 0.7}, y{0.1, 0.5, -0.9, 1.1};

  // one-liners (univariate, squared Euclidean point cost)
  std::printf("soft-DTW(gamma=1) = %.12f\n", resilin::soft_dtw(x, y, 1.0));
  std::printf("DTW               = %.12f\n", resilin::dtw(x, y));

  // any measure: cost model x smoothing x band, value and gradient
  auto const m = resilin::measures::soft_dtw(0.1, resilin::band_spec::radius(2));
  std::vector<double> gx(x.size()), gy(y.size());
  double const v = resilin::value_and_grad(m, resilin::view(x), resilin::view(y),
                                           resilin::view(gx), resilin::view(gy));
  std::printf("banded soft-DTW(gamma=0.1) = %.12f, dS/dx = [%.6f %.6f %.6f]\n", v, gx[0], gx[1], gx[2]);

  // the divergence: non-negative, zero for equal series, any lengths
  auto const d = resilin::measures::soft_dtw_divergence(1.0);
  std::printf("divergence(x, y) = %.12f, divergence(x, x) = %.1g\n",
              resilin::value(d, resilin::view(x), resilin::view(y)),
              resilin::value(d, resilin::view(x), resilin::view(x)));
}
// example-end quickstart

// value_check: resilin's soft-DTW value and gradient for one pair, to compare with the peers.
// Not part of the CMake build; bench/peers/run.sh compiles it with
//   g++ -std=c++20 -O3 -march=native -I include bench/peers/value_check.cpp -pthread
// Usage: value_check FILE n m d gamma
// FILE holds x (n, d) then y (m, d), float64, native byte order, row-major (time, channel).
// Prints one line: value, then sum(dS/dx), sum(|dS/dx|), dS/dx[0,0], sum(|dS/dy|).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <resilin/resilin.hpp>

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: value_check FILE n m d gamma\n");
    return 2;
  }
  long const n = std::atol(argv[2]), m = std::atol(argv[3]), d = std::atol(argv[4]);
  double const gamma = std::atof(argv[5]);
  std::vector<double> x(static_cast<std::size_t>(n * d)), y(static_cast<std::size_t>(m * d));
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f || std::fread(x.data(), sizeof(double), x.size(), f) != x.size() ||
      std::fread(y.data(), sizeof(double), y.size(), f) != y.size()) {
    std::fprintf(stderr, "value_check: cannot read %s\n", argv[1]);
    return 1;
  }
  std::fclose(f);
  std::vector<double> gx(x.size()), gy(y.size());
  auto const measure = resilin::measures::soft_dtw(gamma);
  double const v = resilin::value_and_grad(measure, resilin::view(x, d), resilin::view(y, d),
                                           resilin::view(gx, d), resilin::view(gy, d));
  double const v_only = resilin::value(measure, resilin::view(x, d), resilin::view(y, d));
  double sx = 0, ax = 0, ay = 0;
  for (double g : gx) sx += g, ax += std::fabs(g);
  for (double g : gy) ay += std::fabs(g);
  std::printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", v, v_only, sx, ax, gx[0], ay);
}

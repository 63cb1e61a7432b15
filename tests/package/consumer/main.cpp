// A user's program: finds resilin with find_package and checks one published value.
#include <cmath>
#include <cstdio>
#include <vector>
#include <resilin/resilin.hpp>

int main() {
  std::vector<double> x{1, 2}, y{3, 2};
  double const v = resilin::soft_dtw(x, y, 0.01);  // tslearn issue #100: 4.0
  std::printf("soft_dtw = %.17g\n", v);
  return std::abs(v - 4.0) < 1e-9 ? 0 : 1;
}

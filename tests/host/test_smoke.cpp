#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>

TEST_CASE("soft-DTW reproduces the 3x4 example of spec 3.11", "[smoke]") {
  std::vector<double> x{0.3, -1.2, 0.7}, y{0.1, 0.5, -0.9, 1.1};
  CHECK(resilin::soft_dtw(x, y, 1.0) == Approx(-0.09013775759054357).epsilon(1e-13));
}

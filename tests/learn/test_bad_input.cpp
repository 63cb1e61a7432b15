// Bad input to the barycentre functions: a typed resilin::invalid_argument naming the argument
// and the value, for every method.
#include <cmath>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <support/catch.hpp>
#include <host/helpers.hpp>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;
using resilin_test::message_of;

namespace {
template <class Measure>
std::string error(Measure const& m, r::batch_view<double const> xs, std::vector<double> const& w,
                  rl::barycenter_options const& opt = {}) {
  return message_of<r::invalid_argument>([&] { rl::barycenter(m, xs, std::span<double const>(w), opt); });
}

bool has(std::string const& message, std::string const& part) {
  INFO(message);
  return message.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("learn: weights whose sum overflows, callbacks that throw, values that overflow", "[learn][bad_input]") {
  auto const x = resilin_test::random_values<double>(3 * 8, 2);
  r::batch_view<double const> const xs{x.data(), 3, 8, 1, nullptr};
  // three weights of 1e308: their sum was inf and every normalised weight 0 (a zero barycentre,
  // a loss of 0, undefined behaviour in the L1 DBA); now the same as uniform weights
  std::vector<double> const huge{1e308, 1e308, 1e308};
  auto const sd = r::measures::soft_dtw(1.0);
  CHECK(rl::barycenter_loss(sd, xs[0], xs, std::span<double const>(huge)) == Approx(rl::barycenter_loss(sd, xs[0], xs)));
  auto const dba_huge = rl::barycenter(r::measures::dtw<r::l1_distance>(), xs, std::span<double const>(huge));
  auto const dba_uniform = rl::barycenter(r::measures::dtw<r::l1_distance>(), xs);
  CHECK(dba_huge.values == dba_uniform.values);
  // a progress callback that throws cancels the fit: L-BFGS took it for a failed line search
  rl::barycenter_options cancel;
  cancel.progress = [](std::string_view, int, double) { throw std::runtime_error("user cancel"); };
  CHECK_THROWS_WITH(rl::barycenter(sd, xs, {}, cancel), "user cancel");
  rl::kmeans_options ko;
  ko.k = 2;
  ko.barycenter.progress = cancel.progress;
  CHECK_THROWS_WITH(rl::kmeans(sd, xs, ko), "user cancel");
  // what a callback throws reaches the caller as it is, also a std::length_error or
  // std::bad_alloc (they came back as resilin::runtime_error "out of memory")
  struct user_error : std::length_error {
    using std::length_error::length_error;
  };
  auto const caught = [](auto&& run) -> std::string {
    try {
      run();
    } catch (user_error const& e) {
      return std::string("user_error: ") + e.what();
    } catch (std::bad_alloc const&) {
      return "bad_alloc";
    } catch (std::exception const& e) {
      return std::string("other: ") + e.what();
    }
    return "nothing";
  };
  rl::barycenter_options stop;
  stop.progress = [](std::string_view, int, double) { throw user_error("stop"); };
  CHECK(caught([&] { rl::barycenter(sd, xs, {}, stop); }) == "user_error: stop");
  CHECK(caught([&] { rl::barycenter(r::measures::dtw(), xs, {}, stop); }) == "user_error: stop");
  CHECK(caught([&] { rl::barycenter(r::measures::msm(), xs, {}, stop); }) == "user_error: stop");
  rl::kmeans_options kstop;
  kstop.k = 2;
  kstop.progress = stop.progress;
  CHECK(caught([&] { rl::kmeans(r::measures::dtw(), xs, kstop); }) == "user_error: stop");
  kstop.progress = {};
  kstop.barycenter.progress = [](std::string_view, int, double) { throw std::bad_alloc(); };
  CHECK(caught([&] { rl::kmeans(sd, xs, kstop); }) == "bad_alloc");
  // squared costs that overflow: DBA and MBA refuse them as L-BFGS does (DBA ran 100 sweeps to
  // an inf loss)
  std::vector<double> big = x;
  for (double& v : big) v *= 1e155;
  r::batch_view<double const> const bs{big.data(), 3, 8, 1, nullptr};
  CHECK_THROWS_WITH(rl::barycenter(r::measures::dtw(), bs), Catch::Contains("loss at the initial barycentre is not finite"));
  CHECK_THROWS_WITH(rl::barycenter(sd, bs), Catch::Contains("loss at the initial barycentre is not finite"));
  // threads and z are checked under their own names
  std::vector<double> z(8, 0.0), g(8);
  CHECK_THROWS_WITH(rl::barycenter_loss(sd, r::series_view<double const>{z.data(), 8, 1}, xs, {}, -1),
                    Catch::Contains("threads must be >= 0"));
  z[3] = std::nan("");
  CHECK_THROWS_WITH(rl::barycenter_loss_and_grad(sd, r::series_view<double const>{z.data(), 8, 1}, xs, {},
                                                 std::span<double>(g)),
                    Catch::Contains("z contains a non-finite value"));
}

TEST_CASE("barycentres refuse bad weights, options and series", "[learn][bad_input]") {
  auto const x = resilin_test::random_values<double>(3 * 8, 1);
  r::batch_view<double const> const xs{x.data(), 3, 8, 1, nullptr};
  auto check_all = [&](auto const& m) {
    CHECK(has(error(m, xs, {1.0, 2.0}), "weights has 2 entries, expected one per series (3)"));
    CHECK(has(error(m, xs, {1.0, -2.0, 1.0}), "weights[1] must be finite and >= 0, got -2"));
    CHECK(has(error(m, xs, {1.0, std::nan(""), 1.0}), "weights[1] must be finite"));
    CHECK(has(error(m, xs, {0.0, 0.0, 0.0}), "weights must not all be zero"));
    rl::barycenter_options opt;
    opt.length = -3;
    CHECK(has(error(m, xs, {}, opt), "length must be >= 0"));
    opt.length = r::index_t{1} << 61;  // was std::length_error from a buffer of 2^61 values
    CHECK(has(error(m, xs, {}, opt), "length must be <= 2^40, got 2305843009213693952"));
    opt = {};
    opt.init = static_cast<rl::init_method>(7);
    CHECK(has(error(m, xs, {}, opt), "init must be euclidean_mean or medoid, got 7"));
    opt = {};
    opt.max_iter = -1;
    CHECK(has(error(m, xs, {}, opt), "max_iter must be >= 0, got -1"));
    opt = {};
    opt.tolerance = -1;
    CHECK(has(error(m, xs, {}, opt), "tolerance"));
    opt = {};
    opt.threads = -2;
    CHECK(has(error(m, xs, {}, opt), "threads must be >= 0"));
    r::batch_view<double const> const none{x.data(), 0, 8, 1, nullptr};
    CHECK(has(error(m, none, {}), "empty"));
    auto y = x;
    y[5] = std::numeric_limits<double>::infinity();
    CHECK(has(error(m, r::batch_view<double const>{y.data(), 3, 8, 1, nullptr}, {}), "non-finite"));
  };
  check_all(r::measures::soft_dtw(1.0));
  check_all(r::measures::soft_msm_divergence(1.0));
  {  // length x channels values: 2^40 x 2^24 wrapped around to 0 (a write out of bounds)
    r::index_t const channels = r::index_t{1} << 24;
    std::vector<float> const wide(static_cast<std::size_t>(channels), 1.0f);
    r::batch_view<float const> const one{wide.data(), 1, 1, channels, nullptr};
    rl::barycenter_options opt;
    opt.max_iter = 0;
    opt.length = rl::barycenter_options::max_length;
    CHECK(has(message_of<r::invalid_argument>([&] { rl::barycenter(r::measures::dtw(), one, {}, opt); }),
              "barycenter length times channels must be <= 2^40, got 1099511627776 x 16777216"));
  }
  check_all(r::measures::dtw());
  check_all(r::measures::msm());
  // gamma is validated before any work
  auto m = r::measures::soft_dtw(1.0);
  m.smooth.gamma = 0;
  CHECK(has(error(m, xs, {}), "gamma must be > 0"));
  CHECK_THROWS_AS(r::measures::soft_dtw(-1.0), r::invalid_argument);
  // the loss functions
  std::vector<double> z(8, 0.0), g(7);
  CHECK(has(message_of<r::invalid_argument>([&] {
              rl::barycenter_loss_and_grad(r::measures::soft_dtw(1.0), r::series_view<double const>{z.data(), 8, 1},
                                           xs, {}, std::span<double>(g));
            }), "grad has 7 entries"));
  CHECK(has(message_of<r::invalid_argument>([&] {
              rl::barycenter_loss(r::measures::dtw(), r::series_view<double const>{z.data(), 4, 2}, xs);
            }), "channels"));
}

TEST_CASE("learn: the barycentre losses take mutable views, as barycenter() does", "[learn][bad_input]") {
  // barycenter(m, batch_view<double>) compiled, barycenter_loss(m, z, batch_view<double>) did not
  auto x = resilin_test::random_values<double>(3 * 8, 5);
  auto z = resilin_test::random_values<double>(8, 6);
  r::batch_view<double> const xs{x.data(), 3, 8, 1, nullptr};
  r::series_view<double> const zs{z.data(), 8, 1};
  auto const sd = r::measures::soft_dtw(0.5);
  double const loss = rl::barycenter_loss(sd, r::as_const(zs), r::as_const(xs));
  CHECK(rl::barycenter_loss(sd, zs, xs) == loss);
  CHECK(rl::barycenter_loss(sd, r::as_const(zs), xs) == loss);
  CHECK(rl::barycenter_loss(sd, zs, r::as_const(xs)) == loss);
  std::vector<double> g(8), h(8);
  CHECK(rl::barycenter_loss_and_grad(sd, zs, xs, {}, std::span<double>(g)) == loss);
  rl::barycenter_loss_and_grad(sd, r::as_const(zs), r::as_const(xs), {}, std::span<double>(h));
  CHECK(g == h);
}

// FastCDTW on the GPU against the host closed form of objective.hpp, the host fit and the host
// Monte Carlo estimator (spec/cdtw.md B.4.4 #14): values and gradients on ragged batches, both layouts,
// float (1e-5 relative) and double (1e-12), coincident breakpoints (identity warp on the series
// grid); run-to-run bitwise determinism; the Monte Carlo kernel against the host estimate with
// the same draws; input validation. Exits 77 (skipped) without a GPU (support/gpu_main.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <limits>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <support/device_buffer.cuh>
#include <resilin/fcdtw/cuda/fcdtw.cuh>

namespace fc = resilin::fcdtw;
using resilin::index_t;

namespace {

using resilin_test::device_buffer;

/// A ragged batch of random pairs with random monotone warps (from logits), in host memory.
template <class T>
struct host_batch {
  index_t pairs, d, max_x, max_y, knots;
  std::vector<T> x, y, v;
  std::vector<index_t> len_x, len_y;

  host_batch(std::uint32_t seed, index_t pairs_, index_t d_, index_t max_x_, index_t max_y_,
             index_t knots_, bool identity = false)
      : pairs(pairs_), d(d_), max_x(max_x_), max_y(max_y_), knots(knots_) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> val(-1, 1), logit(-2, 2);
    x.assign(static_cast<std::size_t>(pairs * max_x * d), T(0));
    y.assign(static_cast<std::size_t>(pairs * max_y * d), T(0));
    v.resize(static_cast<std::size_t>(pairs * knots));
    for (index_t p = 0; p < pairs; ++p) {
      index_t const lx = identity ? max_x : 2 + static_cast<index_t>(gen() % static_cast<unsigned>(max_x - 1));
      index_t const ly = identity ? max_y : 2 + static_cast<index_t>(gen() % static_cast<unsigned>(max_y - 1));
      len_x.push_back(lx);
      len_y.push_back(ly);
      for (index_t k = 0; k < lx * d; ++k) x[static_cast<std::size_t>(p * max_x * d + k)] = static_cast<T>(val(gen));
      for (index_t k = 0; k < ly * d; ++k) y[static_cast<std::size_t>(p * max_y * d + k)] = static_cast<T>(val(gen));
      std::vector<T> r(static_cast<std::size_t>(knots - 1));
      for (T& a : r) a = identity ? T(0) : static_cast<T>(logit(gen));
      if (identity) fc::identity_warp(knots - 1, v.data() + p * knots);
      else fc::warp_from_logits(fc::warp_map::softplus_cumsum, r.data(), knots - 1, v.data() + p * knots);
    }
  }
  fc::interpolant<T> hx(index_t p) const {
    return fc::uniform_interpolant(resilin::series_view<T const>{x.data() + p * max_x * d, len_x[static_cast<std::size_t>(p)], d});
  }
  fc::interpolant<T> hy(index_t p) const {
    return fc::uniform_interpolant(resilin::series_view<T const>{y.data() + p * max_y * d, len_y[static_cast<std::size_t>(p)], d});
  }
  fc::warp_view<T> hv(index_t p) const { return fc::uniform_warp(v.data() + p * knots, knots - 1); }
};

/// The same batch in device memory.
template <class T>
struct device_batch {
  device_buffer<T> x, y, v;
  device_buffer<index_t> len_x, len_y;
  fc::pair_batch<T> view;
  explicit device_batch(host_batch<T> const& h)
      : x(h.x), y(h.y), v(h.v), len_x(h.len_x), len_y(h.len_y) {
    view.x = {x.ptr, h.pairs, h.max_x, h.d, len_x.ptr};
    view.y = {y.ptr, h.pairs, h.max_y, h.d, len_y.ptr};
    view.warps = v.ptr;
    view.knots = h.knots;
  }
};

template <class T>
T tolerance() { return sizeof(T) == 4 ? T(1e-5) : T(1e-12); }

/// |a - b| <= tol * max(1, max|b|) entrywise (gradients are compared at the scale of the vector).
template <class T>
void require_close(std::vector<T> const& got, std::vector<T> const& want, char const* what) {
  REQUIRE(got.size() == want.size());
  T scale = T(1);
  for (T w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(what << "[" << i << "] gpu " << got[i] << " host " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tolerance<T>() * scale * (sizeof(T) == 4 ? 10 : 1));
  }
}

template <class T>
void check_batch(host_batch<T> const& h, fc::pair_layout layout) {
  device_batch<T> const db(h);
  std::size_t const P = static_cast<std::size_t>(h.pairs);
  // Host closed form, pair by pair.
  std::vector<T> f(P), dv(P * static_cast<std::size_t>(h.knots), T(0)), dx(h.x.size(), T(0)), dy(h.y.size(), T(0));
  for (index_t p = 0; p < h.pairs; ++p) {
    fc::objective_grads<T> g{dv.data() + p * h.knots,
                             {dx.data() + p * h.max_x * h.d, h.len_x[static_cast<std::size_t>(p)], h.d},
                             {dy.data() + p * h.max_y * h.d, h.len_y[static_cast<std::size_t>(p)], h.d}};
    f[static_cast<std::size_t>(p)] = fc::value_and_grad(h.hx(p), h.hy(p), h.hv(p), g);
  }
  device_buffer<T> out(P), gdv(dv.size()), gdx(dx.size()), gdy(dy.size());
  fc::values(resilin::device, db.view, out.ptr, layout);
  require_close(out.host(), f, "F (values)");
  fc::values_and_grads(resilin::device, db.view, out.ptr, {gdv.ptr, gdx.ptr, gdy.ptr}, layout);
  auto const f1 = out.host(), dv1 = gdv.host(), dx1 = gdx.host(), dy1 = gdy.host();
  require_close(f1, f, "F");
  require_close(dv1, dv, "dF/dv");
  require_close(dx1, dx, "dF/dx");
  require_close(dy1, dy, "dF/dy");
  // Run to run: bitwise identical.
  fc::values_and_grads(resilin::device, db.view, out.ptr, {gdv.ptr, gdx.ptr, gdy.ptr}, layout);
  CHECK(std::memcmp(out.host().data(), f1.data(), P * sizeof(T)) == 0);
  CHECK(std::memcmp(gdv.host().data(), dv1.data(), dv.size() * sizeof(T)) == 0);
  CHECK(std::memcmp(gdx.host().data(), dx1.data(), dx.size() * sizeof(T)) == 0);
  CHECK(std::memcmp(gdy.host().data(), dy1.data(), dy.size() * sizeof(T)) == 0);
  // Only some gradients: dv alone, the same bits as with all three.
  device_buffer<T> only_dv(dv.size());
  fc::values_and_grads(resilin::device, db.view, out.ptr, {only_dv.ptr, nullptr, nullptr}, layout);
  CHECK(std::memcmp(only_dv.host().data(), dv1.data(), dv.size() * sizeof(T)) == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("GPU closed form equals the host closed form, both layouts", "[cuda][fcdtw]",
                   float, double) {
  // DYNAMIC_SECTION: a SECTION is known by its name and line, so a plain one inside the loop
  // would run in the first layout only
  for (auto layout : {fc::pair_layout::thread_per_pair, fc::pair_layout::block_per_pair}) {
    int const l = static_cast<int>(layout);
    DYNAMIC_SECTION("random ragged batch, layout " << l) {
      check_batch(host_batch<TestType>(7, 37, 2, 23, 31, 17), layout);
    }
    DYNAMIC_SECTION("long pairs, more segments than threads, layout " << l) {
      check_batch(host_batch<TestType>(8, 3, 3, 700, 900, 600), layout);
    }
    DYNAMIC_SECTION("coincident breakpoints: identity warp on the series grid, layout " << l) {
      check_batch(host_batch<TestType>(9, 5, 2, 40, 40, 40, true), layout);
    }
  }
  SECTION("automatic layout, many pairs") {
    check_batch(host_batch<TestType>(10, 5000, 1, 12, 10, 11), fc::pair_layout::automatic);
  }
}

TEMPLATE_TEST_CASE("GPU fit equals the host fit, values and series gradients, both layouts",
                   "[cuda][fcdtw][fit]", float, double) {
  // The host's Adam fit, one thread or one block per pair: after tens of steps the device's exp
  // and log1p (a few ulp from the host's), and the block's sums in another order, move the
  // result a little, hence looser bounds than the closed form's.
  using T = TestType;
  host_batch<T> const h(11, 9, 2, 20, 26, 2);  // ragged; its warps are not used
  device_batch<T> const db(h);
  auto const P = static_cast<std::size_t>(h.pairs);
  resilin::batch_view<T const> const X{h.x.data(), h.pairs, h.max_x, h.d, h.len_x.data()};
  resilin::batch_view<T const> const Y{h.y.data(), h.pairs, h.max_y, h.d, h.len_y.data()};
  T const tol = sizeof(T) == 4 ? T(1e-4) : T(1e-9);
  auto const close = [&](std::vector<T> const& got, std::vector<T> const& want, char const* what) {
    REQUIRE(got.size() == want.size());
    T scale = T(1);
    for (T w : want) scale = std::max(scale, std::abs(w));
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO(what << "[" << i << "] gpu " << got[i] << " host " << want[i]);
      CHECK(std::abs(got[i] - want[i]) <= tol * scale);
    }
  };
  for (auto layout : {fc::pair_layout::thread_per_pair, fc::pair_layout::block_per_pair})
  for (resilin::index_t segments : {resilin::index_t{0}, resilin::index_t{5}}) {
    INFO("layout " << static_cast<int>(layout) << " segments " << segments);
    fc::fit_options o;
    o.steps = 40;
    o.segments = segments;
    o.threads = 1;
    std::vector<T> want(P), wgx(h.x.size()), wgy(h.y.size());
    fc::distances_and_grads(o, X, Y, std::span<T>(want), resilin::batch_view<T>{wgx.data(), h.pairs, h.max_x, h.d, h.len_x.data()},
                            resilin::batch_view<T>{wgy.data(), h.pairs, h.max_y, h.d, h.len_y.data()});
    device_buffer<T> out(P), gx(wgx.size()), gy(wgy.size());
    fc::fit_distances(resilin::device, o, db.view.x, db.view.y, out.ptr, gx.ptr, gy.ptr, layout);
    auto const d1 = out.host();
    close(d1, want, "D");
    close(gx.host(), wgx, "dD/dx");
    close(gy.host(), wgy, "dD/dy");
    // values alone, and run to run: the same bits; the workspace is 8 K + 2 values per pair,
    // 2 K more for the block layout's segment slots
    fc::fit_distances(resilin::device, o, db.view.x, db.view.y, out.ptr, nullptr, nullptr, layout);
    CHECK(std::memcmp(out.host().data(), d1.data(), P * sizeof(T)) == 0);
    std::size_t bytes = 0;
    REQUIRE(fc::expert::fit_distances<T>(nullptr, bytes, resilin::device, o, db.view.x, db.view.y, out.ptr,
                                         nullptr, nullptr, layout) == cudaSuccess);
    resilin::index_t const K = segments > 0 ? segments : h.max_y - 1;
    bool const block = layout == fc::pair_layout::block_per_pair;
    CHECK(bytes == P * static_cast<std::size_t>((block ? 10 : 8) * K + 2) * sizeof(T));
  }
  {  // few long pairs, more segments than a block has threads: the block layout's case
    host_batch<T> const hl(12, 2, 1, 700, 600, 2);
    device_batch<T> const dl(hl);
    resilin::batch_view<T const> const XL{hl.x.data(), hl.pairs, hl.max_x, hl.d, hl.len_x.data()};
    resilin::batch_view<T const> const YL{hl.y.data(), hl.pairs, hl.max_y, hl.d, hl.len_y.data()};
    fc::fit_options o;
    o.steps = 20;
    std::vector<T> want(2), wgx(hl.x.size()), wgy(hl.y.size());
    fc::distances_and_grads(o, XL, YL, std::span<T>(want), resilin::batch_view<T>{wgx.data(), 2, hl.max_x, hl.d, hl.len_x.data()},
                            resilin::batch_view<T>{wgy.data(), 2, hl.max_y, hl.d, hl.len_y.data()});
    device_buffer<T> out(2), gx(wgx.size()), gy(wgy.size());
    fc::fit_distances(resilin::device, o, dl.view.x, dl.view.y, out.ptr, gx.ptr, gy.ptr);  // automatic: blocks
    INFO("long pairs, lengths " << hl.len_x[0] << " x " << hl.len_y[0] << ", " << hl.len_x[1] << " x " << hl.len_y[1]);
    close(out.host(), want, "D");
    close(gx.host(), wgx, "dD/dx");
    close(gy.host(), wgy, "dD/dy");
  }
  // a fit that diverges: the host refuses it, the GPU gives NaN, and NaN gradient rows (0 on
  // padding rows)
  if constexpr (sizeof(T) == 8)
  for (auto layout : {fc::pair_layout::thread_per_pair, fc::pair_layout::block_per_pair}) {
    INFO("layout " << static_cast<int>(layout));
    fc::fit_options o;
    o.steps = 60;
    o.lr = 1e308;
    std::vector<T> refused(P);
    CHECK_THROWS_AS(fc::distances(o, X, Y, std::span<T>(refused)), resilin::invalid_argument);
    device_buffer<T> out(P), gx(h.x.size());
    fc::fit_distances(resilin::device, o, db.view.x, db.view.y, out.ptr, gx.ptr, nullptr, layout);
    auto const got = out.host(), ggx = gx.host();
    int refusals = 0;
    for (resilin::index_t p = 0; p < h.pairs; ++p) {
      bool host_refused = false;
      try {
        fc::fit(X[p], Y[p], o);
      } catch (resilin::invalid_argument const&) {
        host_refused = true;
      }
      refusals += host_refused ? 1 : 0;
      INFO("pair " << p);
      CHECK(std::isnan(got[static_cast<std::size_t>(p)]) == host_refused);
      for (resilin::index_t k = 0; k < h.max_x * h.d; ++k) {
        T const g = ggx[static_cast<std::size_t>(p * h.max_x * h.d + k)];
        bool const row = k / h.d < h.len_x[static_cast<std::size_t>(p)];
        CHECK(std::isnan(g) == (host_refused && row));
        if (!row) CHECK(g == T(0));
      }
    }
    CHECK(refusals > 0);
  }
  device_buffer<T> out(P);
  fc::fit_options bad;
  bad.steps = -1;
  CHECK_THROWS_AS(fc::fit_distances(resilin::device, bad, db.view.x, db.view.y, out.ptr), resilin::invalid_argument);
  fc::fit_options grid;  // the grid CDTW start is the host's
  grid.init = fc::warp_init::grid;
  CHECK_THROWS_WITH(fc::fit_distances(resilin::device, grid, db.view.x, db.view.y, out.ptr),
                    Catch::Contains("init = grid"));
  auto short_y = db.view.y;
  short_y.batch = 2;
  CHECK_THROWS_AS(fc::fit_distances(resilin::device, fc::fit_options{}, db.view.x, short_y, out.ptr), resilin::invalid_argument);
}

TEMPLATE_TEST_CASE("GPU fit from given logits equals the host fit from initial_logits, both layouts",
                   "[cuda][fcdtw][fit]", float, double) {
  // Warm starts (the barycentre's rounds): each pair starts from its row of logits, which then
  // holds the final logits; entries beyond a pair's K stay as they were; o.init is not used.
  using T = TestType;
  host_batch<T> const h(21, 7, 2, 20, 26, 2);
  device_batch<T> const db(h);
  resilin::batch_view<T const> const X{h.x.data(), h.pairs, h.max_x, h.d, h.len_x.data()};
  resilin::batch_view<T const> const Y{h.y.data(), h.pairs, h.max_y, h.d, h.len_y.data()};
  T const tol = sizeof(T) == 4 ? T(1e-4) : T(1e-9);
  for (auto layout : {fc::pair_layout::thread_per_pair, fc::pair_layout::block_per_pair})
  for (auto init : {fc::warp_init::identity, fc::warp_init::grid}) {
    INFO("layout " << static_cast<int>(layout) << " init " << static_cast<int>(init));
    fc::fit_options o;
    o.steps = 30;
    o.init = init;
    index_t const stride = h.max_y - 1;
    std::mt19937 g(5);
    std::normal_distribution<double> nd(0.0, 0.5);
    std::vector<T> start(static_cast<std::size_t>(h.pairs * stride));
    for (auto& v : start) v = static_cast<T>(nd(g));
    device_buffer<T> logits(start), out(static_cast<std::size_t>(h.pairs));
    fc::fit_distances(resilin::device, o, db.view.x, db.view.y, out.ptr, nullptr, nullptr, layout,
                      logits.ptr);
    auto const d = out.host(), r = logits.host();
    for (index_t p = 0; p < h.pairs; ++p) {
      index_t const K = h.len_y[static_cast<std::size_t>(p)] - 1;
      T const* const row = start.data() + p * stride;
      auto const want = fc::fit(X[p], Y[p], o, std::span<T const>(row, static_cast<std::size_t>(K)));
      INFO("pair " << p << " K " << K);
      CHECK(std::abs(d[static_cast<std::size_t>(p)] - want.distance) <= tol * std::max(T(1), want.distance));
      for (index_t i = 0; i < stride; ++i) {
        T const got = r[static_cast<std::size_t>(p * stride + i)];
        if (i < K) CHECK(std::abs(got - want.logits[static_cast<std::size_t>(i)]) <= tol * T(10));
        else CHECK(got == row[i]);  // beyond this pair's segments: untouched
      }
    }
  }
}

TEST_CASE("GPU calls do not report an error an earlier call left pending", "[cuda][fcdtw]") {
  // the calls read their launches' status with cudaGetLastError: the caller's own cudaMalloc
  // that failed (and was handled) came back from fit_distances as cudaErrorMemoryAllocation,
  // with the right distances written
  using T = double;
  host_batch<T> const h(21, 3, 1, 9, 8, 5);
  device_batch<T> const db(h);
  auto const P = static_cast<std::size_t>(h.pairs);
  fc::fit_options o;
  o.steps = 5;
  o.threads = 1;
  for (auto layout : {fc::pair_layout::thread_per_pair, fc::pair_layout::block_per_pair}) {
    INFO("layout " << static_cast<int>(layout));
    device_buffer<T> want(P), got(P), gdv(h.v.size());
    fc::fit_distances(resilin::device, o, db.view.x, db.view.y, want.ptr, nullptr, nullptr, layout);
    std::size_t bytes = 0;
    REQUIRE(fc::expert::fit_distances<T>(nullptr, bytes, resilin::device, o, db.view.x, db.view.y, got.ptr,
                                         nullptr, nullptr, layout) == cudaSuccess);
    device_buffer<char> ws(std::max<std::size_t>(bytes, 1));
    resilin_test::leave_pending_error();
    CHECK(fc::expert::fit_distances<T>(ws.ptr, bytes, resilin::device, o, db.view.x, db.view.y, got.ptr,
                                       nullptr, nullptr, layout) == cudaSuccess);
    CHECK(std::memcmp(got.host().data(), want.host().data(), P * sizeof(T)) == 0);
    resilin_test::leave_pending_error();
    CHECK_NOTHROW(fc::values(resilin::device, db.view, got.ptr, layout));
    resilin_test::leave_pending_error();
    CHECK_NOTHROW(fc::values_and_grads(resilin::device, db.view, got.ptr, {gdv.ptr, nullptr, nullptr}, layout));
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("GPU workspace query: none for values, 2K per pair for block_per_pair dv", "[cuda][fcdtw]") {
  host_batch<double> const h(3, 4, 1, 10, 10, 9);
  device_batch<double> const db(h);
  std::size_t bytes = 123;
  CHECK(fc::expert::values<double>(nullptr, bytes, resilin::device, db.view, static_cast<double*>(nullptr),
                                   fc::pair_layout::block_per_pair) == cudaErrorInvalidValue);
  device_buffer<double> out(4), dv(4 * 9);
  CHECK(fc::expert::values<double>(nullptr, bytes, resilin::device, db.view, out.ptr,
                                   fc::pair_layout::block_per_pair) == cudaSuccess);
  CHECK(bytes == 0);
  CHECK(fc::expert::values_and_grads<double>(nullptr, bytes, resilin::device, db.view, out.ptr,
                                             {dv.ptr, nullptr, nullptr},
                                             fc::pair_layout::block_per_pair) == cudaSuccess);
  CHECK(bytes == 4 * 2 * 8 * sizeof(double));
  std::size_t small = bytes - 1;
  device_buffer<char> ws(bytes);
  CHECK(fc::expert::values_and_grads<double>(ws.ptr, small, resilin::device, db.view, out.ptr,
                                             {dv.ptr, nullptr, nullptr},
                                             fc::pair_layout::block_per_pair) == cudaErrorInvalidValue);
  // misaligned (typed slots would fault on a GPU): refused whatever its size
  device_buffer<char> roomy(bytes + 16);
  std::size_t enough = bytes;
  CHECK(fc::expert::values_and_grads<double>(roomy.ptr + 8, enough, resilin::device, db.view, out.ptr,
                                             {dv.ptr, nullptr, nullptr},
                                             fc::pair_layout::block_per_pair) == cudaErrorInvalidValue);
  CHECK(fc::expert::values_and_grads<double>(roomy.ptr + 16, enough, resilin::device, db.view, out.ptr,
                                             {dv.ptr, nullptr, nullptr},
                                             fc::pair_layout::block_per_pair) == cudaSuccess);
  RESILIN_CUDA_TRY(cudaDeviceSynchronize());
}

TEMPLATE_TEST_CASE("GPU Monte Carlo equals the host estimate with the same draws", "[cuda][fcdtw]",
                   float, double) {
  using T = TestType;
  host_batch<T> const h(21, 1, 2, 15, 19, 12);
  device_batch<T> const db(h);
  auto const x = fc::uniform_interpolant(resilin::series_view<T const>{db.x.ptr, h.len_x[0], 2});
  auto const y = fc::uniform_interpolant(resilin::series_view<T const>{db.y.ptr, h.len_y[0], 2});
  auto const warp = fc::pl_warp(db.v.ptr, h.knots);
  for (auto layout : {fc::sampling::plain, fc::sampling::stratified}) {
    fc::mc_options const opt{5000, 77, 3, layout};
    auto const host = fc::mc_value_and_grad(h.hx(0), h.hy(0), fc::pl_warp(h.v.data(), h.knots), opt);
    device_buffer<fc::mc_estimate<T>> est(1);
    device_buffer<T> gx(host.grad_x.size()), gy(host.grad_y.size()), gw(host.grad_warp.size());
    fc::mc_value_and_grad(resilin::device, fc::pl_signal<T>{x}, y, warp, opt, est.ptr,
                          fc::mc_gradients<T>{gx.ptr, gy.ptr, gw.ptr}, 64);
    auto const e = est.host()[0];
    CHECK(std::abs(e.value - host.value) <= tolerance<T>() * 10 * host.value);
    CHECK(std::abs(e.standard_error - host.standard_error) <= 1e-3 * host.standard_error);
    auto const gx1 = gx.host(), gy1 = gy.host(), gw1 = gw.host();
    require_close(gx1, host.grad_x, "MC dF/dx");
    require_close(gy1, host.grad_y, "MC dF/dy");
    require_close(gw1, host.grad_warp, "MC dF/dv");
    // Bitwise determinism, and the value-only path gives the same estimate.
    fc::mc_value_and_grad(resilin::device, fc::pl_signal<T>{x}, y, warp, opt, est.ptr,
                          fc::mc_gradients<T>{gx.ptr, gy.ptr, gw.ptr}, 64);
    auto const e2 = est.host()[0];
    CHECK(std::memcmp(&e2, &e, sizeof e) == 0);
    CHECK(std::memcmp(gx.host().data(), gx1.data(), gx1.size() * sizeof(T)) == 0);
    CHECK(std::memcmp(gw.host().data(), gw1.data(), gw1.size() * sizeof(T)) == 0);
    fc::mc_value_and_grad(resilin::device, fc::pl_signal<T>{x}, y, warp, opt, est.ptr, {}, 64);
    CHECK(est.host()[0].value == e.value);
  }
}

/// A smooth user warp usable on both sides: phi(t) = t + a sin(2 pi t) / (2 pi), |a| <= 1.
template <class T>
struct device_sine_warp {
  T a;
  RESILIN_HD index_t parameter_count() const noexcept { return 1; }
  RESILIN_HD fc::warp_sample<T> operator()(T t) const noexcept {
    T const w = T(2) * T(3.14159265358979323846);
    return {t + a * ::sin(w * t) / w, T(1) + a * ::cos(w * t)};
  }
  RESILIN_HD void pullback(T t, T bar_phi, T bar_slope, T* grad) const noexcept {
    T const w = T(2) * T(3.14159265358979323846);
    grad[0] += bar_phi * ::sin(w * t) / w + bar_slope * ::cos(w * t);
  }
};

TEST_CASE("GPU Monte Carlo with a user warp functor equals the host estimate", "[cuda][fcdtw]") {
  host_batch<double> const h(22, 1, 3, 30, 25, 2);
  device_batch<double> const db(h);
  auto const x = fc::uniform_interpolant(resilin::series_view<double const>{db.x.ptr, h.len_x[0], 3});
  auto const y = fc::uniform_interpolant(resilin::series_view<double const>{db.y.ptr, h.len_y[0], 3});
  device_sine_warp<double> const warp{0.7};
  fc::mc_options const opt{20000, 5, 0, fc::sampling::stratified};
  auto const host = fc::mc_value_and_grad(h.hx(0), h.hy(0), warp, opt);
  device_buffer<fc::mc_estimate<double>> est(1);
  device_buffer<double> gx(host.grad_x.size()), gw(1);
  fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x}, y, warp, opt, est.ptr,
                        fc::mc_gradients<double>{gx.ptr, nullptr, gw.ptr});
  auto const e = est.host()[0];
  CHECK(std::abs(e.value - host.value) <= 1e-12 * host.value);
  require_close(gx.host(), host.grad_x, "MC dF/dx (user warp)");
  require_close(gw.host(), host.grad_warp, "MC dF/da (user warp)");
}

TEST_CASE("GPU entry points reject bad input with resilin::invalid_argument", "[cuda][fcdtw]") {
  host_batch<double> const h(4, 3, 2, 10, 10, 9);
  device_batch<double> db(h);
  device_buffer<double> out(3);
  using E = resilin::invalid_argument;
  auto bad = db.view;
  bad.knots = 1;
  CHECK_THROWS_AS(fc::values(resilin::device, bad, out.ptr), E);
  bad = db.view;
  bad.y.channels = 1;
  CHECK_THROWS_AS(fc::values(resilin::device, bad, out.ptr), E);
  bad = db.view;
  bad.y.batch = 2;
  CHECK_THROWS_AS(fc::values(resilin::device, bad, out.ptr), E);
  // integers cast to the enums, refused as on the host (the device ran them as L1, stratified)
  bad = db.view;
  bad.norm = static_cast<fc::path_norm>(4);
  CHECK_THROWS_WITH(fc::values(resilin::device, bad, out.ptr), Catch::Contains("norm must be l2 or l1, got 4"));
  {
    auto const yi = fc::uniform_interpolant(resilin::series_view<double const>{db.y.ptr, 10, 2});
    auto const xi = fc::uniform_interpolant(resilin::series_view<double const>{db.x.ptr, 10, 2});
    device_buffer<fc::mc_estimate<double>> one(1);
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{xi}, yi, fc::pl_warp(db.v.ptr, 9),
                                            {100, 1, 0, static_cast<fc::sampling>(3)}, one.ptr),
                      Catch::Contains("layout must be plain or stratified, got 3"));
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{xi}, yi, fc::pl_warp(db.v.ptr, 9),
                                            {100, 1, 0, fc::sampling::plain, static_cast<fc::path_norm>(4)}, one.ptr),
                      Catch::Contains("norm must be l2 or l1, got 4"));
  }
  if (!resilin_test::pageable_memory_access()) {  // host memory (kernels may read it on HMM, ATS)
    std::vector<double> host_out(3);
    CHECK_THROWS_AS(fc::values(resilin::device, db.view, host_out.data()), E);
    bad = db.view;
    bad.x.data = h.x.data();
    CHECK_THROWS_AS(fc::values(resilin::device, bad, out.ptr), E);
    std::vector<double> host_logits(3 * 9);
    CHECK_THROWS_WITH(fc::fit_distances(resilin::device, fc::fit_options{}, db.view.x, db.view.y, out.ptr,
                                        nullptr, nullptr, fc::pair_layout::automatic, host_logits.data()),
                      Catch::Contains("logits is not device memory"));
  }
  // the fit's outputs apart from the series and each other: logits over out, gx over Y
  device_buffer<double> logits(3 * 9), gx(h.x.size());
  CHECK_THROWS_WITH(fc::fit_distances(resilin::device, fc::fit_options{}, db.view.x, db.view.y, logits.ptr,
                                      nullptr, nullptr, fc::pair_layout::automatic, logits.ptr),
                    Catch::Contains("logits overlaps out"));
  CHECK_THROWS_WITH(fc::fit_distances(resilin::device, fc::fit_options{}, db.view.x, db.view.y, out.ptr,
                                      db.y.ptr),
                    Catch::Contains("gx overlaps the input Y"));
  // the closed form's outputs too: dx over x gave F 0.3134 for 0.8298 without an error
  CHECK_THROWS_WITH(fc::values_and_grads(resilin::device, db.view, out.ptr, {nullptr, db.x.ptr, nullptr}),
                    Catch::Contains("dx overlaps the input x"));
  CHECK_THROWS_WITH(fc::values_and_grads(resilin::device, db.view, out.ptr, {gx.ptr, gx.ptr, nullptr}),
                    Catch::Contains("overlaps"));
  CHECK_THROWS_WITH(fc::values(resilin::device, db.view, db.v.ptr), Catch::Contains("out overlaps the input warps"));
  // an integer cast to the layout ran the block layout
  CHECK_THROWS_WITH(fc::values(resilin::device, db.view, out.ptr, static_cast<fc::pair_layout>(7)),
                    Catch::Contains("pair_layout must be automatic, thread_per_pair or block_per_pair, got 7"));
  CHECK_THROWS_WITH(fc::fit_distances(resilin::device, fc::fit_options{}, db.view.x, db.view.y, out.ptr, nullptr,
                                      nullptr, static_cast<fc::pair_layout>(7)),
                    Catch::Contains("pair_layout must be"));
  {  // Monte Carlo shapes the host refuses: the device read index -1 (NaN) or past the knots
    auto const yi = fc::uniform_interpolant(resilin::series_view<double const>{db.y.ptr, 10, 2});
    auto const xi = fc::uniform_interpolant(resilin::series_view<double const>{db.x.ptr, 10, 2});
    fc::mc_options const mc{100, 1, 0, fc::sampling::plain};
    device_buffer<fc::mc_estimate<double>> one(1);
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{xi}, yi, fc::pl_warp(db.v.ptr, 1), mc, one.ptr),
                      Catch::Contains("warp: a piecewise-linear warp needs >= 2 knots, got 1"));
    auto const x1 = fc::uniform_interpolant(resilin::series_view<double const>{db.x.ptr, 1, 2});
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x1}, yi, fc::pl_warp(db.v.ptr, 9), mc, one.ptr),
                      Catch::Contains("x: a piecewise-linear series needs >= 2 samples, got 1"));
    auto x_knots = xi;
    x_knots.grid.size = 15;
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x_knots}, yi, fc::pl_warp(db.v.ptr, 9), mc, one.ptr),
                      Catch::Contains("x: the knot grid has 15 knots for 10 samples"));
    auto const x0 = fc::uniform_interpolant(resilin::series_view<double const>{db.x.ptr, 10, 0});
    auto const y0 = fc::uniform_interpolant(resilin::series_view<double const>{db.y.ptr, 10, 0});
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x0}, y0, fc::pl_warp(db.v.ptr, 9), mc, one.ptr),
                      Catch::Contains("y: channels must be >= 1, got 0"));
    // samples_per_thread near the largest index: (samples + per - 1) / per overflowed to 0 chunks
    CHECK_NOTHROW(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{xi}, yi, fc::pl_warp(db.v.ptr, 9), mc,
                                        one.ptr, {}, std::numeric_limits<resilin::index_t>::max()));
  }
  fc::fit_options grid;  // a grid start needs its logits from the host: accepted with logits
  grid.init = fc::warp_init::grid;
  CHECK_NOTHROW(fc::fit_distances(resilin::device, grid, db.view.x, db.view.y, out.ptr, gx.ptr, nullptr,
                                  fc::pair_layout::automatic, logits.ptr));
  auto const y = fc::uniform_interpolant(resilin::series_view<double const>{db.y.ptr, 10, 2});
  auto const x = fc::uniform_interpolant(resilin::series_view<double const>{db.x.ptr, 10, 2});
  device_buffer<fc::mc_estimate<double>> est(1);
  CHECK_THROWS_AS(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x}, y,
                                        fc::pl_warp(db.v.ptr, 9), {0, 1, 0, fc::sampling::plain},
                                        est.ptr),
                  E);
  if (!resilin_test::pageable_memory_access()) {  // the library's own signal and warp on host data
    fc::mc_options const mc{100, 1, 0, fc::sampling::plain};
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{h.hx(0)}, y,
                                            fc::pl_warp(db.v.ptr, 9), mc, est.ptr),
                      Catch::Contains("x data is not device memory"));
    CHECK_THROWS_WITH(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x}, y,
                                            fc::pl_warp(h.v.data(), 9), mc, est.ptr),
                      Catch::Contains("warp values is not device memory"));
    CHECK_NOTHROW(fc::mc_value_and_grad(resilin::device, fc::pl_signal<double>{x}, y,
                                        fc::pl_warp(db.v.ptr, 9), mc, est.ptr));
  }
}

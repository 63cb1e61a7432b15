#pragma once
// The unbiased Monte Carlo estimator of the FastCDTW objective for smooth warps
// (spec/cdtw.md B.3.7):
//
//   F(phi; x, y) = integral_0^1 g(t) dt,   g(t) = |x(phi(t)) - y(t)|^2 sqrt(1 + phi'(t)^2)
//                                          (or 1 + |phi'(t)| with path_norm::l1, B.4.1),
//   F_hat = (1/N) sum_n g(t_n),   t_n ~ U[0,1) (plain) or t_n = (n + U_n) / N (stratified).
//
// Both are unbiased (the density of t_n is 1 on [0,1), stratum by stratum for the stratified
// draw), and so are the gradients (1/N) sum_n dg(t_n)/dtheta, because the sampling law does not
// depend on any parameter. Var F_hat = (int g^2 - F^2) / N for plain draws; one draw per
// stratum never does worse and gives O(N^-3) for Lipschitz g.
//
// x (the warped series) is any `signal_function`: the PL interpolant of data (pl_signal) or a
// user functor (an INR, a Fourier series...). y (the reference axis) is PL data. The warp is any
// `warp_function`: it returns phi(t) and phi'(t) and pulls the two adjoints back onto its
// parameters. Draws come from counter_rng at (seed, stream, n), so a result depends only on
// the options, never on the chunking, the thread count or the machine.
//
// Layers: mc_integrand (one draw) and mc_accumulate (a chunk of draws) are RESILIN_HD, with no
// allocation and no exceptions (the CUDA kernels call them); mc_value / mc_value_and_grad are
// the host convenience layer, which validates and throws resilin::invalid_argument.
#include <concepts>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/rng.hpp>
#include <resilin/fcdtw/warp.hpp>

namespace resilin::fcdtw {

/// phi(t) and phi'(t).
template <class T>
struct warp_sample {
  T phi;
  T slope;
};

/// A warp t -> phi(t) on [0, 1] with its derivative and the pullback of its parameters theta.
/// Semantics (the estimator relies on them; the compiler checks only the signatures):
///   w.parameter_count()              the number of parameters, >= 0;
///   w(t)                             {phi(t), phi'(t)}; phi maps [0,1] into [0,1], monotone;
///   w.pullback(t, bar_phi, bar_slope, grad)
///                                    grad[k] += bar_phi * dphi(t)/dtheta_k
///                                             + bar_slope * dphi'(t)/dtheta_k, k < count.
/// For device use every member is RESILIN_HD and the type is trivially copyable. A warp may add
/// a host `validate()` that throws resilin::invalid_argument; the host layer calls it.
template <class W, class T>
concept warp_function =
    std::floating_point<T> && requires(W const& w, T t, T bar, T* grad) {
      { w.parameter_count() } -> std::convertible_to<index_t>;
      { w(t) } -> std::same_as<warp_sample<T>>;
      w.pullback(t, bar, bar, grad);
    };

/// A vector-valued signal u -> x(u) in R^channels on [0, 1] with parameters theta:
///   x.channels(), x.parameter_count();
///   x.evaluate(u, value, slope)      value[c] = x_c(u), slope[c] = dx_c/du(u), c < channels;
///   x.pullback(u, bar, grad)         grad[k] += sum_c bar[c] * dx_c(u)/dtheta_k.
/// Same device rules and optional validate() as warp_function.
template <class X, class T>
concept signal_function =
    std::floating_point<T> && requires(X const& x, T u, T* out, T const* bar, T* grad) {
      { x.channels() } -> std::convertible_to<index_t>;
      { x.parameter_count() } -> std::convertible_to<index_t>;
      x.evaluate(u, out, out);
      x.pullback(u, bar, grad);
    };

/// The PL interpolant of data as a signal_function; its parameters are the sample values,
/// row-major (length, channels), so the parameter gradient is dF/dx.
template <class T>
struct pl_signal {
  interpolant<T> x;

  RESILIN_HD index_t channels() const noexcept { return x.channels(); }
  RESILIN_HD index_t parameter_count() const noexcept { return x.values.size(); }
  RESILIN_HD void evaluate(T u, T* value, T* slope) const noexcept {
    interpolation_point<T> const p = x.locate(u);
    for (index_t c = 0; c < x.channels(); ++c) {
      value[c] = x.at(p, c);
      slope[c] = x.slope(p.segment, c);
    }
  }
  RESILIN_HD void pullback(T u, T const* bar, T* grad) const noexcept {
    x.scatter(u, bar, series_view<T>{grad, x.length(), x.channels()});
  }
  void validate() const { detail::check_interpolant(x, "x"); }
};

/// A PL warp (warp.hpp's warp_view) as a warp_function; its parameters are the K + 1 knot
/// values: dphi/dv_j = 1 - w, dphi/dv_{j+1} = w, dphi'/dv_{j+1} = -dphi'/dv_j = 1/h (B.3.7).
template <class T>
struct pl_warp_function {
  warp_view<T> phi;

  RESILIN_HD index_t parameter_count() const noexcept { return phi.grid.size; }
  RESILIN_HD warp_sample<T> operator()(T t) const noexcept {
    warp_point<T> const p = evaluate(phi, t);
    return {p.phi, p.slope};
  }
  RESILIN_HD void pullback(T t, T bar_phi, T bar_slope, T* grad) const noexcept {
    evaluate_backward(phi, evaluate(phi, t), bar_phi, bar_slope, grad);
  }
  /// Throws unless the grid is valid and the values are non-decreasing inside [0, 1].
  void validate() const {
    using resilin::detail::require;
    detail::check_interpolant(interpolant<T>{{phi.values, phi.grid.size, 1}, phi.grid}, "warp");
    T const* v = phi.values;
    for (index_t j = 0; j < phi.grid.size; ++j) {
      require(v[j] >= T(0) && v[j] <= T(1), "warp: knot value ", j, " must lie in [0, 1], got ",
              v[j]);
      if (j > 0)
        require(v[j - 1] <= v[j], "warp: knot values must be non-decreasing, got v[", j - 1,
                "] = ", v[j - 1], " > v[", j, "] = ", v[j]);
    }
  }
};

/// The PL warp with `knots` values on the uniform grid linspace(0, 1, knots).
template <class T>
RESILIN_HD constexpr pl_warp_function<T> pl_warp(T const* values, index_t knots) noexcept {
  return {uniform_warp(values, knots - 1)};
}
/// The same for any warp_view (explicit grids included).
template <class T>
RESILIN_HD constexpr pl_warp_function<T> pl_warp(warp_view<T> phi) noexcept {
  return {phi};
}

/// How the draw times are laid out.
enum class sampling {
  plain,       // t_n = U_n, independent
  stratified,  // t_n = (n + U_n) / N: one draw in each [n/N, (n+1)/N)
};

/// N, the random stream and the layout of one estimate. The estimate is a pure function of
/// these: equal options give bitwise equal results; a fresh seed (or stream) gives fresh draws.
struct mc_options {
  index_t samples = 200;       // N >= 1 (the repository uses 200 for barycentres, 800 for 1-NN)
  std::uint64_t seed = 0;      // the counter_rng key
  std::uint64_t stream = 0;    // e.g. the pair index: independent draws per pair
  sampling layout = sampling::plain;
  path_norm norm = path_norm::l2;  // l1: s = 1 + |phi'| instead of sqrt(1 + phi'^2)
};

/// Where the gradients go; nullptr skips one. They are accumulated (+=), scaled by 1/N:
/// x (x.parameter_count()), y (y.length, y.channels) row-major, warp (warp.parameter_count()).
template <class T>
struct mc_gradients {
  T* x = nullptr;
  T* y = nullptr;
  T* warp = nullptr;
  RESILIN_HD bool any() const noexcept { return x || y || warp; }
};

/// The n-th draw time of an estimate (n < opt.samples). Stratified times are computed in T: for
/// float, N beyond 2^24 loses the low bits of the stratum index.
template <class T>
RESILIN_HD T mc_time(counter_rng rng, mc_options const& opt, index_t n) noexcept {
  T const u = rng.uniform<T>(opt.stream, static_cast<std::uint64_t>(n));
  if (opt.layout == sampling::plain) return u;
  return (static_cast<T>(n) + u) / static_cast<T>(opt.samples);
}

/// The number of T values of scratch mc_integrand needs: x(u) and x'(u).
RESILIN_HD constexpr index_t mc_scratch_size(index_t channels) noexcept { return 2 * channels; }

/// g(t) for one draw; when `grads.any()`, adds weight * dg/dtheta to the gradients:
///   dg/dx(u) = 2 s d, dg/dy(t) = -2 s d, dg/dphi = 2 s <d, x'(phi)>, dg/dphi' = |d|^2 phi'/s
/// with d = x(phi(t)) - y(t), s = sqrt(1 + phi'^2) (path_norm::l2; for l1 s = 1 + |phi'| and
/// dg/dphi' = |d|^2 sign(phi')). `scratch` holds mc_scratch_size(channels).
template <class T, class X, class W>
  requires signal_function<X, T> && warp_function<W, T>
RESILIN_HD T mc_integrand(X const& x, interpolant<T> const& y, W const& warp, T t, T weight,
                          T* scratch, mc_gradients<T> const& grads,
                          path_norm norm = path_norm::l2) noexcept {
  index_t const d = y.channels();
  T* const diff = scratch;     // x(phi) first, then d, then the adjoint of x(phi)
  T* const slope = scratch + d;
  warp_sample<T> const w = warp(t);
  x.evaluate(w.phi, diff, slope);
  interpolation_point<T> const at_t = y.locate(t);
  T norm2 = 0, along = 0;  // |d|^2 and <d, x'(phi)>
  for (index_t c = 0; c < d; ++c) {
    T const dc = diff[c] - y.at(at_t, c);
    diff[c] = dc;
    norm2 += dc * dc;
    along += dc * slope[c];
  }
  bool const l2 = norm == path_norm::l2;
  T const s = l2 ? math::sqrt(T(1) + w.slope * w.slope) : T(1) + math::abs(w.slope);
  // d s / d phi'; for l1 the derivative of 1 + |phi'| on the monotone side at phi' = 0, as the
  // closed form takes it (sign(0) = 0 biased the warp gradient on flat segments)
  T const ds = l2 ? w.slope / s : (w.slope < T(0) ? T(-1) : T(1));
  if (grads.x || grads.y) {
    T const scale = T(2) * weight * s;
    for (index_t c = 0; c < d; ++c) diff[c] *= scale;
    if (grads.x) x.pullback(w.phi, diff, grads.x);
    if (grads.y) y.scatter(at_t, diff, series_view<T>{grads.y, y.length(), d}, T(-1));
  }
  if (grads.warp)
    warp.pullback(t, T(2) * weight * s * along, weight * norm2 * ds, grads.warp);
  return norm2 * s;
}

/// Draws [first, last) of one estimate: the sum of g in draw order, and the sum of squared
/// deviations from their own mean (Welford's update: the one-pass sum of g^2 minus N mean^2
/// cancelled to a standard error of 0 in float where g's spread is small beside its mean).
template <class T>
struct mc_sums {
  T value = 0;
  T centred = 0;
  index_t count = 0;
};

/// The sums of draws a then b (b's draws after a's; Chan, Golub and LeVeque's update): the
/// value added in that order, as a plain sum of all draws would be, and the deviations about
/// the merged mean.
template <class T>
RESILIN_HD mc_sums<T> merged(mc_sums<T> const& a, mc_sums<T> const& b) noexcept {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  index_t const n = a.count + b.count;
  T const delta = b.value / static_cast<T>(b.count) - a.value / static_cast<T>(a.count);
  T const weight = static_cast<T>(a.count) * (static_cast<T>(b.count) / static_cast<T>(n));
  return {a.value + b.value, a.centred + b.centred + delta * delta * weight, n};
}

/// Draws [first, last) of the estimate described by opt: returns their mc_sums and adds
/// (1/N) * dg/dtheta of each draw to grads. Chunks of one estimate may run anywhere in any
/// order; merging their sums in chunk order (merged()) gives F_hat and its standard error.
template <class T, class X, class W>
  requires signal_function<X, T> && warp_function<W, T>
RESILIN_HD mc_sums<T> mc_accumulate(X const& x, interpolant<T> const& y, W const& warp,
                                    mc_options const& opt, index_t first, index_t last,
                                    T* scratch, mc_gradients<T> const& grads) noexcept {
  counter_rng const rng{opt.seed};
  T const weight = T(1) / static_cast<T>(opt.samples);
  mc_sums<T> sums{};
  T mean = T(0);
  for (index_t n = first; n < last; ++n) {
    T const g = mc_integrand(x, y, warp, mc_time<T>(rng, opt, n), weight, scratch, grads, opt.norm);
    sums.value += g;
    ++sums.count;
    T const delta = g - mean;
    mean += delta / static_cast<T>(sums.count);
    sums.centred += delta * (g - mean);
  }
  return sums;
}

/// Draws per chunk of the host layer (the CUDA kernel's default too): partial sums of this
/// size keep float accumulation error near sqrt(N) ulps instead of N.
inline constexpr index_t mc_chunk_samples = 256;

/// F_hat and its standard error sqrt(sample variance of g / N): exact in expectation for plain
/// draws, an upper bound in expectation for stratified ones (+inf for N = 1).
template <class T>
struct mc_estimate {
  T value = 0;
  T standard_error = 0;
};

/// F_hat, its standard error and the gradients (all scaled by 1/N, never accumulated across
/// calls): grad_x (x.parameter_count(); for PL x the (length, channels) values), grad_y
/// (y.length, y.channels), grad_warp (warp.parameter_count()).
template <class T>
struct mc_estimate_and_grad {
  T value = 0;
  T standard_error = 0;
  std::vector<T> grad_x, grad_y, grad_warp;
};

namespace detail {

/// F_hat = sum / N and its standard error from the sums of all N draws.
template <class T>
RESILIN_HD mc_estimate<T> finish(mc_sums<T> const& s, index_t n) noexcept {
  T const mean = s.value / static_cast<T>(n);
  if (n < 2) return {mean, math::infinity<T>()};
  return {mean, math::sqrt(s.centred / static_cast<T>(n - 1) / static_cast<T>(n))};
}

/// The inputs are checked, the functors are the user's: a non-finite estimate means one of them
/// returned NaN or inf (it was returned as the estimate).
template <class T>
mc_estimate<T> checked(mc_estimate<T> e, char const* what) {
  resilin::detail::require(std::isfinite(e.value), what, ": the estimate is not finite (", e.value,
                           "): does the signal or the warp functor return NaN or inf?");
  return e;
}

/// The same for a gradient: the estimate can be finite while a pullback returns NaN or inf.
template <class T>
void check_gradient(std::vector<T> const& g, char const* what, char const* name, char const* functor) {
  for (std::size_t k = 0; k < g.size(); ++k)
    resilin::detail::require(std::isfinite(g[k]), what, ": ", name, "[", k, "] is not finite (", g[k],
                             "): does the ", functor, " functor's pullback return NaN or inf?");
}

template <class F>
void validate_if_possible(F const& f) {
  if constexpr (requires { f.validate(); }) f.validate();
}

/// "" when the options hold (N >= 1, a known layout and norm), else why not: the host's and the
/// device's checks both.
inline std::string mc_options_error(mc_options const& opt) {
  using resilin::detail::message;
  if (opt.samples < 1) return message("samples must be >= 1, got ", opt.samples);
  if (opt.layout != sampling::plain && opt.layout != sampling::stratified)
    return message("layout must be plain or stratified, got ", static_cast<int>(opt.layout));
  return option_error(opt.norm);
}

template <class T, class X, class W>
void check_mc(X const& x, interpolant<T> const& y, W const& warp, mc_options const& opt) {
  using resilin::detail::require;
  require_no_error(mc_options_error(opt));
  check_interpolant(y, "y");
  require(static_cast<index_t>(x.channels()) == y.channels(), "channel mismatch: x has ",
          static_cast<index_t>(x.channels()), ", y has ", y.channels());
  // the gradients are sized by them: beyond 2^40 no memory holds them (std::length_error)
  constexpr index_t most = index_t{1} << 40;
  index_t const px = static_cast<index_t>(x.parameter_count());
  index_t const pw = static_cast<index_t>(warp.parameter_count());
  require(px >= 0 && px <= most, "x: parameter_count must be in [0, 2^40], got ", px);
  require(pw >= 0 && pw <= most, "warp: parameter_count must be in [0, 2^40], got ", pw);
  validate_if_possible(x);
  validate_if_possible(warp);
}

template <class T, class X, class W>
mc_sums<T> mc_run(X const& x, interpolant<T> const& y, W const& warp, mc_options const& opt,
                  mc_gradients<T> const& grads) {
  std::vector<T> scratch(static_cast<std::size_t>(mc_scratch_size(y.channels())));
  mc_sums<T> total{};
  for (index_t first = 0; first < opt.samples; first += mc_chunk_samples) {
    index_t const last = first + mc_chunk_samples < opt.samples ? first + mc_chunk_samples
                                                                : opt.samples;
    total = merged(total, mc_accumulate(x, y, warp, opt, first, last, scratch.data(), grads));
  }
  return total;
}

}  // namespace detail

/// The Monte Carlo estimate of F(warp; x, y) with opt.samples draws. Throws
/// resilin::invalid_argument for N < 1, a channel mismatch, or an invalid y / x / warp.
template <std::floating_point T, signal_function<T> X, warp_function<T> W>
mc_estimate<T> mc_value(X const& x, interpolant<T> const& y, W const& warp,
                        mc_options const& opt = {}) {
  detail::check_mc(x, y, warp, opt);
  return detail::checked(detail::finish(detail::mc_run(x, y, warp, opt, mc_gradients<T>{}), opt.samples),
                         "mc_value");
}

/// The same with a PL x.
template <std::floating_point T, warp_function<T> W>
mc_estimate<T> mc_value(interpolant<T> const& x, interpolant<T> const& y, W const& warp,
                        mc_options const& opt = {}) {
  return mc_value(pl_signal<T>{x}, y, warp, opt);
}

/// The estimate and its unbiased gradients with respect to x's parameters, y's values and the
/// warp's parameters (the same draws as mc_value with the same options). Throws
/// resilin::invalid_argument as mc_value does, and where a gradient entry is not finite (a
/// pullback that returns NaN or inf), naming the entry.
template <std::floating_point T, signal_function<T> X, warp_function<T> W>
mc_estimate_and_grad<T> mc_value_and_grad(X const& x, interpolant<T> const& y, W const& warp,
                                          mc_options const& opt = {}) {
  detail::check_mc(x, y, warp, opt);
  mc_estimate_and_grad<T> r;
  r.grad_x.assign(static_cast<std::size_t>(x.parameter_count()), T(0));
  r.grad_y.assign(static_cast<std::size_t>(y.values.size()), T(0));
  r.grad_warp.assign(static_cast<std::size_t>(warp.parameter_count()), T(0));
  mc_gradients<T> const g{r.grad_x.data(), r.grad_y.data(), r.grad_warp.data()};
  mc_estimate<T> const e =
      detail::checked(detail::finish(detail::mc_run(x, y, warp, opt, g), opt.samples), "mc_value_and_grad");
  detail::check_gradient(r.grad_x, "mc_value_and_grad", "grad_x", "signal");
  detail::check_gradient(r.grad_warp, "mc_value_and_grad", "grad_warp", "warp");
  detail::check_gradient(r.grad_y, "mc_value_and_grad", "grad_y", "signal or the warp");
  r.value = e.value;
  r.standard_error = e.standard_error;
  return r;
}

/// The same with a PL x: grad_x is then dF/dx, (x.length, x.channels) row-major.
template <std::floating_point T, warp_function<T> W>
mc_estimate_and_grad<T> mc_value_and_grad(interpolant<T> const& x, interpolant<T> const& y,
                                          W const& warp, mc_options const& opt = {}) {
  return mc_value_and_grad(pl_signal<T>{x}, y, warp, opt);
}

static_assert(signal_function<pl_signal<double>, double>);
static_assert(warp_function<pl_warp_function<float>, float>);

}  // namespace resilin::fcdtw

#pragma once
// FastCDTW barycentres (spec/cdtw.md B.4.5): minimise L(C, phi) = sum_k w_k F(phi_k; C, Y_k)
// over the centroid C and one warp phi_k per series by alternating
//   E-step: each warp refitted by fcdtw::fit() with the centroid fixed, warm-started from its
//           previous logits;
//   M-step: the centroid with every warp fixed. F is then a quadratic form in C's samples (see
//           fcdtw/shared_warp.hpp: a = x(u) - y(t) is linear in them, F = sum over pieces of
//           L (|a|^2 + <a, b> + |b|^2) / 3), so the step is its exact minimiser: one symmetric
//           tridiagonal system (each piece touches two neighbouring centroid samples), solved
//           by LDL^T in double, one right-hand side per channel.
// THE CENTROID IS WARPED: C plays fcdtw's x (warped), each series its y (the integral runs
// over Y_k's time axis, and phi_k has fit_options::segments or len(Y_k) - 1 segments), as in
// the repository's averaging experiment. Nearest-centroid prediction should use the same
// orientation: D with the centroid warped onto the test series' axis.
// The loss never increases: an E-step result is kept only if it does not raise F(phi_k) (Adam
// can overshoot), and an M-step result only if it does not raise L (it cannot, up to rounding).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>
#include <resilin/core/error.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/solver.hpp>
#include <resilin/fcdtw/warp.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn {

namespace detail {

/// The normal equations H c = g of one quadratic sum_k w_k F(phi_k; c, Y_k) in the centroid c
/// (length N): H symmetric tridiagonal (diag N, off N - 1), g (N x channels), in double.
struct tridiagonal_system {
  std::vector<double> diag, off, rhs;
  index_t length = 0, channels = 1;

  tridiagonal_system(index_t n, index_t c)
      : diag(static_cast<std::size_t>(n), 0.0), off(static_cast<std::size_t>(n > 0 ? n - 1 : 0), 0.0),
        rhs(static_cast<std::size_t>(n * c), 0.0), length(n), channels(c) {}

  void add(tridiagonal_system const& o, double w) {
    for (std::size_t i = 0; i < diag.size(); ++i) diag[i] += w * o.diag[i];
    for (std::size_t i = 0; i < off.size(); ++i) off[i] += w * o.off[i];
    for (std::size_t i = 0; i < rhs.size(); ++i) rhs[i] += w * o.rhs[i];
  }

  /// The solution by LDL^T (no pivoting: H is positive definite, see fcdtw_centroid_step).
  std::vector<double> solve() const {
    auto const n = static_cast<std::size_t>(length), c = static_cast<std::size_t>(channels);
    std::vector<double> d(n), l(n, 0.0), x(rhs);
    for (std::size_t i = 0; i < n; ++i) {
      d[i] = diag[i];
      if (i > 0) {
        l[i] = off[i - 1] / d[i - 1];
        d[i] -= l[i] * off[i - 1];
        for (std::size_t ch = 0; ch < c; ++ch) x[i * c + ch] -= l[i] * x[(i - 1) * c + ch];
      }
      if (!(d[i] > 0) || !std::isfinite(d[i]))
        RESILIN_THROW(resilin::runtime_error(resilin::detail::message(
            "fcdtw_barycenter: the centroid system is not positive definite at sample ", i,
            " (pivot ", d[i], ")")));
    }
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t ch = 0; ch < c; ++ch) {
        x[i * c + ch] /= d[i];
        if (i + 1 < n) x[i * c + ch] -= l[i + 1] * x[(i + 1) * c + ch];
      }
    return x;
  }
};

/// Adds the normal equations of F(phi; c, y) in c to `sys`: per piece, with a = p0.c - ya,
/// b = p1.c - yb (p0, p1 the interpolation rows of its ends),
///   H += L/3 (2 p0 p0^T + p0 p1^T + p1 p0^T + 2 p1 p1^T),  g += L/3 ((2 ya + yb) p0 + (ya + 2 yb) p1),
/// so that grad F = H c - g (H is the Hessian of F).
template <class T>
struct normal_equation_visitor {
  fcdtw::interpolant<T> x, y;  // x: any values of the centroid's shape (only its grid is read)
  fcdtw::path_norm norm;
  tridiagonal_system* sys;

  void operator()(fcdtw::detail::piece<T> const& p) const {
    fcdtw::detail::piece_geometry<T> const geo(p, norm);
    double const L3 = static_cast<double>(geo.length) / 3.0;
    double const a1 = static_cast<double>(geo.wx0), a0 = 1.0 - a1;  // p0 at samples sx, sx + 1
    double const b1 = static_cast<double>(geo.wx1), b0 = 1.0 - b1;  // p1
    auto const i = static_cast<std::size_t>(p.sx);
    sys->diag[i] += L3 * 2.0 * (a0 * a0 + a0 * b0 + b0 * b0);
    sys->diag[i + 1] += L3 * 2.0 * (a1 * a1 + a1 * b1 + b1 * b1);
    sys->off[i] += L3 * (2.0 * a0 * a1 + a0 * b1 + b0 * a1 + 2.0 * b0 * b1);
    double const wy0 = static_cast<double>(geo.wy0), wy1 = static_cast<double>(geo.wy1);
    auto const c = static_cast<std::size_t>(sys->channels);
    for (index_t ch = 0; ch < y.channels(); ++ch) {
      double const ys = static_cast<double>(y.values(p.sy, ch)),
                   ye = static_cast<double>(y.values(p.sy + 1, ch));
      double const ya = (1.0 - wy0) * ys + wy0 * ye, yb = (1.0 - wy1) * ys + wy1 * ye;
      double const ga = L3 * (2.0 * ya + yb), gb = L3 * (ya + 2.0 * yb);
      auto const k = static_cast<std::size_t>(ch);
      sys->rhs[i * c + k] += a0 * ga + b0 * gb;
      sys->rhs[(i + 1) * c + k] += a1 * ga + b1 * gb;
    }
  }
};

/// Checks the warps of fcdtw_centroid_step: one per series, K_k + 1 valid knots each.
template <class T>
void check_step_warps(fcdtw::fit_options const& fo, batch_view<T const> series,
                      std::span<std::vector<T> const> warps) {
  require(static_cast<index_t>(warps.size()) == series.batch, "warps has ", warps.size(),
          " entries, expected one per series (", series.batch, ")");
  for (index_t k = 0; k < series.batch; ++k) {
    auto const& v = warps[static_cast<std::size_t>(k)];
    index_t const K = fcdtw::detail::segments_for(fo, series.length(k));
    require(static_cast<index_t>(v.size()) == K + 1, "warps[", k, "] has ", v.size(),
            " knots, expected K + 1 = ", K + 1);
    std::string const name = resilin::detail::message("warps[", k, "]");
    fcdtw::detail::check_warp(fcdtw::uniform_warp<T>(v.data(), K), name.c_str());
  }
}

/// sum_k w_k F(phi_k; c, Y_k), F per series into f (n), summed in series order.
template <class T>
double fcdtw_loss(fcdtw::path_norm norm, series_view<T const> c, batch_view<T const> series,
                  std::span<std::vector<T> const> warps, std::span<double const> w, int threads,
                  std::vector<double>& f) {
  f.assign(static_cast<std::size_t>(series.batch), 0.0);
  auto const ci = fcdtw::uniform_interpolant(c);
  parallel_for(series.batch, threads, [&](index_t k, int) {
    auto const& v = warps[static_cast<std::size_t>(k)];
    f[static_cast<std::size_t>(k)] = static_cast<double>(fcdtw::value(
        ci, fcdtw::uniform_interpolant(series[k]),
        fcdtw::uniform_warp<T>(v.data(), static_cast<index_t>(v.size()) - 1), norm));
  });
  double total = 0;
  for (std::size_t k = 0; k < f.size(); ++k) total += w[k] * f[k];
  return total;
}

/// The M-step without validation (fcdtw_centroid_step checks).
template <class T>
std::vector<T> centroid_step(fcdtw::path_norm norm, index_t length, batch_view<T const> series,
                             std::span<std::vector<T> const> warps, std::span<double const> w,
                             int threads) {
  index_t const n = series.batch, ch = series.channels;
  std::vector<tridiagonal_system> parts(static_cast<std::size_t>(n), tridiagonal_system(length, ch));
  std::vector<T> const zeros(static_cast<std::size_t>(length * ch), T(0));
  auto const x = fcdtw::uniform_interpolant(series_view<T const>{zeros.data(), length, ch});
  parallel_for(n, threads, [&](index_t k, int) {
    auto const& v = warps[static_cast<std::size_t>(k)];
    normal_equation_visitor<T> visit{x, fcdtw::uniform_interpolant(series[k]), norm,
                                     &parts[static_cast<std::size_t>(k)]};
    fcdtw::detail::for_each_piece(
        x, visit.y, fcdtw::uniform_warp<T>(v.data(), static_cast<index_t>(v.size()) - 1), visit);
  });
  tridiagonal_system total(length, ch);
  for (index_t k = 0; k < n; ++k)  // fixed order: deterministic whatever the threads
    total.add(parts[static_cast<std::size_t>(k)], w[static_cast<std::size_t>(k)]);
  std::vector<double> const c = total.solve();
  return std::vector<T>(c.begin(), c.end());
}

/// The starting centroid (starting_barycenter): the medoid is argmin_j sum_k w_k D(X_j, X_k)
/// (X_j warped, as the centroid is).
template <class T>
std::vector<T> fcdtw_initial_centroid(fcdtw::fit_options const& fo, batch_view<T const> series,
                                      std::span<double const> w, index_t length,
                                      barycenter_options const& opt) {
  return starting_barycenter(series, w, length, opt, [&] {
    fcdtw::fit_options o = fo;
    o.threads = opt.threads;
    return medoid_by_rows<T>(series.batch, w, [&](index_t first, index_t count, matrix_view<T> out) {
      fcdtw::pairwise_distances(o, series.subbatch(first, count), series, out);
    });
  });
}

template <class T>
void check_fcdtw_inputs(fcdtw::fit_options const& fo, batch_view<T const> series,
                        barycenter_options const& opt) {
  fcdtw::detail::check_options<T>(fo);
  check_options(opt);
  require(opt.objective == barycenter_objective::value,
          "fcdtw_barycenter: FastCDTW has no sharp value (objective must be value)");
  check_inputs(series, "fcdtw_barycenter");
  fcdtw::detail::check_pl_batch(series, "series");
}
}  // namespace detail

/// The exact M-step: argmin over centroids c of `length` samples (uniform grid) of
/// sum_k w_k F(phi_k; c, Y_k) with the warps fixed; warps[k] holds phi_k's K_k + 1 knots on the
/// uniform grid (K_k = fo.segments or len(Y_k) - 1; fo.norm is the arc length; nothing else of
/// fo is used). weights: >= 0, not all 0 (empty: uniform). Returns c, (length, channels).
/// The Hessian is positive definite: every centroid segment receives pieces with du > 0, whose
/// length is >= du, and each such piece's two interpolation rows are independent.
template <std::floating_point T>
std::vector<T> fcdtw_centroid_step(fcdtw::fit_options const& fo, index_t length,
                                   batch_view<T const> series,
                                   std::span<std::vector<T> const> warps,
                                   std::type_identity_t<std::span<T const>> weights = {},
                                   int threads = 0) {
  detail::check_inputs(series, "fcdtw_centroid_step");
  fcdtw::detail::check_pl_batch(series, "series");
  detail::require(length >= 2, "fcdtw_centroid_step: length must be >= 2, got ", length);
  detail::require(threads >= 0, "threads must be >= 0 (0 = all cores), got ", threads);
  detail::check_step_warps(fo, series, warps);
  auto const w = detail::normalised_weights(weights, series.batch);
  return detail::centroid_step(fo.norm, length, series, warps, std::span<double const>(w), threads);
}

namespace detail {
/// The warps of the alternation, one per series: logits r_k (K_k) and knots v_k (K_k + 1), and
/// f_k = F(phi_k; C, Y_k) at the current centroid.
template <class T>
struct fcdtw_warps {
  std::vector<std::vector<T>> logits, knots;
  std::vector<double> f;
};

/// The E-step's rule for series k: a refit (its final logits r, knots v and F there) replaces
/// the kept warp only if F is finite and not above f_k (Adam can overshoot).
template <class T>
void keep_if_lower(fcdtw_warps<T>& w, index_t k, std::vector<T>&& r, std::vector<T>&& v, double F) {
  auto const s = static_cast<std::size_t>(k);
  if (!(std::isfinite(F) && F <= w.f[s])) return;
  w.f[s] = F;
  w.logits[s] = std::move(r);
  w.knots[s] = std::move(v);
}

/// The host E-step: every warp refitted by fcdtw::fit() from its kept logits, opt.threads
/// series at a time.
template <class T>
struct host_refit {
  fcdtw::fit_options fo;
  batch_view<T const> series;
  int threads;

  void operator()(series_view<T const> centroid, fcdtw_warps<T>& w) const {
    auto const ci = fcdtw::uniform_interpolant(centroid);
    parallel_for(series.batch, threads, [&](index_t k, int) {
      auto res = fcdtw::fit(ci, fcdtw::uniform_interpolant(series[k]), fo,
                            std::span<T const>(w.logits[static_cast<std::size_t>(k)]));
      keep_if_lower(w, k, std::move(res.logits), std::move(res.knots), static_cast<double>(res.distance));
    });
  }
};

/// fcdtw_barycenter() with the E-step refit(centroid, warps) of `auto refit =
/// make_refit(length)`, made once the inputs are checked (host_refit, or learn/cuda.cuh's
/// batched GPU fit, which uploads the series), that refits the warps by keep_if_lower().
template <class T, class MakeRefit>
barycenter_result<T> fcdtw_alternate(fcdtw::fit_options const& fo, batch_view<T const> series,
                                     std::span<T const> weights, barycenter_options const& opt,
                                     MakeRefit&& make_refit) {
  check_fcdtw_inputs(fo, series, opt);
  auto const w = normalised_weights(weights, series.batch);
  std::span<double const> const ws(w);
  index_t const length = target_length(series, opt);
  require(length >= 2, "fcdtw_barycenter: the barycentre needs >= 2 samples, got length ", length);
  index_t const n = series.batch, ch = series.channels;
  std::vector<T> centroid = fcdtw_initial_centroid(fo, series, ws, length, opt);
  fcdtw_warps<T> warps;
  warps.logits.resize(static_cast<std::size_t>(n));
  warps.knots.resize(warps.logits.size());
  for (index_t k = 0; k < n; ++k) {  // identity warps (zero logits), or fo.init = grid's
    index_t const K = fcdtw::detail::segments_for(fo, series.length(k));
    auto& r = warps.logits[static_cast<std::size_t>(k)];
    auto& v = warps.knots[static_cast<std::size_t>(k)];
    r.assign(static_cast<std::size_t>(K), T(0));
    v.assign(static_cast<std::size_t>(K + 1), T(0));
    if (fo.init == fcdtw::warp_init::grid)
      fcdtw::grid_start_logits(fo.map, fcdtw::uniform_interpolant(series_view<T const>{centroid.data(), length, ch}),
                               fcdtw::uniform_interpolant(series[k]), K, r.data());
    fcdtw::warp_from_logits(fo.map, r.data(), K, v.data());
  }
  std::span<std::vector<T> const> const knots(warps.knots);
  auto const view = [&](std::vector<T> const& c) { return series_view<T const>{c.data(), length, ch}; };
  double loss = fcdtw_loss(fo.norm, view(centroid), series, knots, ws, opt.threads, warps.f);
  require(std::isfinite(loss), "fcdtw_barycenter: the loss at the start is not finite");

  int rounds = 0;
  if (opt.max_iter > 0) {
    auto refit = make_refit(length);  // not for the start alone: a GPU refit uploads the series
    for (int it = 1; it <= opt.max_iter; ++it) {
      // E-step: refit every warp from its previous logits; keep it only if F does not rise.
      refit(view(centroid), warps);
      double e_loss = 0;
      for (std::size_t k = 0; k < warps.f.size(); ++k) e_loss += w[k] * warps.f[k];
      // M-step: the exact minimiser with the warps fixed (kept unless rounding made it worse).
      std::vector<T> next = centroid_step(fo.norm, length, series, knots, ws, opt.threads);
      std::vector<double> next_f;
      double const m_loss = fcdtw_loss(fo.norm, view(next), series, knots, ws, opt.threads, next_f);
      double round_loss = e_loss;
      if (std::isfinite(m_loss) && m_loss <= e_loss) {
        centroid = std::move(next);
        warps.f = std::move(next_f);
        round_loss = m_loss;
      }
      rounds = it;
      if (opt.progress) opt.progress("fcdtw", it, round_loss);
      double const previous = loss;
      loss = round_loss;
      if (previous - loss <= opt.tolerance * std::abs(previous)) break;
    }
  }

  barycenter_result<T> r;
  r.values = std::move(centroid);
  r.length = length;
  r.channels = ch;
  r.loss = loss;
  r.iterations = rounds;
  return r;
}
}  // namespace detail

/// The FastCDTW barycentre: argmin_C sum_k w_k F(phi_k; C, Y_k), weights normalised to sum 1
/// (empty: uniform), by alternating warp fits (fo: steps, lr, map, norm, segments; fo.threads is
/// ignored, opt.threads runs the series in parallel) and exact centroid steps, starting from
/// opt.start, else opt.init (Euclidean mean or medoid), and identity warps (fo.init = grid: each series' grid
/// CDTW alignment with the starting centroid), for opt.max_iter rounds or until a
/// round lowers the loss by at most opt.tolerance relative (0: until a round gains nothing). The centroid has opt.length
/// samples (0: the mean input length; >= 2) and is the warped side (see the top of the file).
/// loss: sum_k w_k F(phi_k; C, Y_k) at the returned centroid and its final warps (with
/// max_iter = 0: the start, with identity or grid warps); it depends on fo's budget like every FastCDTW
/// value. iterations: the rounds run. progress("fcdtw", round, loss) after every round.
/// Deterministic: each series is one task writing its own slots; sums run in series order.
/// learn/cuda.cuh has the same with the warp fits of every round as one GPU call.
template <std::floating_point T>
barycenter_result<T> fcdtw_barycenter(fcdtw::fit_options const& fo, batch_view<T const> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  return detail::fcdtw_alternate(fo, series, weights, opt, [&](index_t) {
    return detail::host_refit<T>{fo, series, opt.threads};
  });
}

/// The same for a batch of mutable values.
template <std::floating_point T>
  requires(!std::is_const_v<T>)
barycenter_result<T> fcdtw_barycenter(fcdtw::fit_options const& fo, batch_view<T> series,
                                      std::type_identity_t<std::span<T const>> weights = {},
                                      barycenter_options const& opt = {}) {
  return fcdtw_barycenter(fo, as_const(series), weights, opt);
}

}  // namespace resilin::learn

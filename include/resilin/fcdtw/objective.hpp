#pragma once
// The FastCDTW objective in closed form (spec/cdtw.md B.3.3-B.3.6, B.4.2):
//
//   F(phi; x, y) = int_0^1 ||x(phi(t)) - y(t)||^2 sqrt(1 + phi'(t)^2) dt      (path_norm::l2)
//                = int_0^1 ||x(phi(t)) - y(t)||^2 (1 + phi'(t)) dt             (path_norm::l1)
//
// x is warped; the integral runs over y's time axis. On every piece between consecutive
// breakpoints (phi knots, y knots, pre-images of x knots) phi, y and x o phi are affine, so the
// piece integrates exactly to L (|a|^2 + <a,b> + |b|^2) / 3 with a, b = x(u) - y(t) at its ends.
// The sweep walks phi's segments and merges each one's y knots and x pre-images with two
// monotone pointers: O(K + Tx + Ty) per pair (times channels), no search, no storage, and no
// division by zero (a flat phi segment has no pre-images). Warp gradients use the Leibniz form,
// which stays exact when breakpoints coincide. RESILIN_HD, no allocation, float or double.
#include <string>
#include <resilin/core/config.hpp>
#include <resilin/core/math.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/warp.hpp>

namespace resilin::fcdtw {

/// How arc length is measured along the path (t, phi(t)): Euclidean (FastCDTW) or L1.
enum class path_norm { l2, l1 };

namespace detail {
/// "" for one of path_norm's values, else why not (an integer cast to it, which the code would
/// take for l1 in one place and l2 in another): the one message every option check uses.
inline std::string option_error(path_norm n) {
  if (n == path_norm::l2 || n == path_norm::l1) return {};
  return resilin::detail::message("norm must be l2 or l1, got ", static_cast<int>(n));
}
}  // namespace detail

/// Where value_and_grad() adds its gradients, each scaled by `seed`; a null pointer skips one.
template <class T>
struct objective_grads {
  T* dv = nullptr;       // (K + 1): dF/dv, every knot value (v_0 and v_K included)
  series_view<T> dx{};   // shape of x: dF/dx
  series_view<T> dy{};   // shape of y: dF/dy
  T seed = T(1);
};

namespace detail {

/// One piece of the sweep: warp segment j, t in [tau0, tau1], u = phi(t) in [u0, u1], inside
/// x segment sx = [x0, x1] (in u) and y segment sy = [y0, y1] (in t).
template <class T>
struct piece {
  index_t j;
  T tau0, tau1;
  T u0, u1;
  index_t sx, sy;
  T x0, x1, y0, y1;
};

/// A knot grid read through a one-entry cache: on the uniform grid every knot costs a
/// division, and the sweep asks for the same few knots many times.
template <class T>
struct cached_knot {
  index_t index = -1;
  T value = T(0);
  RESILIN_HD T operator()(knot_grid<T> const& g, index_t i) noexcept {
    if (i != index) {
      index = i;
      value = g[i];
    }
    return value;
  }
};

/// The knots a sweep reads, each through its own one-entry cache.
template <class T>
struct sweep_knots {
  cached_knot<T> xq, yq, xa, xb, ya, yb;  // knots qx, qy and the current segments' ends
};

/// Calls visit(piece) for every piece of positive length of warp segment j, in increasing t.
/// qx, qy: the first x knot above phi[j] and the first y knot above phi.knot(j); advanced to
/// where segment j + 1 starts. The one sweep of the host and of the GPU kernels.
RESILIN_HD_CALLS_FUNCTOR
template <class T, class Visit>
RESILIN_HD void sweep_segment(interpolant<T> const& x, interpolant<T> const& y,
                              warp_view<T> const& phi, index_t j, index_t& qx, index_t& qy,
                              sweep_knots<T>& k, Visit& visit) noexcept {
  index_t const nx = x.length(), ny = y.length();
  T const g0 = phi.knot(j), g1 = phi.knot(j + 1);
  T const h = g1 - g0;
  T const v0 = phi[j], v1 = phi[j + 1];
  T tau = g0, u = v0;
  for (;;) {
    T const xk = qx < nx ? k.xq(x.grid, qx) : T(0);
    T const yk = qy < ny ? k.yq(y.grid, qy) : T(0);
    bool const has_x = qx < nx && xk < v1;  // then v0 < t_x < v1: v1 - v0 > 0
    bool const has_y = qy < ny && yk < g1;
    T tx = g1, ty = g1;
    if (has_x) {
      tx = g0 + h * ((xk - v0) / (v1 - v0));
      tx = tx < tau ? tau : (tx > g1 ? g1 : tx);  // keep the order under rounding
    }
    if (has_y) ty = yk;
    bool const take_x = has_x && (!has_y || tx <= ty);
    bool const take_y = has_y && (!has_x || ty <= tx);
    T next_tau = g1, next_u = v1;
    if (take_x) {
      next_tau = tx;
      next_u = xk;  // exactly the knot: x(u) is the sample itself
    } else if (take_y) {
      next_tau = ty;
      T const w = (ty - g0) / h;
      next_u = (T(1) - w) * v0 + w * v1;
    }
    index_t const sx = (qx < nx ? qx : nx - 1) - 1;
    index_t const sy = (qy < ny ? qy : ny - 1) - 1;
    if (next_tau > tau)
      visit(piece<T>{j, tau, next_tau, u, next_u, sx, sy, k.xa(x.grid, sx), k.xb(x.grid, sx + 1),
                     k.ya(y.grid, sy), k.yb(y.grid, sy + 1)});
    if (!take_x && !take_y) break;
    qx += take_x ? 1 : 0;
    qy += take_y ? 1 : 0;
    tau = next_tau;
    u = next_u;
  }
}

/// Calls visit(piece) for every piece of positive length, in increasing t.
template <class T, class Visit>
RESILIN_HD void for_each_piece(interpolant<T> const& x, interpolant<T> const& y,
                               warp_view<T> const& phi, Visit& visit) noexcept {
  index_t const nx = x.length(), ny = y.length(), K = phi.segments();
  index_t qx = 1, qy = 1;  // the first x knot above the current u, y knot above the current t
  sweep_knots<T> k;
  for (index_t j = 0; j < K; ++j) {
    while (qx < nx && k.xq(x.grid, qx) <= phi[j]) ++qx;
    while (qy < ny && k.yq(y.grid, qy) <= phi.knot(j)) ++qy;
    sweep_segment(x, y, phi, j, qx, qy, k, visit);
  }
}

/// The interpolation weights and the length of a piece; a(end) = x(u) - y(t) per channel.
template <class T>
struct piece_geometry {
  T wx0, wx1, wy0, wy1;
  T length;

  RESILIN_HD piece_geometry(piece<T> const& p, path_norm norm) noexcept
      : wx0((p.u0 - p.x0) / (p.x1 - p.x0)), wx1((p.u1 - p.x0) / (p.x1 - p.x0)),
        wy0((p.tau0 - p.y0) / (p.y1 - p.y0)), wy1((p.tau1 - p.y0) / (p.y1 - p.y0)) {
    T const dt = p.tau1 - p.tau0, du = p.u1 - p.u0;
    // No sqrt(. + 1e-20) guard: the reference needs it only for autograd through sqrt at 0,
    // nothing here differentiates L, and the guard would add ~1e-10 per sliver of a piece.
    length = norm == path_norm::l2 ? math::sqrt(dt * dt + du * du) : dt + math::abs(du);
  }
  /// a at the start (end = false) or at the end (end = true) of the piece, channel c.
  RESILIN_HD T difference(interpolant<T> const& x, interpolant<T> const& y, piece<T> const& p,
                          bool end, index_t c) const noexcept {
    T const wx = end ? wx1 : wx0, wy = end ? wy1 : wy0;
    T const xv = (T(1) - wx) * x.values(p.sx, c) + wx * x.values(p.sx + 1, c);
    T const yv = (T(1) - wy) * y.values(p.sy, c) + wy * y.values(p.sy + 1, c);
    return xv - yv;
  }
};

/// A running sum with Neumaier's compensation. The closed form adds one term per piece, and a
/// long pair has millions: summed plainly in float the total drifted by 2.6 % at 2^23 samples;
/// compensated it stays near one rounding of the exact sum. Additions only, so FMA contraction
/// cannot change it; a non-finite term leaves the carry alone (the total is then that term's).
template <class T>
struct compensated_sum {
  T sum = T(0), carry = T(0);
  RESILIN_HD void add(T v) noexcept {
    T const t = sum + v;
    if (t - t == T(0)) carry += math::abs(sum) >= math::abs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  RESILIN_HD T value() const noexcept { return sum + carry; }
};

template <class T>
struct value_visitor {
  interpolant<T> x, y;
  path_norm norm;
  compensated_sum<T> total{};

  RESILIN_HD void operator()(piece<T> const& p) noexcept {
    piece_geometry<T> const geo(p, norm);
    T bracket = T(0);
    for (index_t c = 0; c < x.channels(); ++c) {
      T const a = geo.difference(x, y, p, false, c), b = geo.difference(x, y, p, true, c);
      bracket += a * a + a * b + b * b;
    }
    total.add(geo.length * bracket / T(3));
  }
};

template <class T>
struct gradient_visitor {
  interpolant<T> x, y;
  warp_view<T> phi;
  path_norm norm;
  objective_grads<T> out;
  compensated_sum<T> total{};
  // What the Leibniz terms need of warp segment j, computed once per segment (a segment holds
  // about (K + Tx + Ty) / K pieces; its square root and divisions bound the piece's latency).
  index_t segment = -1;
  T g0 = T(0), h = T(0), twice_s = T(0), ds_over_h = T(0);

  RESILIN_HD void begin_segment(index_t j) noexcept {
    segment = j;
    g0 = phi.knot(j);
    h = phi.knot(j + 1) - g0;
    T const sigma = (phi[j + 1] - phi[j]) / h;
    T const s = norm == path_norm::l2 ? math::sqrt(T(1) + sigma * sigma) : T(1) + sigma;
    T const ds = norm == path_norm::l2 ? sigma / s : T(1);  // d s / d sigma
    twice_s = T(2) * s;
    ds_over_h = ds / h;
  }

  RESILIN_HD void operator()(piece<T> const& p) noexcept {
    piece_geometry<T> const geo(p, norm);
    T const dx_len = p.x1 - p.x0;
    T bracket = T(0), e0 = T(0), e1 = T(0);
    for (index_t c = 0; c < x.channels(); ++c) {
      T const a = geo.difference(x, y, p, false, c), b = geo.difference(x, y, p, true, c);
      bracket += a * a + a * b + b * b;
      T const slope = (x.values(p.sx + 1, c) - x.values(p.sx, c)) / dx_len;
      e0 += a * slope;
      e1 += b * slope;
      // dF/da, dF/db of L (|a|^2 + <a,b> + |b|^2) / 3: the mass-matrix rows of this piece.
      T const ga = out.seed * geo.length * (T(2) * a + b) / T(3);
      T const gb = out.seed * geo.length * (a + T(2) * b) / T(3);
      if (out.dx.data) {
        out.dx(p.sx, c) += (T(1) - geo.wx0) * ga + (T(1) - geo.wx1) * gb;
        out.dx(p.sx + 1, c) += geo.wx0 * ga + geo.wx1 * gb;
      }
      if (out.dy.data) {
        out.dy(p.sy, c) -= (T(1) - geo.wy0) * ga + (T(1) - geo.wy1) * gb;
        out.dy(p.sy + 1, c) -= geo.wy0 * ga + geo.wy1 * gb;
      }
    }
    total.add(geo.length * bracket / T(3));
    if (!out.dv) return;
    // Leibniz form (B.3.6): integrate dg/dv over the piece; no boundary terms, no 1/dv.
    if (p.j != segment) begin_segment(p.j);
    T const dt = p.tau1 - p.tau0;
    T const w0 = (p.tau0 - g0) / h, w1 = (p.tau1 - g0) / h;
    T const i0 = dt * bracket / T(3);
    T const iew = (T(2) * e0 * w0 + e0 * w1 + e1 * w0 + T(2) * e1 * w1) / T(6);
    T const ie = (e0 + e1) / T(2);
    out.dv[p.j + 1] += out.seed * (twice_s * dt * iew + ds_over_h * i0);
    out.dv[p.j] += out.seed * (twice_s * dt * (ie - iew) - ds_over_h * i0);
  }
};

}  // namespace detail

/// F(phi; x, y) in closed form. Preconditions (checked by the host API, not here): x, y with
/// >= 2 samples and equal channels; phi monotone with phi(0) = 0, phi(1) = 1.
template <class T>
RESILIN_HD T value(interpolant<T> const& x, interpolant<T> const& y, warp_view<T> const& phi,
                   path_norm norm = path_norm::l2) noexcept {
  detail::value_visitor<T> visit{x, y, norm};
  detail::for_each_piece(x, y, phi, visit);
  return visit.total.value();
}

/// F and its gradients, added (times grads.seed) to grads.dv (dF/dv, the Leibniz form),
/// grads.dx and grads.dy (the mass-matrix form scattered to the knots). Returns F.
template <class T>
RESILIN_HD T value_and_grad(interpolant<T> const& x, interpolant<T> const& y,
                            warp_view<T> const& phi, objective_grads<T> grads,
                            path_norm norm = path_norm::l2) noexcept {
  detail::gradient_visitor<T> visit{x, y, phi, norm, grads};
  detail::for_each_piece(x, y, phi, visit);
  return visit.total.value();
}

}  // namespace resilin::fcdtw

#pragma once
// The shared-warp pairwise form (spec/cdtw.md B.3.4 "shared warp", B.4.5 MAD): one warp phi for
// every pair, C(i, j) = F(phi; X[i], Y[j]), and its vector-Jacobian product.
//
// Derivation. With phi fixed, the breakpoints tau_0..tau_M (and u_k = phi(tau_k)) do not
// depend on the samples, and each a_k = x(u_k) - y(tau_k) is linear in them: x(u_k) =
// (Wx x)_k, y(tau_k) = (Wy y)_k with two interpolation weights per row. F is then the quadratic
// form F = sum_{k,l} Q_kl <a_k, a_l>, Q the tridiagonal P1 mass matrix of the piece lengths L_k
// (Q_kk = (L_{k-1} + L_k) / 3, Q_{k,k+1} = L_k / 6). With Xt_i = Wx x_i, Yt_j = Wy y_j
// ((M + 1) x d each) and a_ij = Xt_i - Yt_j, piece by piece
//   C(i, j) = sum_k L_k / 3 (|a[k]|^2 + <a[k], a[k+1]> + |a[k+1]|^2),
// each term >= 0. It is formed from the differences, not expanded into <Xt, Q Xt> + <Yt, Q Yt>
// - 2 <Xt, Q Yt> (one matrix product, but its terms are O(|x|^2) and cancel: in float a pair 1e-4
// apart came out 25 times its cost, or negative, and pairs near the largest sample magnitude
// NaN); the cost is the same order, O(bx by M d).
// VJP with upstream G (bx x by), E_i = sum_j G_ij a_ij and F_j = -sum_i G_ij a_ij (also from the
// differences):
//   dXt_i = 2 Q E_i,   dYt_j = 2 Q F_j,  then scatter by Wx^T, Wy^T;
//   dv: the Leibniz terms of every pair are quadratic in a_ij (and bilinear with x_i's slope),
//   so their G-weighted sum needs per piece only B_k = sum_ij G_ij (|a[k]|^2 + <a[k], a[k+1]> +
//   |a[k+1]|^2), the bracket of C's own terms, and sum_j G_ij a_ij = E_i.
// Host API; threaded with parallel_for, deterministic (fixed-order sums, no atomics).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <span>
#include <utility>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/core/validate.hpp>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/warp.hpp>

namespace resilin::fcdtw {

/// Settings of the shared-warp cost matrix. Grids are uniform unless knots are given (then
/// every series of that batch uses them: max_length knots, 0 to 1, strictly increasing).
template <class T>
struct shared_warp_options {
  path_norm norm = path_norm::l2;
  int threads = 0;               // 0: every hardware thread
  T const* x_knots = nullptr;    // (X.max_length) or nullptr
  T const* y_knots = nullptr;    // (Y.max_length) or nullptr
};

namespace detail {

/// The breakpoint mesh of one warp against an x grid and a y grid: per point k (M + 1) the
/// interpolation rows of Wx and Wy, per piece k (M) its length and Leibniz data.
template <class T>
struct shared_mesh {
  std::vector<index_t> sx, sy;  // (M + 1) segments
  std::vector<T> wx, wy;        // (M + 1) weights
  std::vector<T> length;        // (M) L_k
  std::vector<piece<T>> pieces; // (M)
  index_t points() const { return static_cast<index_t>(sx.size()); }
};

template <class T>
struct mesh_collector {
  interpolant<T> x, y;
  path_norm norm;
  shared_mesh<T>* mesh;
  void operator()(piece<T> const& p) {
    piece_geometry<T> const geo(p, norm);
    auto& m = *mesh;
    if (m.pieces.empty()) {  // the first piece's start is point 0
      m.sx.push_back(p.sx); m.wx.push_back(geo.wx0);
      m.sy.push_back(p.sy); m.wy.push_back(geo.wy0);
    }
    // Point k + 1 is this piece's end; the next piece starts there (same values, to rounding).
    m.sx.push_back(p.sx); m.wx.push_back(geo.wx1);
    m.sy.push_back(p.sy); m.wy.push_back(geo.wy1);
    m.length.push_back(geo.length);
    m.pieces.push_back(p);
  }
};

template <class T>
shared_mesh<T> build_mesh(knot_grid<T> xg, knot_grid<T> yg, warp_view<T> phi, path_norm norm) {
  shared_mesh<T> mesh;
  // Only the grids matter to the mesh; the values are never read (a null view is never used).
  interpolant<T> const x{{nullptr, xg.size, 1}, xg}, y{{nullptr, yg.size, 1}, yg};
  mesh_collector<T> collect{x, y, norm, &mesh};
  for_each_piece(x, y, phi, collect);
  return mesh;
}

/// Rows (M + 1) x d of the interpolated samples of every series: out[b] = W s_b.
template <class T>
void interpolate_rows(batch_view<T const> s, std::vector<index_t> const& seg,
                      std::vector<T> const& w, std::vector<T>& out, int threads) {
  index_t const P = static_cast<index_t>(seg.size()), d = s.channels;
  out.assign(static_cast<std::size_t>(s.batch * P * d), T(0));
  parallel_for(s.batch, threads, [&](index_t b, int) {
    series_view<T const> const sb = s[b];
    T* row = out.data() + b * P * d;
    for (index_t k = 0; k < P; ++k) {
      T const wk = w[static_cast<std::size_t>(k)];
      index_t const i = seg[static_cast<std::size_t>(k)];
      for (index_t c = 0; c < d; ++c) row[k * d + c] = (T(1) - wk) * sb(i, c) + wk * sb(i + 1, c);
    }
  });
}

/// out = Q in for one (M + 1) x d block.
template <class T>
void apply_mass(std::vector<T> const& L, T const* in, T* out, index_t d) {
  index_t const M = static_cast<index_t>(L.size());
  for (index_t k = 0; k <= M; ++k) {
    T const lp = k > 0 ? L[static_cast<std::size_t>(k - 1)] : T(0);
    T const ln = k < M ? L[static_cast<std::size_t>(k)] : T(0);
    for (index_t c = 0; c < d; ++c) {
      T v = (lp + ln) / T(3) * in[k * d + c];
      if (k > 0) v += lp / T(6) * in[(k - 1) * d + c];
      if (k < M) v += ln / T(6) * in[(k + 1) * d + c];
      out[k * d + c] = v;
    }
  }
}

template <class T>
T dot(T const* a, T const* b, index_t n) {
  T s = T(0);
  for (index_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

template <class XB, class YB, class T>
void check_shared(XB X, YB Y, warp_view<T> const& phi, shared_warp_options<T> const& o) {
  using resilin::detail::require;
  check_warp(phi);
  require(o.threads >= 0, "threads must be >= 0 (0 = all cores), got ", o.threads);
  require_no_error(option_error(o.norm));
  resilin::detail::check_batch(X, "X");
  resilin::detail::check_batch(Y, "Y");
  require(X.channels == Y.channels, "channel mismatch: X has ", X.channels, ", Y has ",
          Y.channels);
  for (auto const& [b, name] : {std::pair{X, "X"}, std::pair{Y, "Y"}}) {
    require(b.max_length >= 2 || b.batch == 0, name,
            ": series need >= 2 samples for a piecewise-linear interpolant, got ", b.max_length);
    for (index_t i = 0; i < b.batch; ++i) {
      require(b.length(i) == b.max_length, name, ": a shared warp needs one grid per batch; series ",
              i, " has length ", b.length(i), ", not ", b.max_length);
      // as distances() does: squared differences must stay finite (C was inf)
      check_sample_range(b[i].data, b[i].size(), b.channels, name,
                         resilin::detail::message(" series ", i));
    }
  }
  if (o.x_knots == nullptr) check_uniform_resolution<T>(X.max_length, "X");
  if (o.y_knots == nullptr) check_uniform_resolution<T>(Y.max_length, "Y");
  check_knot_grid(knot_grid<T>{o.x_knots, X.max_length}, "x_knots");
  check_knot_grid(knot_grid<T>{o.y_knots, Y.max_length}, "y_knots");
}

/// Outputs (GX, GY, dv, C) apart from the inputs (X, Y, G, the warp, the series' knots) and
/// each other: they are written while the inputs are read (C = G gave GY off by 1.8; GX over
/// x_knots gave dv off by 9.7, the knots being read again after GX was written).
template <class T>
void check_shared_outputs(batch_view<T const> X, batch_view<T const> Y, warp_view<T> const& phi,
                          matrix_view<T const> G, batch_view<T> gx, batch_view<T> gy, T* dv,
                          matrix_view<T> C, shared_warp_options<T> const& o) {
  using resilin::detail::region;
  index_t const knots = phi.grid.size;
  resilin::detail::check_disjoint(
      {region(gx, "GX"), region(gy, "GY"), region(static_cast<T const*>(dv), dv ? knots : 0, "dv"),
       region(C, "C")},
      {region(X, "X"), region(Y, "Y"), region(G, "G"), region(phi.values, knots, "the warp's values"),
       region(phi.grid.knots, phi.grid.knots ? knots : 0, "the warp's knots"),
       region(o.x_knots, o.x_knots ? X.max_length : 0, "x_knots"),
       region(o.y_knots, o.y_knots ? Y.max_length : 0, "y_knots")});
}

/// Everything the value and the VJP share: the mesh, Xt and Yt.
template <class T>
struct shared_state {
  shared_mesh<T> mesh;
  std::vector<T> xt, yt;  // (bx, P, d), (by, P, d)
  // C = sum_k L_k / 3 (|a[k]|^2 + <a[k], a[k+1]> + |a[k+1]|^2) element by element, with e the
  // flat index k d + c: sum_e on_diagonal[e] a_e^2 + sum_e off_diagonal[e] a_e a_{e+d}
  std::vector<T> on_diagonal, off_diagonal;  // (P d): (L_{k-1} + L_k) / 3; (P d - d): L_k / 3
  index_t P = 0, d = 0;

  shared_state(warp_view<T> phi, batch_view<T const> X, batch_view<T const> Y,
               shared_warp_options<T> const& o)
      : mesh(build_mesh(knot_grid<T>{o.x_knots, X.max_length}, knot_grid<T>{o.y_knots, Y.max_length},
                        phi, o.norm)),
        P(mesh.points()), d(X.channels) {
    interpolate_rows(X, mesh.sx, mesh.wx, xt, o.threads);
    interpolate_rows(Y, mesh.sy, mesh.wy, yt, o.threads);
    index_t const n = P * d, M = P - 1;
    on_diagonal.assign(static_cast<std::size_t>(n), T(0));
    off_diagonal.assign(static_cast<std::size_t>(n - d), T(0));
    for (index_t k = 0; k < M; ++k) {
      T const third = mesh.length[static_cast<std::size_t>(k)] / T(3);
      for (index_t c = 0; c < d; ++c) {
        on_diagonal[static_cast<std::size_t>(k * d + c)] += third;
        on_diagonal[static_cast<std::size_t>((k + 1) * d + c)] += third;
        off_diagonal[static_cast<std::size_t>(k * d + c)] = third;
      }
    }
  }
  T const* x_row(index_t i) const noexcept { return xt.data() + i * P * d; }
  T const* y_row(index_t j) const noexcept { return yt.data() + j * P * d; }

  /// C(i, j), from the differences a = Xt_i - Yt_j formed on the fly. Every piece's term is
  /// >= 0 and the off-diagonal sum is at most half the diagonal one, so C >= 0 to rounding of C
  /// itself (the expanded <Xt, Q Xt> + <Yt, Q Yt> - 2 <Xt, Q Yt> rounds at |x|^2).
  T cost(index_t i, index_t j) const noexcept {
    index_t const n = P * d;
    T const* xi = x_row(i);
    T const* yj = y_row(j);
    T const* const qd = on_diagonal.data();
    T const* const qo = off_diagonal.data();
    T on = T(0), off = T(0);
    for (index_t e = 0; e < n - d; ++e) {
      T const a = xi[e] - yj[e], next = xi[e + d] - yj[e + d];
      on += qd[e] * (a * a);
      off += qo[e] * (a * next);
    }
    for (index_t e = n - d; e < n; ++e) {
      T const a = xi[e] - yj[e];
      on += qd[e] * (a * a);
    }
    return on + off;
  }
};

/// Throws unless the VJP's gradients (GX, GY and dv's `knots` values, those given) are finite:
/// squared differences that overflow make them inf or NaN (0 * inf where G is 0).
template <class T>
void check_gradients_finite(batch_view<T> gx, batch_view<T> gy, T const* dv, index_t knots) {
  bool finite = true;
  for (index_t k = 0; gx.data && k < gx.batch * gx.max_length * gx.channels; ++k) finite &= gx.data[k] - gx.data[k] == T(0);
  for (index_t k = 0; gy.data && k < gy.batch * gy.max_length * gy.channels; ++k) finite &= gy.data[k] - gy.data[k] == T(0);
  for (index_t k = 0; dv && k < knots; ++k) finite &= dv[k] - dv[k] == T(0);
  resilin::detail::require(finite, "a gradient overflowed: the pairs' squared differences summed over the "
                                   "channels exceed the largest finite value; rescale the series");
}

/// Throws unless every cost in C is finite, naming the first pair that is not: with many
/// channels, samples within max_sample_magnitude can still overflow a sum of squared
/// differences, and distances() refuses such a fit as well.
template <class T>
void check_costs_finite(matrix_view<T> C) {
  for (index_t i = 0; i < C.rows; ++i)
    for (index_t j = 0; j < C.cols; ++j)
      resilin::detail::require(C(i, j) - C(i, j) == T(0), "the cost of pair (", i, ", ", j,
                               ") overflowed: its squared differences summed over the channels exceed "
                               "the largest finite value; rescale the series");
}

}  // namespace detail

/// C(i, j) = F(phi; X[i], Y[j]) for one warp phi shared by all pairs (X[i] warped onto the
/// common y axis). X and Y are not ragged; C is (X.batch, Y.batch). Each entry is formed from
/// the pair's differences (accurate also for near pairs in float, and >= 0); a cost that
/// overflows (many channels of samples near max_sample_magnitude) is refused with
/// resilin::invalid_argument naming the pair.
template <batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void cdist_shared(warp_view<value_of<XB>> phi, XB xs, YB ys, matrix_view<value_of<XB>> C,
                  shared_warp_options<value_of<XB>> const& o = {}) {
  using T = value_of<XB>;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  detail::check_shared(X, Y, phi, o);
  resilin::detail::require((C.data || X.batch * Y.batch == 0) && C.rows == X.batch &&
                               C.cols == Y.batch,
                           "C must be a non-null (", X.batch, ", ", Y.batch, "), got (", C.rows,
                           ", ", C.cols, ")");
  detail::check_shared_outputs<T>(X, Y, phi, {}, {}, {}, nullptr, C, o);
  detail::shared_state<T> const s(phi, X, Y, o);
  parallel_for(X.batch, o.threads, [&](index_t i, int) {
    for (index_t j = 0; j < Y.batch; ++j) C(i, j) = s.cost(i, j);
  });
  detail::check_costs_finite(C);
}

/// The VJP of cdist_shared with upstream G (X.batch, Y.batch): GX[i] = sum_j G(i, j)
/// dC(i, j)/dX[i], GY[j] = sum_i G(i, j) dC(i, j)/dY[j] (both overwritten; null data skips
/// one), and dv (K + 1, overwritten; null skips) = sum_ij G(i, j) dC(i, j)/dv. For logits, pass
/// dv to logits_backward(). If C.data is set it also receives the cost matrix. Costs (when C is
/// asked for) or gradients that overflow are refused with resilin::invalid_argument.
template <batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void cdist_shared_vjp(warp_view<value_of<XB>> phi, XB xs, YB ys,
                      matrix_view<value_of<XB> const> G, batch_view<value_of<XB>> gxs,
                      batch_view<value_of<XB>> gys, value_of<XB>* dv,
                      matrix_view<value_of<XB>> C = {},
                      shared_warp_options<value_of<XB>> const& o = {}) {
  using T = value_of<XB>;
  using resilin::detail::require;
  auto const X = as_const(xs);
  auto const Y = as_const(ys);
  detail::check_shared(X, Y, phi, o);
  require((G.data || X.batch * Y.batch == 0) && G.rows == X.batch && G.cols == Y.batch,
          "G must be a non-null (", X.batch, ", ", Y.batch, "), got (", G.rows, ", ", G.cols, ")");
  for (index_t k = 0; k < G.rows * G.cols; ++k)
    require(std::isfinite(G.data[k]), "G contains a non-finite value (", G.data[k], ") at ", k);
  if (gxs.data) resilin::detail::check_same_shape(gxs, X, "GX", "X");
  if (gys.data) resilin::detail::check_same_shape(gys, Y, "GY", "Y");
  require(!C.data || (C.rows == X.batch && C.cols == Y.batch), "C must be (", X.batch, ", ",
          Y.batch, "), got (", C.rows, ", ", C.cols, ")");
  detail::check_shared_outputs<T>(X, Y, phi, G, gxs, gys, dv, C, o);
  detail::shared_state<T> const s(phi, X, Y, o);
  index_t const P = s.P, d = s.d, n = P * d, bx = X.batch, by = Y.batch, M = P - 1;
  // Per x row i, from the differences a_ij: E_i = sum_j G_ij a_ij and, for dv, element by
  // element sum_j G_ij a_e^2 and sum_j G_ij a_e a_{e+d} (the brackets' parts, summed over the
  // channels and the rows i in order below: deterministic for any thread count). F_j = -sum_i
  // G_ij a_ij per y row.
  std::vector<T> E(s.xt.size()), Fy(s.yt.size()), SQ(dv ? s.xt.size() : 0), CR(dv ? s.xt.size() : 0);
  parallel_for(bx, o.threads, [&](index_t i, int) {
    T const* xi = s.x_row(i);
    T* const e = E.data() + i * n;
    std::fill(e, e + n, T(0));
    T* const sq = dv ? SQ.data() + i * n : nullptr;
    T* const cr = dv ? CR.data() + i * n : nullptr;
    if (dv) {
      std::fill(sq, sq + n, T(0));
      std::fill(cr, cr + n, T(0));
    }
    for (index_t j = 0; j < by; ++j) {
      T const g = G(i, j);
      T const* yj = s.y_row(j);
      if (C.data) C(i, j) = s.cost(i, j);
      if (!dv) {
        for (index_t k = 0; k < n; ++k) e[k] += g * (xi[k] - yj[k]);
        continue;
      }
      for (index_t k = 0; k < n; ++k) {  // element-wise passes (vectorised)
        T const a = xi[k] - yj[k];
        e[k] += g * a;
        sq[k] += g * (a * a);
      }
      for (index_t k = 0; k + d < n; ++k) cr[k] += g * ((xi[k] - yj[k]) * (xi[k + d] - yj[k + d]));
    }
  });
  if (C.data) detail::check_costs_finite(C);
  if (gys.data) parallel_for(by, o.threads, [&](index_t j, int) {
    T* const f = Fy.data() + j * n;
    T const* yj = s.y_row(j);
    std::fill(f, f + n, T(0));
    for (index_t i = 0; i < bx; ++i) {
      T const g = G(i, j);
      T const* xi = s.x_row(i);
      for (index_t k = 0; k < n; ++k) f[k] += g * (yj[k] - xi[k]);
    }
  });
  // Series gradients: 2 Q E_i scattered by Wx^T; 2 Q F_j by Wy^T.
  auto scatter = [&](batch_view<T> g, std::vector<T> const& src, std::vector<index_t> const& seg,
                     std::vector<T> const& w) {
    std::vector<std::vector<T>> scratch(static_cast<std::size_t>(resolve_threads(o.threads, g.batch)),
                                        std::vector<T>(static_cast<std::size_t>(n)));
    parallel_for(g.batch, o.threads, [&](index_t b, int wk) {
      T* q = scratch[static_cast<std::size_t>(wk)].data();
      detail::apply_mass(s.mesh.length, src.data() + b * n, q, d);
      series_view<T> const gb = g[b];
      for (index_t k = 0; k < gb.size(); ++k) gb.data[k] = T(0);
      for (index_t k = 0; k < P; ++k) {
        T const wk1 = w[static_cast<std::size_t>(k)], wk0 = T(1) - wk1;
        index_t const i = seg[static_cast<std::size_t>(k)];
        for (index_t c = 0; c < d; ++c) {
          gb(i, c) += T(2) * wk0 * q[k * d + c];
          gb(i + 1, c) += T(2) * wk1 * q[k * d + c];
        }
      }
    });
  };
  if (gxs.data) scatter(gxs, E, s.mesh.sx, s.mesh.wx);
  if (gys.data) scatter(gys, Fy, s.mesh.sy, s.mesh.wy);
  if (!dv) return detail::check_gradients_finite(gxs, gys, dv, 0);
  // Warp gradient: per piece, the G-weighted sums of the Leibniz terms (fixed-order reduction).
  std::vector<T> lo(static_cast<std::size_t>(M)), hi(static_cast<std::size_t>(M));
  knot_grid<T> const xg{o.x_knots, X.max_length};
  parallel_for(M, o.threads, [&](index_t k, int) {
    detail::piece<T> const& p = s.mesh.pieces[static_cast<std::size_t>(k)];
    T bracket = T(0);  // sum_ij G_ij (|a[k]|^2 + <a[k], a[k+1]> + |a[k+1]|^2)
    for (index_t i = 0; i < bx; ++i) {
      T const* sq = SQ.data() + i * n + k * d;
      T const* cr = CR.data() + i * n + k * d;
      for (index_t c = 0; c < d; ++c) bracket += sq[c] + cr[c] + sq[d + c];
    }
    // sum_ij G_ij <a_ij, m_i>, m_i the slope of x_i on the piece's x segment.
    T e0 = T(0), e1 = T(0);
    T const dxl = xg[p.sx + 1] - xg[p.sx];
    for (index_t i = 0; i < bx; ++i) {
      series_view<T const> const xs_i = X[i];
      T const* e = E.data() + i * n;
      for (index_t c = 0; c < d; ++c) {
        T const m = (xs_i(p.sx + 1, c) - xs_i(p.sx, c)) / dxl;
        e0 += e[k * d + c] * m;
        e1 += e[(k + 1) * d + c] * m;
      }
    }
    T const g0 = phi.knot(p.j), h = phi.knot(p.j + 1) - g0;
    T const sigma = (phi[p.j + 1] - phi[p.j]) / h;
    T const sl = o.norm == path_norm::l2 ? math::sqrt(T(1) + sigma * sigma) : T(1) + sigma;
    T const ds = o.norm == path_norm::l2 ? sigma / sl : T(1);
    T const dt = p.tau1 - p.tau0;
    T const w0 = (p.tau0 - g0) / h, w1 = (p.tau1 - g0) / h;
    T const i0 = dt * bracket / T(3);
    T const iew = (T(2) * e0 * w0 + e0 * w1 + e1 * w0 + T(2) * e1 * w1) / T(6);
    T const ie = (e0 + e1) / T(2);
    hi[static_cast<std::size_t>(k)] = T(2) * sl * dt * iew + ds / h * i0;
    lo[static_cast<std::size_t>(k)] = T(2) * sl * dt * (ie - iew) - ds / h * i0;
  });
  for (index_t j = 0; j <= phi.segments(); ++j) dv[j] = T(0);
  for (index_t k = 0; k < M; ++k) {
    index_t const j = s.mesh.pieces[static_cast<std::size_t>(k)].j;
    dv[j] += lo[static_cast<std::size_t>(k)];
    dv[j + 1] += hi[static_cast<std::size_t>(k)];
  }
  detail::check_gradients_finite(gxs, gys, dv, phi.segments() + 1);
}

}  // namespace resilin::fcdtw

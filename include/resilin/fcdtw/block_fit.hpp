#pragma once
// FastCDTW's Adam fit of one pair by a block of threads (spec/cdtw.md B.4.2, "a fixed-order
// block reduction for few long pairs"): the fit of solver.hpp (detail::adam_fit) with each
// step's sums split over the block. Thread t owns a contiguous share of the K logits (their
// softplus, the warp's cumulative sum, the logit backward and the Adam update) and the warp
// segments t, t + threads, ... (the closed form's pieces and warp adjoints, segments.hpp). The
// block's leader adds the threads' partial sums in thread order, so a fit gives the same bits
// run to run and whatever order the threads run in; they differ from the host fit's
// sequential sums by rounding only.
//
// Written against an executor (backend/device/wavefront.hpp): ex.for_each(f) runs f(t, threads)
// on every thread, ex.sync() separates the phases, ex.leader() picks one thread. The CUDA
// kernel runs it with the CTA executor; the tests run it on the CPU with emulated_cta.
// RESILIN_HD, no allocation, no exceptions.
#include <resilin/core/config.hpp>
#include <resilin/core/math.hpp>
#include <resilin/fcdtw/segments.hpp>
#include <resilin/fcdtw/solver.hpp>

namespace resilin::fcdtw::detail {

/// The block's shared scratch: two values per thread and a few scalars.
template <class T>
struct block_scratch {
  T* a;        // (threads)
  T* b;        // (threads)
  T* scalars;  // (block_scalars)
};
inline constexpr int block_scalars = 4;
RESILIN_HD constexpr index_t block_scratch_size(int threads) noexcept { return 2 * index_t{threads} + block_scalars; }

template <class T>
RESILIN_HD block_scratch<T> block_scratch_in(T* p, int threads) noexcept {
  return {p, p + threads, p + 2 * threads};
}

/// Values of T a block fit with K segments needs in global memory: the fit's workspace and
/// two adjoint slots per segment.
RESILIN_HD constexpr index_t block_fit_size(index_t K) noexcept { return fit_workspace_size(K) + 2 * K; }

/// Thread t's contiguous share [lo, hi) of K items among n threads.
struct item_share {
  index_t lo, hi;
};
RESILIN_HD inline item_share share_of(index_t K, int t, int n) noexcept {
  return {K * t / n, K * (t + 1) / n};
}

template <class T>
RESILIN_HD T sum_in_order(T const* a, int n) noexcept {
  T acc = T(0);
  for (int t = 0; t < n; ++t) acc += a[t];
  return acc;
}
template <class T>
RESILIN_HD T max_in_order(T const* a, int n) noexcept {
  T m = a[0];
  for (int t = 1; t < n; ++t) m = a[t] > m ? a[t] : m;
  return m;
}

// Scalar slots.
inline constexpr int normaliser_slot = 0;  // the increments' normaliser
inline constexpr int rescale_slot = 1;     // softplus: the largest increment when the sum overflowed, else 0
inline constexpr int result_slot = 2;      // the logit backward's mean; at the end, D
inline constexpr int shift_slot = 3;       // softmax: the largest logit

/// p_i /= scalars[slot] over each thread's share; a[t]: the share's new sum.
template <class T, class Exec>
RESILIN_HD void divide_shares(Exec const& ex, T* p, index_t K, block_scratch<T> const& s,
                              int slot) noexcept {
  ex.for_each([&](int t, int n) {
    T const by = s.scalars[slot];
    auto const [lo, hi] = share_of(K, t, n);
    T sum = T(0);
    for (index_t i = lo; i < hi; ++i) sum += (p[i] /= by);
    s.a[t] = sum;
  });
}

/// ws.v (and ws.p, and ws.e for softplus) from the logits ws.r, as warp_from_logits_kept():
/// the increments, their normaliser in scalars[normaliser_slot] (scalars[rescale_slot] != 0
/// when an overflowed sum was rescaled, as increments() does), their cumulative sum clamped to
/// [0, 1]. Each thread's knots are also clamped to the leader's running sum at the end of its
/// share, which keeps v monotone across shares under rounding.
template <class T, class Exec>
RESILIN_HD void block_warp(Exec const& ex, int threads, warp_map map, fit_workspace<T> const& ws,
                           index_t K, block_scratch<T> const& s) noexcept {
  if (map == warp_map::softplus_cumsum) {
    ex.for_each([&](int t, int n) {
      auto const [lo, hi] = share_of(K, t, n);
      T sum = T(0), largest = T(0);
      for (index_t i = lo; i < hi; ++i) {
        T const ei = exp_neg_abs(ws.r[i]);
        ws.e[i] = ei;
        sum += (ws.p[i] = softplus_from(ws.r[i], ei));
        largest = ws.p[i] > largest ? ws.p[i] : largest;
      }
      s.a[t] = sum;
      s.b[t] = largest;
    });
    ex.sync();
    if (ex.leader()) {
      T const total = sum_in_order(s.a, threads) + normaliser_eps<T>();
      T const largest = max_in_order(s.b, threads);
      s.scalars[normaliser_slot] = total;
      s.scalars[rescale_slot] = !(total < math::infinity<T>()) && largest > T(0) ? largest : T(0);
    }
    ex.sync();
    if (s.scalars[rescale_slot] > T(0)) {  // the same for every thread
      // the sum overflowed: the same ratios from the increments scaled by the largest
      divide_shares(ex, ws.p, K, s, rescale_slot);
      ex.sync();
      if (ex.leader())
        s.scalars[normaliser_slot] =
            sum_in_order(s.a, threads) + normaliser_eps<T>() / s.scalars[rescale_slot];
      ex.sync();
    }
  } else {
    ex.for_each([&](int t, int n) {
      auto const [lo, hi] = share_of(K, t, n);
      T m = ws.r[0];  // a logit, so an empty share does not move the maximum
      for (index_t i = lo; i < hi; ++i) m = ws.r[i] > m ? ws.r[i] : m;
      s.b[t] = m;
    });
    ex.sync();
    if (ex.leader()) s.scalars[shift_slot] = max_in_order(s.b, threads);
    ex.sync();
    ex.for_each([&](int t, int n) {
      auto const [lo, hi] = share_of(K, t, n);
      T sum = T(0);
      for (index_t i = lo; i < hi; ++i) sum += (ws.p[i] = math::exp(ws.r[i] - s.scalars[shift_slot]));
      s.a[t] = sum;
    });
    ex.sync();
    if (ex.leader()) {
      s.scalars[normaliser_slot] = sum_in_order(s.a, threads);
      s.scalars[rescale_slot] = T(0);
    }
    ex.sync();
  }
  divide_shares(ex, ws.p, K, s, normaliser_slot);
  ex.sync();
  if (ex.leader()) {  // a: the sum before each share; b: after it
    T acc = T(0);
    for (int t = 0; t < threads; ++t) {
      T const mine = s.a[t];
      s.a[t] = acc;
      acc += mine;
      s.b[t] = acc;
    }
  }
  ex.sync();
  ex.for_each([&](int t, int n) {
    auto const [lo, hi] = share_of(K, t, n);
    T const bound = s.b[t] < T(1) ? s.b[t] : T(1);
    T acc = s.a[t];
    if (t == 0) ws.v[0] = T(0);
    for (index_t i = lo; i < hi; ++i) {
      acc += ws.p[i];
      ws.v[i + 1] = i + 1 == K ? T(1) : (acc < bound ? acc : bound);
    }
  });
  ex.sync();
}

/// dF/dr into ws.dr from the segment slots at the logits ws.r, as logits_backward_kept()
/// (softplus, nothing rescaled), logits_backward() (softplus after a rescale: it recomputes
/// the normaliser from the logits) or the softmax backward: gp_i = sum_{i<j<K} dv_j by a
/// suffix sum, then its mean under p.
template <class T, class Exec>
RESILIN_HD void block_logits_backward(Exec const& ex, int threads, warp_map map,
                                      fit_workspace<T> const& ws, T const* slots, index_t K,
                                      block_scratch<T> const& s) noexcept {
  bool const softplus_map = map == warp_map::softplus_cumsum;
  bool const recompute = softplus_map && s.scalars[rescale_slot] > T(0);
  ex.for_each([&](int t, int n) {
    auto const [lo, hi] = share_of(K, t, n);
    T sum = T(0);
    for (index_t i = lo < 1 ? 1 : lo; i < hi; ++i) sum += combine_slots(slots, K, i);
    s.a[t] = sum;
    if (recompute) {
      T sp = T(0);
      for (index_t i = lo; i < hi; ++i) sp += softplus(ws.r[i]);
      s.b[t] = sp;
    }
  });
  ex.sync();
  if (ex.leader()) {  // a: the sum after each share
    T acc = T(0);
    for (int t = threads - 1; t >= 0; --t) {
      T const mine = s.a[t];
      s.a[t] = acc;
      acc += mine;
    }
    if (recompute) s.scalars[normaliser_slot] = sum_in_order(s.b, threads) + normaliser_eps<T>();
  }
  ex.sync();
  ex.for_each([&](int t, int n) {
    T const total = s.scalars[normaliser_slot];
    auto const [lo, hi] = share_of(K, t, n);
    T acc = s.a[t];
    for (index_t i = hi - 1; i >= lo; --i) {
      ws.dr[i] = acc;
      if (i >= 1) acc += combine_slots(slots, K, i);
    }
    T mean = T(0);
    for (index_t i = lo; i < hi; ++i)
      mean += (recompute ? softplus(ws.r[i]) / total : ws.p[i]) * ws.dr[i];
    s.b[t] = mean;
  });
  ex.sync();
  if (ex.leader()) s.scalars[result_slot] = sum_in_order(s.b, threads);
  ex.sync();
  ex.for_each([&](int t, int n) {
    T const total = s.scalars[normaliser_slot], mean = s.scalars[result_slot];
    auto const [lo, hi] = share_of(K, t, n);
    for (index_t i = lo; i < hi; ++i) {
      T const centred = ws.dr[i] - mean;
      if (!softplus_map) ws.dr[i] = ws.p[i] * centred;
      else if (recompute) ws.dr[i] = centred / total * sigmoid(ws.r[i]);
      else ws.dr[i] = centred / total * sigmoid_from(ws.r[i], ws.e[i]);
    }
  });
  ex.sync();
}

/// The fit of detail::fit_from_identity() by a block of `threads` threads (the executor's
/// count; s holds block_scratch_size(threads) values): o.steps Adam steps from zero logits (or
/// from the K logits at `start`, as fit_from_logits(); start may be ws.r) in ws, segment
/// adjoints in slots (2K values). Returns D, F at the final warp (ws.v), to every thread; NaN
/// when the logits or F overflowed (detail::converged; the host API refuses those fits).
template <class T, class Exec>
RESILIN_HD T block_fit(Exec const& ex, int threads, interpolant<T> const& x,
                       interpolant<T> const& y, index_t K, fit_options const& o,
                       fit_workspace<T> const& ws, T* slots, block_scratch<T> const& s,
                       T const* start = nullptr) noexcept {
  T const lr = static_cast<T>(o.lr), b1 = static_cast<T>(o.beta1), b2 = static_cast<T>(o.beta2);
  T const eps = static_cast<T>(o.eps);
  warp_view<T> const phi = uniform_warp<T>(ws.v, K);
  ex.for_each([&](int t, int n) {
    auto const [lo, hi] = share_of(K, t, n);
    for (index_t i = lo; i < hi; ++i) {
      ws.r[i] = start ? start[i] : T(0);
      ws.m[i] = ws.s[i] = T(0);
    }
  });
  ex.sync();
  T b1t = T(1), b2t = T(1);  // beta^t, by products as adam_fit
  for (index_t step = 0; step < o.steps; ++step) {
    block_warp(ex, threads, o.map, ws, K, s);
    ex.for_each([&](int t, int n) { strided_segments(x, y, phi, o.norm, t, n, slots); });
    ex.sync();
    block_logits_backward(ex, threads, o.map, ws, slots, K, s);
    b1t *= b1;
    b2t *= b2;
    ex.for_each([&](int t, int n) {
      auto const [lo, hi] = share_of(K, t, n);
      for (index_t i = lo; i < hi; ++i) {
        T const g = ws.dr[i];
        ws.m[i] = b1 * ws.m[i] + (T(1) - b1) * g;
        ws.s[i] = b2 * ws.s[i] + (T(1) - b2) * g * g;
        T const mhat = ws.m[i] / (T(1) - b1t), shat = ws.s[i] / (T(1) - b2t);
        ws.r[i] -= lr * mhat / (math::sqrt(shat) + eps);
      }
    });
    ex.sync();
  }
  block_warp(ex, threads, o.map, ws, K, s);
  ex.for_each([&](int t, int n) {
    s.a[t] = strided_segments(x, y, phi, o.norm, t, n, static_cast<T*>(nullptr));
    auto const [lo, hi] = share_of(K, t, n);
    bool finite = true;
    for (index_t i = lo; i < hi; ++i) finite = finite && ws.r[i] - ws.r[i] == T(0);  // inf, NaN: no
    s.b[t] = finite ? T(0) : T(1);
  });
  ex.sync();
  if (ex.leader()) {
    T const value = sum_in_order(s.a, threads);
    bool const diverged = sum_in_order(s.b, threads) > T(0) || !(value - value == T(0));
    s.scalars[result_slot] = diverged ? math::infinity<T>() - math::infinity<T>() : value;
  }
  ex.sync();
  return s.scalars[result_slot];
}

}  // namespace resilin::fcdtw::detail

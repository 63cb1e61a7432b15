#pragma once
// The cost structure shared by MSM-type measures: into cell (i, j)
//     diag (move)              move(x_i, y_j)
//     up   (split/merge in x)  transition(x_i, x_{i-1}, y_j)
//     left (split/merge in y)  transition(y_j, y_{j-1}, x_i)
// summed over channels. A cost model supplies move / move_partial (d move / d first argument;
// the second gets its negative) and transition / transition_grad, and forwards its step() and
// step_grad() to the two functions here, written once.
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/views.hpp>

namespace resilin {

/// The partials of a split/merge (transition) cost T(v, p, o) with respect to its arguments.
template <class T>
struct transition_partials {
  T v;  // the value that is split or merged
  T p;  // its predecessor in the same series
  T o;  // the value of the other series it is aligned with
};

namespace detail {
template <class Cost, class T>
RESILIN_HD step3<T> msm_step(Cost const& self, series_view<T const> x, series_view<T const> y,
                             index_t i, index_t j) noexcept {
  T const* xi = x.row(i);
  T const* yj = y.row(j);
  // i = 0 (j = 0): the up (left) move has no predecessor; its cost is never used, and x[-1]
  // (y[-1]) is never read.
  T const* xp = i > 0 ? x.row(i - 1) : nullptr;
  T const* yp = j > 0 ? y.row(j - 1) : nullptr;
  T diag = T(0), up = T(0), left = T(0);
  for (index_t k = 0; k < x.channels; ++k) {
    diag += self.move(xi[k], yj[k]);
    if (xp) up += self.transition(xi[k], xp[k], yj[k]);
    if (yp) left += self.transition(yj[k], yp[k], xi[k]);
  }
  return {diag, up, left};
}

template <class Cost, class T>
RESILIN_HD void msm_step_grad(Cost const& self, series_view<T const> x, series_view<T const> y,
                              index_t i, index_t j, step3<T> usage, series_view<T> gx,
                              series_view<T> gy) noexcept {
  T const* xi = x.row(i);
  T const* yj = y.row(j);
  T* gxi = gx.row(i);
  T* gyj = gy.row(j);
  for (index_t k = 0; k < x.channels; ++k) {
    if (usage.diag != T(0)) {
      T const g = usage.diag * self.move_partial(xi[k], yj[k]);
      gxi[k] += g;
      gyj[k] -= g;
    }
    if (i > 0 && usage.up != T(0)) {
      transition_partials<T> const d = self.transition_grad(xi[k], x.row(i - 1)[k], yj[k]);
      gxi[k] += usage.up * d.v;
      gx.row(i - 1)[k] += usage.up * d.p;
      gyj[k] += usage.up * d.o;
    }
    if (j > 0 && usage.left != T(0)) {
      transition_partials<T> const d = self.transition_grad(yj[k], y.row(j - 1)[k], xi[k]);
      gyj[k] += usage.left * d.v;
      gy.row(j - 1)[k] += usage.left * d.p;
      gxi[k] += usage.left * d.o;
    }
  }
}
}  // namespace detail

}  // namespace resilin

// Host-backend references for the CUDA tests (see host_reference.hpp).
#include "host_reference.hpp"
#include <type_traits>
#include <resilin/resilin.hpp>

namespace resilin_test {
namespace {
template <class T, class F>
void with_measure(ref_measure const& m, F&& f) {
  using cost_kind = ref_measure::cost_kind;
  if (m.cost == cost_kind::soft_msm) {
    auto meas = resilin::measures::soft_msm<T>(static_cast<T>(m.gamma), static_cast<T>(m.c), m.band);
    meas.divergence = m.divergence;
    f(meas);
  } else if (m.cost == cost_kind::msm) {
    auto meas = resilin::measures::msm(m.c, m.band);
    meas.divergence = m.divergence;
    f(meas);
  } else if (m.gamma > 0) {
    auto meas = resilin::measures::soft_dtw<T>(static_cast<T>(m.gamma), m.band);
    meas.divergence = m.divergence;
    if constexpr (std::is_same_v<T, double>) {  // the wrapper's device check runs in double
      if (m.warp_penalty > 0) return f(resilin::with_warp_penalty(meas, m.warp_penalty));
    }
    f(meas);
  } else {
    auto meas = resilin::measures::dtw().with_band(m.band);
    meas.divergence = m.divergence;
    f(meas);
  }
}
}  // namespace

template <class T>
void ref_values(ref_measure const& m, resilin::batch_view<T const> X, resilin::batch_view<T const> Y,
                std::span<T> out) {
  with_measure<T>(m, [&](auto const& meas) { resilin::values(resilin::host, meas, X, Y, out); });
}
template <class T>
void ref_pairwise(ref_measure const& m, resilin::batch_view<T const> X,
                  resilin::batch_view<T const> Y, resilin::matrix_view<T> out) {
  with_measure<T>(m, [&](auto const& meas) { resilin::pairwise(resilin::host, meas, X, Y, out); });
}
template <class T>
void ref_values_and_grads(ref_measure const& m, resilin::batch_view<T const> X,
                          resilin::batch_view<T const> Y, std::span<T> out,
                          resilin::batch_view<T> gx, resilin::batch_view<T> gy,
                          std::span<T const> upstream) {
  with_measure<T>(m, [&](auto const& meas) {
    resilin::values_and_grads(resilin::host, meas, X, Y, out, gx, gy, upstream);
  });
}
template <class T>
void ref_pairwise_grads(ref_measure const& m, resilin::batch_view<T const> X,
                        resilin::batch_view<T const> Y, resilin::batch_view<T> gx,
                        resilin::matrix_view<T> out, resilin::matrix_view<T const> weights) {
  with_measure<T>(m, [&](auto const& meas) { resilin::pairwise_grads(resilin::host, meas, X, Y, gx, out, weights); });
}
template <class T>
T ref_alignment_matrix(ref_measure const& m, resilin::series_view<T const> x,
                       resilin::series_view<T const> y, resilin::matrix_view<T> e) {
  T v{};
  with_measure<T>(m, [&](auto const& meas) { v = resilin::alignment_matrix(meas, x, y, e); });
  return v;
}

#define RESILIN_TEST_INSTANTIATE(T)                                                              \
  template void ref_values<T>(ref_measure const&, resilin::batch_view<T const>,                 \
                              resilin::batch_view<T const>, std::span<T>);                      \
  template void ref_pairwise<T>(ref_measure const&, resilin::batch_view<T const>,               \
                                resilin::batch_view<T const>, resilin::matrix_view<T>);         \
  template void ref_values_and_grads<T>(ref_measure const&, resilin::batch_view<T const>,       \
                                        resilin::batch_view<T const>, std::span<T>,             \
                                        resilin::batch_view<T>, resilin::batch_view<T>,         \
                                        std::span<T const>);                                    \
  template void ref_pairwise_grads<T>(ref_measure const&, resilin::batch_view<T const>,            \
                                      resilin::batch_view<T const>, resilin::batch_view<T>,         \
                                      resilin::matrix_view<T>, resilin::matrix_view<T const>);      \
  template T ref_alignment_matrix<T>(ref_measure const&, resilin::series_view<T const>,         \
                                     resilin::series_view<T const>, resilin::matrix_view<T>);
RESILIN_TEST_INSTANTIATE(float)
RESILIN_TEST_INSTANTIATE(double)
#undef RESILIN_TEST_INSTANTIATE
}  // namespace resilin_test

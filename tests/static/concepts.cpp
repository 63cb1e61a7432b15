// Concept conformance of every policy; compiling this file is the test.
#include <functional>
#include <span>
#include <vector>
#include <resilin/resilin.hpp>

namespace r = resilin;

static_assert(r::cost_model<r::dtw_cost<>, float>);
static_assert(r::cost_model<r::dtw_cost<>, double>);
static_assert(r::differentiable_cost_model<r::dtw_cost<r::l1_distance>, double>);
static_assert(r::differentiable_cost_model<r::dtw_cost<r::half_squared_euclidean>, float>);
static_assert(r::differentiable_cost_model<r::transposed_cost<r::dtw_cost<>>, double>);
static_assert(r::smoothing_rule<r::hard_min, float>);
static_assert(r::smoothing_rule<r::hard_min, double>);
static_assert(r::smoothing_rule<r::soft_min<double>, double>);
static_assert(r::smoothing_rule<r::soft_min<float>, float>);
static_assert(!r::smoothing_rule<std::function<float(float)>, float>);
static_assert(r::second_order_smoothing<r::hard_min, double>);
static_assert(r::second_order_smoothing<r::soft_min<float>, float>);
static_assert(!r::second_order_smoothing<std::function<float(float)>, float>);
static_assert(!r::cost_model<std::function<float(float)>, float>);
static_assert(r::execution_backend<r::host_backend>);
static_assert(!r::execution_backend<int>);
static_assert(r::series_like<r::series_view<float const>>);
static_assert(!r::series_like<r::series_view<int>>);
static_assert(r::batch_like<r::batch_view<double>>);

// The band reduces to |i - j| <= R for n = m and is symmetric under transposition.
constexpr bool band_square_ok() {
  auto const g = r::band_geometry::make(10, 10, 2);
  for (r::index_t i = 0; i < 10; ++i)
    for (r::index_t j = 0; j < 10; ++j)
      if (g.contains(i, j) != (i - j <= 2 && j - i <= 2)) return false;
  return true;
}
static_assert(band_square_ok());
constexpr bool band_symmetric_ok() {
  auto const g = r::band_geometry::make(7, 13, 2), h = r::band_geometry::make(13, 7, 2);
  for (r::index_t i = 0; i < 7; ++i)
    for (r::index_t j = 0; j < 13; ++j)
      if (g.contains(i, j) != h.contains(j, i)) return false;
  return true;
}
static_assert(band_symmetric_ok());

// make_batch refuses lengths in a temporary container (the view would keep a dangling pointer)
// and takes them from a named one or a span.
template <class Lengths>
constexpr bool batch_takes = requires(std::vector<double>& v, Lengths&& l) {
  r::make_batch(v, 2, 5, 1, static_cast<Lengths&&>(l));
};
static_assert(!batch_takes<std::vector<r::index_t>>);
static_assert(batch_takes<std::vector<r::index_t>&>);
static_assert(batch_takes<std::vector<r::index_t> const&>);
static_assert(batch_takes<std::span<r::index_t const>>);
template <class Lengths>
constexpr bool span_batch_takes = requires(std::span<double> s, Lengths&& l) {
  r::make_batch(s, 2, 5, 1, static_cast<Lengths&&>(l));
};
static_assert(!span_batch_takes<std::vector<r::index_t>>);
static_assert(span_batch_takes<std::vector<r::index_t>&>);

#pragma once
// The host strip traversal driven directly (below the front end's choices), for tests that
// compare its storage modes: R whole, R with the backward's weights and terms (`side` packs per
// vector), or checkpointed (the slot of the row above every k-th strip; the backward recomputes
// the strips, and for k > 1 first the slots of each segment of k strips).
#include <vector>
#include <support/catch.hpp>
#include <resilin/backend/host/pair.hpp>

namespace resilin_test {

/// Value and gradients of one pair (x: n x d, y: m x d, row-major) through forward + backward
/// (Lanes: the front end's lane engine of the cost model, or another).
template <class T, class Cost, class Smooth, class Lanes = resilin::host_detail::lane_cost<T, Cost>>
T strip_value_and_grad(resilin::measure<Cost, Smooth> const& m, std::vector<T> const& x,
                       std::vector<T> const& y, resilin::index_t d, resilin::index_t side,
                       resilin::index_t checkpoint_every, std::vector<T>& gx, std::vector<T>& gy) {
  namespace rh = resilin::host_detail;
  resilin::index_t const n = static_cast<resilin::index_t>(x.size()) / d,
                         k = static_cast<resilin::index_t>(y.size()) / d;
  rh::pair_problem<T, Cost, Smooth> const p{m.cost, m.smooth, {x.data(), n, d}, {y.data(), k, d},
                                            m.band.geometry(n, k)};
  Lanes lanes;
  std::vector<T> row, g_up, g_diag;
  rh::strip_table<T> table;
  gx.assign(x.size(), T(0));
  gy.assign(y.size(), T(0));
  T const v = rh::forward(p, lanes, row, &table, side, checkpoint_every);
  REQUIRE(table.checkpointed() == (checkpoint_every > 0));
  rh::backward(p, table, T(1), lanes, g_up, g_diag, nullptr, resilin::series_view<T>{gx.data(), n, d},
               resilin::series_view<T>{gy.data(), k, d});
  return v;
}

/// The same through the lane engine Lanes, R whole: the vectorised engines against the
/// generic one.
template <class Lanes, class T, class Cost, class Smooth>
T strips_with_lanes(resilin::measure<Cost, Smooth> const& m, std::vector<T> const& x, std::vector<T> const& y,
                    resilin::index_t d, std::vector<T>& gx, std::vector<T>& gy) {
  return strip_value_and_grad<T, Cost, Smooth, Lanes>(m, x, y, d, 0, 0, gx, gy);
}

}  // namespace resilin_test

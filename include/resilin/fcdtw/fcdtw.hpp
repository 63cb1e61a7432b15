#pragma once
// FastCDTW (spec/cdtw.md part B), host umbrella: pure C++20, compiles with g++ alone.
//   interpolant.hpp  PL interpolants of series on uniform or explicit knot grids
//   warp.hpp         PL warps from logits (softplus_cumsum, softmax_cumsum) and their backward
//   objective.hpp    the closed-form objective F(phi; x, y) and its gradients (RESILIN_HD)
//   solver.hpp       Adam on the warp logits: fit(), distances(), pairwise_distances()
//   grid_start.hpp   the fit's start at the grid CDTW alignment (fit_options::init = grid)
//   segments.hpp     the closed form one warp segment at a time (the GPU's block layouts)
//   block_fit.hpp    the fit by a block of threads (the GPU's block_per_pair fit)
//   shared_warp.hpp  one warp for all pairs: cdist_shared() and its VJP
//   monte_carlo.hpp  the unbiased Monte Carlo estimator for smooth warps
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/shared_warp.hpp>
#include <resilin/fcdtw/solver.hpp>
#include <resilin/fcdtw/warp.hpp>
#include <resilin/fcdtw/monte_carlo.hpp>
#include <resilin/fcdtw/rng.hpp>

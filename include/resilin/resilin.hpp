#pragma once
// resilin: differentiable elastic alignment of time series. Host umbrella: pure C++20,
// compiles with g++ alone. CUDA users include <resilin/cuda.cuh> instead.
#include <resilin/version.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/cdtw.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/cost/msm.hpp>
#include <resilin/cost/soft_msm.hpp>
#include <resilin/cost/warp_penalty.hpp>
#include <resilin/smoothing/hard_min.hpp>
#include <resilin/smoothing/soft_min.hpp>
#include <resilin/backend/host.hpp>
#include <resilin/alignment.hpp>
#include <resilin/sharp.hpp>
#include <resilin/search/lower_bound.hpp>
#include <resilin/search/nearest.hpp>
#include <resilin/fcdtw/fcdtw.hpp>

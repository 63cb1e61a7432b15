#pragma once
// resilin::learn: barycentres (L-BFGS for soft measures, DBA for DTW, MBA for MSM, alternating
// warp/centroid steps for FastCDTW), the nearest-centroid classifier, k-means and their
// metrics. Needs Eigen and LBFGS++.
#include <resilin/learn/barycenter.hpp>
#include <resilin/learn/dba.hpp>
#include <resilin/learn/fcdtw_barycenter.hpp>
#include <resilin/learn/fcdtw_kmeans.hpp>
#include <resilin/learn/kmeans.hpp>
#include <resilin/learn/lbfgs_barycenter.hpp>
#include <resilin/learn/loss.hpp>
#include <resilin/learn/mba.hpp>
#include <resilin/learn/metrics.hpp>
#include <resilin/learn/nearest_centroid.hpp>
#include <resilin/learn/options.hpp>

// 02_barycentres: soft-DTW barycentres, nearest-centroid classification and k-means on
// synthetic Cylinder-Bell-Funnel series (resilin::learn).
#include <cstdio>
#include <string>
#include <vector>
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;

int main() {
  auto train = r::make_cbf<double>({.per_class = 10, .length = 128, .seed = 1});
  auto test = r::make_cbf<double>({.per_class = 50, .length = 128, .seed = 2});
  r::z_normalise(train);
  r::z_normalise(test);

  // example-begin barycentres
  auto const m = r::measures::soft_dtw(1.0);
  rl::barycenter_options opt;  // L-BFGS for soft measures, DBA for dtw, MBA for msm
  opt.max_iter = 50;
  rl::barycenter_result<double> const z = rl::barycenter(m, train.view(), {}, opt);
  auto const model = rl::fit_nearest_centroid(m, train, opt);  // one barycentre per class
  std::vector<std::string> const labels = rl::predict(m, model, test);

  rl::kmeans_options ko;
  ko.k = 3;
  ko.restarts = 2;
  ko.seed = 1;
  ko.barycenter.max_iter = 20;
  auto const km = rl::kmeans(m, train.view(), ko);
  auto const truth = rl::encode_labels(std::span<std::string const>(train.labels));
  double const ari = rl::adjusted_rand_index(std::span<r::index_t const>(truth),
                                             std::span<r::index_t const>(km.assignments));
  // example-end barycentres

  double const acc = rl::accuracy(std::span<std::string const>(test.labels),
                                  std::span<std::string const>(labels));
  std::printf("barycentre of all %lld training series: length %lld, loss %.4f, %d iterations\n",
              static_cast<long long>(train.size()), static_cast<long long>(z.length), z.loss,
              z.iterations);
  std::printf("nearest centroid (soft-DTW, gamma 1): accuracy %.4f on %lld test series\n", acc,
              static_cast<long long>(test.size()));
  std::printf("k-means of the training series (k = 3, soft-DTW): ARI %.4f, inertia %.4f\n", ari, km.inertia);
  return acc > 0.8 ? 0 : 1;  // CBF is easy for soft-DTW centroids: a low accuracy is a bug
}

// The nearest-centroid classifier on synthetic CBF: soft-DTW, DBA and MBA centroids reach high
// accuracy on a held-out set; predictions agree with a direct argmin; bad input.
#include <span>
#include <string>
#include <vector>
#include <support/catch.hpp>
#include <host/helpers.hpp>
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;

namespace {
r::dataset<double> cbf(r::index_t per_class, std::uint64_t seed) {
  return r::make_cbf<double>({.per_class = per_class, .length = 64, .seed = seed});
}

template <class Measure>
double fit_and_score(Measure const& m, r::dataset<double> const& train, r::dataset<double> const& test,
                     int max_iter) {
  rl::barycenter_options opt;
  opt.max_iter = max_iter;
  auto const model = rl::fit_nearest_centroid(m, train, opt);
  REQUIRE(model.classes == std::vector<std::string>{"1", "2", "3"});
  REQUIRE(model.centroids.size() == 3u);
  auto const pred = rl::predict(m, model, test, 2);
  REQUIRE(pred.size() == test.labels.size());
  // each prediction is the class of the centroid with the lowest measure
  for (r::index_t i = 0; i < test.size(); ++i) {
    std::size_t best = 0;
    double best_value = 0;
    for (std::size_t c = 0; c < 3; ++c) {
      double const v = r::value(m, test.series(i), model.centroids[c].view());
      if (c == 0 || v < best_value) { best = c; best_value = v; }
    }
    CHECK(pred[static_cast<std::size_t>(i)] == model.classes[best]);
  }
  return rl::accuracy(std::span<std::string const>(test.labels), std::span<std::string const>(pred));
}
}  // namespace

TEST_CASE("nearest centroid classifies CBF", "[learn][centroid]") {
  auto const train = cbf(8, 1);
  auto const test = cbf(20, 2);
  double const soft = fit_and_score(r::measures::soft_dtw(1.0), train, test, 50);
  double const dba = fit_and_score(r::measures::dtw(), train, test, 10);
  double const mba = fit_and_score(r::measures::msm(1.0), train, test, 10);
  INFO("accuracy: soft-DTW " << soft << ", DBA " << dba << ", MBA " << mba);
  CHECK(soft >= 0.9);
  CHECK(dba >= 0.9);
  CHECK(mba >= 0.9);
}

TEST_CASE("nearest centroid refuses bad input", "[learn][centroid]") {
  r::dataset<double> const empty;
  auto const m = r::measures::soft_dtw(1.0);
  CHECK_THROWS_AS(rl::fit_nearest_centroid(m, empty), r::invalid_argument);
  auto const train = cbf(2, 3);
  rl::barycenter_options opt;
  opt.max_iter = 2;
  auto const model = rl::fit_nearest_centroid(m, train, opt);
  CHECK_THROWS_AS(rl::predict(m, model, empty), r::invalid_argument);
  r::dataset<double> two_channels;
  two_channels.channels = 2;
  std::vector<double> const v(128, 0.5);
  two_channels.push_back("1", std::span<double const>(v));
  CHECK(resilin_test::message_of<r::invalid_argument>([&] { rl::predict(m, model, two_channels); })
            .find("channels") != std::string::npos);
  rl::nearest_centroid_model<double> const none;
  CHECK_THROWS_AS(rl::predict(m, none, train), r::invalid_argument);

  // datasets and models filled by hand whose fields disagree (they read and wrote out of bounds)
  auto const message = [](auto&& f) { return resilin_test::message_of<r::invalid_argument>(f); };
  auto more_labels = train;
  more_labels.labels.push_back("1");
  CHECK(message([&] { rl::fit_nearest_centroid(m, more_labels, opt); }).find("labels for") != std::string::npos);
  auto short_values = train;
  short_values.values.resize(short_values.values.size() - 1);
  CHECK(message([&] { rl::fit_nearest_centroid(m, short_values, opt); }).find("values") != std::string::npos);
  CHECK(message([&] { rl::predict(m, model, short_values); }).find("predict: the test set") != std::string::npos);
  auto long_length = train;
  long_length.lengths[1] = long_length.max_length + 1;
  CHECK(message([&] { rl::predict(m, model, long_length); }).find("lengths[1]") != std::string::npos);
  auto wide_centroid = model;
  wide_centroid.centroids[1].values.resize(100);
  CHECK(message([&] { rl::predict(m, wide_centroid, train); }).find("centroid 1 holds 100 values") !=
        std::string::npos);
}

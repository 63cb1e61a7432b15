// aeon / sktime .ts files: univariate, multivariate, unequal lengths, and every refusal with
// its line number.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include <support/catch.hpp>
#include <resilin/apps/ts_file.hpp>

namespace r = resilin;

namespace {
r::dataset<double> parse(std::string const& text) {
  std::istringstream in(text);
  return r::parse_ts<double>(in, "t.ts");
}
std::string error_of(std::string const& text) {
  try {
    parse(text);
  } catch (r::invalid_argument const& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE(".ts: univariate, equal length, labelled", "[apps][ts]") {
  auto const ds = parse("# a comment\n@problemName Toy\n@timeStamps false\n@univariate true\n"
                        "@equalLength true\n@classLabel true a b\n@data\n1,2,3:a\n4.5,-6e-1,7:b\n");
  REQUIRE(ds.size() == 2);
  CHECK(ds.channels == 1);
  CHECK(ds.max_length == 3);
  CHECK(ds.labels == std::vector<std::string>{"a", "b"});
  CHECK(ds.series(1)(1, 0) == -0.6);
  CHECK(ds.series(0)(2, 0) == 3.0);
}

TEST_CASE(".ts: multivariate and unequal lengths keep (length, channels) order", "[apps][ts]") {
  auto const ds = parse("@univariate false\n@dimensions 2\n@equalLength false\n@classLabel true 1 2\n"
                        "@data\n1,2,3:10,20,30:1\n4,5:40,50:2\n");
  REQUIRE(ds.size() == 2);
  CHECK(ds.channels == 2);
  CHECK(ds.lengths == std::vector<r::index_t>{3, 2});
  CHECK(ds.max_length == 3);
  auto const s0 = ds.series(0), s1 = ds.series(1);
  CHECK(s0(0, 0) == 1.0);
  CHECK(s0(0, 1) == 10.0);
  CHECK(s0(2, 1) == 30.0);
  CHECK(s1(1, 0) == 5.0);
  CHECK(s1(1, 1) == 50.0);
  CHECK(ds.values[static_cast<std::size_t>(1 * 3 * 2 + 2 * 2)] == 0.0);  // padding
}

TEST_CASE(".ts: header words separated by runs of spaces and tabs", "[apps][ts]") {
  auto const ds = parse("@problemName\tToy\n@classLabel  true\ta  b \n@data\n1,2,3:a\n4,5,6:b\n");
  REQUIRE(ds.size() == 2);
  CHECK(ds.labels == std::vector<std::string>{"a", "b"});
  CHECK(ds.series(1)(2, 0) == 6.0);
}

TEST_CASE(".ts: header keys in any letter case", "[apps][ts]") {
  // @ClassLabel was ignored, and the labels then failed as numbers
  auto const ds = parse("@ClassLabel true a b\n@EQUALLENGTH true\n@Data\n1,2:a\n3,4:b\n");
  CHECK(ds.labels == std::vector<std::string>{"a", "b"});
  CHECK_THAT(error_of("@EqualLength true\n@classLabel false\n@data\n1,2\n3\n"), Catch::Matchers::Contains("@equalLength true"));
}

TEST_CASE(".ts: unlabelled data", "[apps][ts]") {
  auto const ds = parse("@classLabel false\n@data\n1,2\n3,4,5\n");
  REQUIRE(ds.size() == 2);
  CHECK(ds.labels[0].empty());
  CHECK(ds.lengths == std::vector<r::index_t>{2, 3});
}

TEST_CASE(".ts: refusals name the line", "[apps][ts]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(error_of("@classLabel true a\n@data\n1,?,3:a\n"), Contains("t.ts:3: channel 1, value 2") && Contains("missing"));
  CHECK_THAT(error_of("@classLabel true a\n@data\n1,NaN,3:a\n"), Contains("t.ts:3") && Contains("missing"));
  CHECK_THAT(error_of("@classLabel true a\n@data\n1,,3:a\n"), Contains("t.ts:3") && Contains("empty"));
  CHECK_THAT(error_of("@timeStamps true\n@data\n(0,1),(1,2)\n"), Contains("t.ts:1") && Contains("time-stamped"));
  CHECK_THAT(error_of("@classLabel true a b\n@data\n1,2:c\n"), Contains("t.ts:3") && Contains("'c'"));
  CHECK_THAT(error_of("@classLabel true a\n@data\n1,2:3,4:a\n5,6:a\n"), Contains("t.ts:4") && Contains("1 channels"));
  CHECK_THAT(error_of("@classLabel true a\n@data\n1,2:3:a\n"), Contains("t.ts:3: channel 2 has 1 values"));
  CHECK_THAT(error_of("@classLabel true a\n@data\n1,2,3\n"), Contains("t.ts:3") && Contains("class label"));
  CHECK_THAT(error_of("@problemName x\n1,2,3\n"), Contains("t.ts:2") && Contains("@data"));
  CHECK_THAT(error_of("@problemName x\n"), Contains("no @data"));
  CHECK_THAT(error_of("@classLabel false\n@data\n"), Contains("no cases"));
  CHECK_THAT(error_of("@classLabel false\n@data\n1,x,3\n"), Contains("t.ts:3: channel 1, value 2 is not a number"));
  // the channel is named (value 2 fitted channels 1 and 2 as well)
  CHECK_THAT(error_of("@classLabel false\n@data\n1,2:3,4:5,?\n"), Contains("t.ts:3: channel 3, value 2 is missing"));
  // regression data: the target was read as one more channel (silently, for length-1 series)
  CHECK_THAT(error_of("@targetLabel true\n@data\n1:0.5\n"), Contains("t.ts:1: regression .ts data"));
  CHECK_THAT(error_of("@data\r1,2\r3,4\r"), Contains("a carriage return inside a line"));
  // also where the file starts with a comment (the whole file read as one comment line)
  CHECK_THAT(error_of("# made on a Mac\r@data\r1,2\r"), Contains("t.ts:1: a carriage return inside a line"));
  // the header's channel count and equal lengths are held to
  CHECK_THAT(error_of("@dimensions 3\n@classLabel false\n@data\n1,2:3,4\n"),
             Contains("t.ts:4: 2 channels, but the header says 3: @dimensions 3 (line 1)"));
  CHECK_THAT(error_of("@univariate true\n@classLabel false\n@data\n1,2:3,4\n"),
             Contains("t.ts:4: 2 channels, but the header says 1: @univariate true (line 1)"));
  CHECK_THAT(error_of("@dimensions two\n@data\n1,2\n"), Contains("t.ts:1: @dimensions needs a positive"));
  CHECK_THAT(error_of("@dimensions 0\n@data\n1,2\n"), Contains("t.ts:1: @dimensions needs a positive"));
  CHECK_THAT(error_of("@equalLength true\n@classLabel false\n@data\n1,2\n3,4,5\n"),
             Contains("t.ts:5: 3 values per channel, but @equalLength true and the first case has 2"));
  // headers that contradict each other: the last one was kept in this order (two channels read)
  CHECK_THAT(error_of("@univariate true\n@dimensions 2\n@classLabel true a\n@data\n1,2:3,4:a\n"),
             Contains("t.ts:2: @dimensions 2 contradicts @univariate true (line 1)"));
  CHECK_THAT(error_of("@dimensions 2\n@univariate true\n@classLabel true a\n@data\n1,2:3,4:a\n"),
             Contains("t.ts:2: @univariate true contradicts @dimensions 2 (line 1)"));
  CHECK(parse("@dimensions 1\n@univariate true\n@classLabel true a\n@data\n1,2:a\n").channels == 1);
  // no @classLabel line: aeon takes the last field as the label, this reader took it as a channel
  // (7:1 and 8:2 came out as two-channel series without labels)
  CHECK_THAT(error_of("@problemName p\n@data\n7:1\n8:2\n"),
             Contains("t.ts:2: the header has no @classLabel line"));
}

TEST_CASE(".ts: a UTF-8 byte order mark before the first line is skipped", "[apps][ts]") {
  auto const ds = parse("\xEF\xBB\xBF" "@problemName x\n@univariate false\n@dimensions 2\n"
                        "@equalLength false\n@classLabel false\n@data\n1,2:3,4\n5:6\n");
  CHECK(ds.channels == 2);
  CHECK(ds.lengths == std::vector<r::index_t>{2, 1});
}

TEST_CASE("write_ts: parse_ts reads back the same labels, shapes and bits", "[apps][ts]") {
  auto const round_trip = [](auto const& ds) {
    using T = typename std::decay_t<decltype(ds)>::value_type;
    std::ostringstream out;
    r::write_ts(out, ds, "rt");
    std::istringstream in(out.str());
    auto const back = r::parse_ts<T>(in, "rt.ts");
    CHECK(back.labels == ds.labels);
    CHECK(back.lengths == ds.lengths);
    CHECK(back.channels == ds.channels);
    CHECK(back.values == ds.values);  // bit for bit, padding included
    return out.str();
  };
  // several channels, unequal lengths, values that need every digit
  r::dataset<double> multi;
  multi.channels = 2;
  multi.push_back("walk", std::vector<double>{0.1, -2.0 / 3.0, 1e-300, 5e307, 3.0, 4.0});
  multi.push_back("run", std::vector<double>{std::nextafter(1.0, 2.0), -0.0});
  multi.push_back("walk", std::vector<double>{7.0, 8.0});
  auto const text = round_trip(multi);
  CHECK(text.find("@dimensions 2\n@equalLength false\n@classLabel true walk run\n@data\n") != std::string::npos);
  // float, unlabelled, equal lengths
  r::dataset<float> plain;
  plain.push_back("", std::vector<float>{1.0f / 3.0f, 2.0f});
  plain.push_back("", std::vector<float>{3.0f, 1e-40f});
  CHECK(round_trip(plain).find("@classLabel false\n@data\n") != std::string::npos);
  // labels .ts cannot hold
  r::dataset<double> bad;
  bad.push_back("a b", std::vector<double>{1.0});
  std::ostringstream sink;
  CHECK_THROWS_WITH(r::write_ts(sink, bad, "x"), Catch::Contains("label 0 ('a b') cannot be written"));
  bad.labels[0] = "";
  bad.push_back("c", std::vector<double>{1.0});
  CHECK_THROWS_AS(r::write_ts(sink, bad, "x"), r::invalid_argument);
}

TEST_CASE("read_dataset dispatches on the extension", "[apps][ts]") {
  CHECK_THROWS_AS(r::read_dataset<double>("/nonexistent/file.ts"), r::runtime_error);
  CHECK_THROWS_AS(r::read_dataset<double>("/nonexistent/file.tsv"), r::runtime_error);
  // any letter case: MC.TS was read as TSV ("the line has a label ('@problemName x') but no values")
  auto const path = (std::filesystem::temp_directory_path() / "resilin_test_case.TS").string();
  {
    std::ofstream f(path);
    f << "@problemName x\n@classLabel true a\n@data\n1,2:a\n";
  }
  auto const ds = r::read_dataset<double>(path);
  std::filesystem::remove(path);
  CHECK(ds.size() == 1);
  CHECK(ds.labels[0] == "a");
}

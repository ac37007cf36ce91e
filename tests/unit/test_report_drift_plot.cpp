#include "npucc/error.h"
#include "report/drift_plot.h"

#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <regex>

using nlohmann::json;
using npucc::report::render_drift_svg;

namespace {

json value_entry(size_t order, const std::string& node, std::optional<double> one_minus_cosine,
                 double max_abs) {
  json cosine = one_minus_cosine ? json(1.0 - *one_minus_cosine) : json(nullptr);
  return {{"order", order}, {"node", node}, {"op_type", "Conv"}, {"value", node + "_out"},
          {"graph", "main"}, {"stored", "float16"}, {"kept_reason", nullptr}, {"elements", 16},
          {"cosine", cosine},
          {"cosine_undefined", one_minus_cosine ? json(nullptr) : json("the float32 reference is all zero")},
          {"max_abs_error", max_abs}, {"flush_share", 0.0}, {"overflow_share", 0.0},
          {"high_max_abs", 1.0}, {"high_min_nonzero_abs", 1e-6}, {"added_drift", 0.0}};
}

json drift_of(std::vector<json> values) {
  return {{"format", "npucc-drift"}, {"version", 1}, {"low_type", "bfloat16"}, {"sample_sets", 7},
          {"runtime_runs", 2}, {"threshold", {{"metric", "cosine"}, {"below", 0.9999}}},
          {"first_crossing", nullptr}, {"top_offenders", json::array()}, {"values", values}};
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

// The cy of every dot of the cosine series, in order.
std::vector<double> cosine_dots(const std::string& svg) {
  static const std::regex dot(R"re(<circle cx="[0-9.]+" cy="([0-9.]+)" r="2" fill="#1f77b4"/>)re");
  std::vector<double> ys;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), dot); it != std::sregex_iterator(); ++it) {
    ys.push_back(std::stod((*it)[1].str()));
  }
  return ys;
}

} // namespace

TEST_SUITE("npucc::report::drift_plot") {

TEST_CASE("the title names the low type and the sample sets") {
  const std::string svg = render_drift_svg(drift_of({value_entry(0, "a", 1e-5, 1e-3)}));
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("bfloat16 against float32, 1 value, 7 sample sets") != std::string::npos);
  CHECK(svg.find("threshold: cosine 0.9999") != std::string::npos);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
}

TEST_CASE("the y axis is logarithmic: decades apart are equally far apart") {
  const std::string svg = render_drift_svg(
      drift_of({value_entry(0, "a", 1e-6, 1), value_entry(1, "b", 1e-4, 1), value_entry(2, "c", 1e-2, 1)}));
  const auto ys = cosine_dots(svg);
  REQUIRE(ys.size() == 3);
  CHECK(ys[0] > ys[1]); // more error, higher up
  CHECK(ys[0] - ys[1] == doctest::Approx(ys[1] - ys[2]).epsilon(0.01));
  CHECK(ys[0] - ys[1] > 20);
}

TEST_CASE("an undefined cosine is a mark and a gap, never a zero error on the floor") {
  const std::string svg = render_drift_svg(drift_of({value_entry(0, "a", 1e-5, 1), value_entry(1, "b", 1e-5, 1),
                                                     value_entry(2, "u", std::nullopt, 1),
                                                     value_entry(3, "c", 1e-4, 1), value_entry(4, "d", 1e-4, 1)}));
  CHECK(count_of(svg, "<polyline fill=\"none\" stroke=\"#1f77b4\"") == 2); // broken at #2
  CHECK(cosine_dots(svg).size() == 4);
  CHECK(count_of(svg, "stroke=\"#e377c2\" stroke-width=\"2\"") == 1); // the x in the panel
  CHECK(count_of(svg, "fill=\"#e377c2\"") == 2);                      // the lane and the legend
  CHECK(svg.find("text-anchor=\"end\">0</text>") == std::string::npos); // no floor: no zero
  const std::string zero = render_drift_svg(drift_of({value_entry(0, "a", 0.0, 1), value_entry(1, "b", 1e-4, 1)}));
  CHECK(zero.find("text-anchor=\"end\">0</text>") != std::string::npos);
}

TEST_CASE("names are escaped wherever they appear") {
  json drift = drift_of({value_entry(0, "a", 1e-6, 1), value_entry(1, "<script>&\"'\x01", 1e-3, 1)});
  drift["first_crossing"] = 1;
  drift["top_offenders"] = json::array({1});
  const std::string svg = render_drift_svg(drift);
  CHECK(svg.find("<script>") == std::string::npos);
  CHECK(svg.find('\x01') == std::string::npos);
  CHECK(count_of(svg, "&lt;script&gt;&amp;&quot;&apos;\\x01") >= 4); // label, list, 2 titles
  CHECK(svg.find("first below 0.9999: #1 &lt;script&gt;") != std::string::npos);
  json long_name = drift_of({value_entry(0, std::string(200000, 'n'), 1e-3, 1)});
  long_name["first_crossing"] = 0;
  long_name["top_offenders"] = json::array({0});
  CHECK(render_drift_svg(long_name).size() < 20000);
}

TEST_CASE("kept, overflow and flush marks where the report has them, none elsewhere") {
  std::vector<json> values;
  for (size_t i = 0; i < 6; ++i) {
    values.push_back(value_entry(i, "n" + std::to_string(i), 1e-5, 1e-3));
  }
  const std::string plain = render_drift_svg(drift_of(values));
  values[1]["stored"] = "float32";
  values[2]["overflow_share"] = 0.01;
  values[3]["flush_share"] = 0.5;
  values[4]["flush_share"] = 0.005; // a few flushed elements: no mark
  const std::string marked = render_drift_svg(drift_of(values));
  for (const char* colour : {"#8c8c8c", "#ff7f0e", "#17becf"}) {
    const std::string fill = std::string("fill=\"") + colour + "\"";
    CHECK(count_of(plain, fill) == 1); // the legend's swatch alone
    CHECK(count_of(marked, fill) == 2);
  }
}

TEST_CASE("no value, and thousands of values: a picture of a sane size") {
  const std::string empty = render_drift_svg(drift_of({}));
  CHECK(empty.find("nothing to draw") != std::string::npos);
  std::vector<json> values;
  for (size_t i = 0; i < 3000; ++i) {
    values.push_back(value_entry(i, "node_" + std::to_string(i), std::pow(10.0, -8 + 7.0 * i / 3000),
                                 i % 7 == 0 ? 0.0 : 1e-3));
    values.back()["overflow_share"] = i % 2 == 0 ? 0.1 : 0.0; // every other one: runs merge
  }
  const std::string svg = render_drift_svg(drift_of(values));
  CHECK(svg.size() < 300 * 1024);
  CHECK(count_of(svg, "<circle") < 20); // no dot per value
  CHECK(count_of(svg, "fill=\"#ff7f0e\"") < 600);
}

TEST_CASE("a document that is no drift report is an error, not a picture") {
  CHECK_THROWS_AS(render_drift_svg(json::object()), npucc::Error);
}

}

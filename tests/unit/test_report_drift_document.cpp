#include "npucc/error.h"
#include "report/drift_document.h"

#include <doctest/doctest.h>

using nlohmann::json;
using npucc::report::read_drift_document;

namespace {

json two_values() {
  return json::parse(R"({"format":"npucc-drift","version":1,"low_type":"bfloat16","sample_sets":3,
    "runtime_runs":1,"threshold":{"metric":"cosine","below":0.9999},"first_crossing":1,
    "top_offenders":[1,0],"a_later_field":true,
    "values":[{"order":0,"node":"conv","op_type":"Conv","value":"c","graph":"main","stored":"float32",
               "kept_reason":"activation_range","elements":4,"cosine":1.0,"cosine_undefined":null,
               "max_abs_error":0,"flush_share":0,"overflow_share":0.5,"high_max_abs":7e4,
               "high_min_nonzero_abs":null,"added_drift":null},
              {"order":1,"node":"gap","op_type":"GlobalAveragePool","value":"g","graph":"main/if:then_branch",
               "stored":"bfloat16","kept_reason":null,"elements":4,"cosine":null,
               "cosine_undefined":"the float32 reference is all zero","max_abs_error":3e-3,
               "flush_share":0.25,"overflow_share":0,"high_max_abs":1,"high_min_nonzero_abs":1e-9,
               "added_drift":0.1}]})");
}

std::string error_of(const json& drift) {
  try {
    read_drift_document(drift);
  } catch (const npucc::Error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_SUITE("npucc::report::drift_document") {

TEST_CASE("a report is read; an undefined cosine stays undefined, not 1 or 0") {
  const auto document = read_drift_document(two_values());
  CHECK(document.low_type == "bfloat16");
  CHECK(document.sample_sets == 3);
  CHECK(document.threshold_below == doctest::Approx(0.9999));
  CHECK(document.first_crossing == size_t{1});
  CHECK(document.top_offenders == std::vector<size_t>{1, 0});
  REQUIRE(document.values.size() == 2);
  CHECK(document.values[0].kept_float32());
  CHECK(document.values[0].overflow_share == 0.5);
  CHECK_FALSE(document.values[1].cosine.has_value());
  CHECK(document.values[1].cosine_undefined == "the float32 reference is all zero");
  CHECK(document.values[1].graph == "main/if:then_branch");
}

TEST_CASE("a document of another format or a newer version is refused by name") {
  json other = two_values();
  other["format"] = "npucc-manifest";
  CHECK(error_of(other).find("not a drift report") != std::string::npos);
  CHECK(error_of(json::array()).find("not a drift report") != std::string::npos);
  json newer = two_values();
  newer["version"] = 2;
  CHECK(error_of(newer).find("version 2 is newer") != std::string::npos);
}

TEST_CASE("a field of the wrong type or range names the field") {
  json drift = two_values();
  drift["values"][1]["cosine"] = "0.5";
  CHECK(error_of(drift) == "invalid drift report: values[1].cosine: a string, not a number");
  drift = two_values();
  drift["values"][0].erase("node");
  CHECK(error_of(drift) == "invalid drift report: values[0].node: missing");
  drift = two_values();
  drift["values"][0]["flush_share"] = 1.5;
  CHECK(error_of(drift) == "invalid drift report: values[0].flush_share: out of range");
  drift = two_values();
  drift["first_crossing"] = 2;
  CHECK(error_of(drift).find("first_crossing: not an index into values") != std::string::npos);
  drift = two_values();
  drift["top_offenders"] = json::array({-1});
  CHECK(error_of(drift).find("top_offenders[0]: not an index") != std::string::npos);
  drift = two_values();
  drift["values"] = json::object();
  CHECK(error_of(drift) == "invalid drift report: values: an object, not an array");
}

}

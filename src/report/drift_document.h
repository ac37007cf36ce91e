#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

// A drift report (drift.json, "format": "npucc-drift", version 1: npucc-compile(1),
// ACCURACY) read and checked for drawing. Fields a later writer adds are ignored; a field
// the picture needs that is missing or of the wrong type is an error naming it.
namespace npucc::report {

struct DriftValue {
  long order = 0;        // the value's place in topological order, as the report numbers it
  std::string node;      // user data: escaped before it reaches any output
  std::string op_type;
  std::string value;
  std::string graph;     // "main", or "main/<node>:<attr>" for an If/Loop/Scan body
  std::string stored;    // "float16", "bfloat16", "float32"
  std::optional<double> cosine;        // nullopt: the comparison could not be made
  std::string cosine_undefined;        // why, when cosine is nullopt
  std::optional<double> max_abs_error; // nullopt: not measured
  double flush_share = 0;
  double overflow_share = 0;
  std::optional<double> added_drift;

  bool kept_float32() const { return stored == "float32"; }
};

struct DriftDocument {
  std::string low_type;
  long sample_sets = 0;
  long runtime_runs = 0;
  std::string threshold_metric; // "cosine"; empty without a threshold
  std::optional<double> threshold_below;
  std::optional<size_t> first_crossing; // an index into values
  std::vector<size_t> top_offenders;    // indexes into values
  std::vector<DriftValue> values;
};

inline constexpr int k_drift_format_version = 1;

// Throws npucc::Error "invalid drift report: WHERE: WHAT" (values[3].cosine: a string, not
// a number), or says the document is not a drift report or is of a newer version.
DriftDocument read_drift_document(const nlohmann::json& drift);

} // namespace npucc::report

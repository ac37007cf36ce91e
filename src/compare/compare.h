#pragma once

#include "compare/compare_pair.h"
#include "npucc/compile.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

// `npucc compare REFERENCE CANDIDATE`: any two graphs with the same inputs and outputs, the
// reference run as is and the candidate as float16/bfloat16 hardware computes it (its
// emulation, compare_pair.h) or as ONNX Runtime runs it (--run plain), on the same samples,
// with the compile's check's figures, per-sample summary, targets and validation sets
// (accuracy/check.h, accuracy/target.h, accuracy/sample_runner.h). Not cached: it is a
// measurement, which costs two runtime runs per set and no compile, and whose figures depend
// on the runtime installed as much as on the two files.
namespace npucc::compare {

struct CompareOptions {
  std::filesystem::path reference;
  std::filesystem::path candidate;
  // The fields the option table's rows fill (config/option_table.h): sample_inputs,
  // validation_inputs, accuracy_target, allow_nonfinite_samples, limits, input_shapes.
  CompileOptions measure;
  CandidateRun run = CandidateRun::emulated;
};

struct CompareResult {
  nlohmann::json report; // format npucc-compare (tests/schemas/npucc-compare.schema.json)
  bool has_target = false;
  bool meets_target = true; // on the sample sets and the validation sets
};

// Throws npucc::Error in one line (a model unread or refused, inputs or outputs that do not
// match, bad samples, a target the reference alone leaves undefined, a runtime error naming
// the graph); a missed target is not an error here (meets_target), the caller says it.
CompareResult compare_models(const CompareOptions& options, const LogSink& log);

// The text report: what ran against what, the figures per output, the target's verdict.
std::vector<std::string> format_compare(const nlohmann::json& report);

// "emulated float16", "emulated float16 and bfloat16", "ONNX Runtime as-is", or "emulated
// (nothing stored in float16 or bfloat16)": what the report says was run for the candidate.
std::string run_description(const ComparedPair& pair);

} // namespace npucc::compare

#include "key/key_options.h"

#include "accuracy/checked.h"
#include "accuracy/samples.h"
#include "npucc/compile.h"
#include "passes/registry.h"
#include "precision/low_graph_opset.h"

#include <nlohmann/json.hpp>

namespace npucc {

namespace key {

std::string canonical_text(const CompileOptions& options, const std::string& runtime) {
  // nlohmann::json objects keep keys sorted, so the dump is canonical.
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& shape : options.input_shapes) {
    shapes[shape.name] = shape.dims;
  }
  nlohmann::json out = {
      {"input_shapes", shapes},
      {"external_data", options.external_data == ExternalData::always ? "always" : "auto"},
      {"weights", options.weight_layout == WeightLayout::shared ? "shared" : "self_contained"},
      {"passes", options.passes.empty() ? passes::default_pipeline() : options.passes},
      {"max_tensor_bytes", options.limits.max_tensor_bytes},
      {"target_opset", options.target_opset},
  };
  // Precision: every field that changes high/low/emulation output. The mixlist by content.
  // Of accelerate_train_mode only the TYPE: its trigger and ratio (the schedule) change no
  // byte of a graph, and the manifest states them (key/key_options.h).
  out["precision"] = {
      {"accelerate_train_mode_type",
       options.accelerate_train_mode ? options.accelerate_train_mode->type_name() : ""},
      {"precision_mode", options.precision.precision_mode},
      {"precision_mode_v2", options.precision.precision_mode_v2},
      {"modify_mixlist", options.modify_mixlist},
      {"keep_dtype", options.keep_dtype_nodes},
      {"keep_io_types", options.keep_io_types},
      {"low_precision_weights", options.low_precision_weights},
      {"emit_emulation", options.emit_emulation},
      // What fast1 raises its low graph to without --target-opset (a change moves the key).
      {"fast1_low_graph_opset", precision::k_bfloat16_opset},
  };
  // Only with the check, so that the keys of compiles without it stay as they were.
  if (accuracy::is_checked(options)) {
    out["accuracy"] = {{"samples_sha256", options.sample_inputs.empty()
                                              ? std::string("random")
                                              : accuracy::samples_digest(options.sample_inputs)},
                       {"runtime", runtime}};
    // Only when given, so that the keys of checks without them stay as they were.
    if (!options.validation_inputs.empty()) {
      out["accuracy"]["validation_sha256"] =
          accuracy::samples_digest(options.validation_inputs, "--validation-inputs");
    }
    // Only with a target, so that the keys of checks without one stay as they were.
    if (!options.accuracy_target.empty()) {
      out["accuracy"]["target"] = options.accuracy_target;
    }
    // Only when asked for: drift.json is part of the output.
    if (!options.accuracy_report.empty()) {
      out["accuracy"]["report"] = options.accuracy_report;
      out["accuracy"]["drift_threshold"] = options.drift_threshold;
    }
    // Only when given: it decides whether a sample with NaN is refused or reported.
    if (options.allow_nonfinite_samples) {
      out["accuracy"]["allow_nonfinite_samples"] = true;
    }
  }
  return out.dump();
}

} // namespace key

std::string canonical_options(const CompileOptions& options) {
  return key::canonical_text(options, key::runtime_identity(options));
}

} // namespace npucc

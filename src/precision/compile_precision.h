#pragma once

#include "npucc/compile.h"
#include "precision/overflow_prescan.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace npucc::precision {

struct GraphVariant {
  std::string role;      // "high", "low", "emulation"
  std::string precision; // "float32", "mixed_float16", ...
  std::string emulates;  // for role "emulation": the low graph's precision
  onnx::ModelProto model;
};

struct PrecisionBuild {
  // In file order: high (unless a single-variant compile lowered the only graph), low,
  // emulation.
  std::vector<GraphVariant> graphs;
  nlohmann::json report;      // the low graph's precision report; null without one
  nlohmann::json high_report; // when the configured precision mode also rewrote high
};

// Applies the precision options of `options` to the optimised, fully typed `model`:
// - with accelerate_train_mode: high = the configured precision mode (original types for
//   empty / must_keep_origin_dtype / origin), low = mixed float16 (fast) or bfloat16 (fast1);
// - otherwise the configured precision mode's meaning (precision_modes.cpp), one graph;
// - emulation (--emit-emulation) from the low graph.
// Every graph made here passes the ONNX checker and strict typed shape inference.
// Throws usage_error for option combinations that would have no effect. `overflow`: the
// weights' overflow counts the caller has, if any (overflow_prescan.h).
PrecisionBuild build_precision_variants(onnx::ModelProto model, const CompileOptions& options,
                                        const OverflowSource& overflow = {});

// When the low graph keeps nodes float32 for their schema at the model's opset and a later
// opset runs them low: how many more nodes --target-opset N would lower, as
// build.report["target_opset_hint"] (opset_hint.h). Lowers a raised copy of the optimised
// `model` once more, so only then; not with --target-opset, nor when fast1 raises.
void add_target_opset_hint(PrecisionBuild& build, const onnx::ModelProto& model,
                           const CompileOptions& options, const OverflowSource& overflow = {});

} // namespace npucc::precision

#pragma once

#include "npucc/train_mode.h"
#include "precision/mixed_precision.h"

#include <onnx/onnx_pb.h>
#include <optional>
#include <string>

namespace npucc::precision {

// What a configured precision mode does to an ONNX graph (the table is in
// precision_modes.cpp and npucc-compile(1)).
struct ModePlan {
  bool rewrite = false; // false: the graph keeps its original types
  LowPrecision low = LowPrecision::float16;
  Policy policy = Policy::mixed;
  // Manifest precision name: "float32" (original), "mixed_float16", "mixed_bfloat16",
  // "matrix_float16", "matrix_bfloat16", "float16".
  std::string precision = "float32";
  std::string note; // how the mode maps to ONNX when it differs from Ascend's words
};

// The plan for one value of precision_mode / precision_mode_v2 (at most one non-empty);
// refuses (npucc::usage_error with the reason) a mode npucc cannot honour on this model.
ModePlan plan_for_precision_mode(const PrecisionOptions& options, const onnx::ModelProto& model);

// The low graph of an accelerate_train_mode compile: fast = mixed float16,
// fast1 = mixed bfloat16 (Ascend's allow_mix_precision_fp16 / _bf16).
ModePlan plan_for_accelerate_mode(const AccelerateTrainMode& mode);

} // namespace npucc::precision

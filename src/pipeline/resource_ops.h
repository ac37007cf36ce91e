#pragma once

#include "npucc/compile.h"

#include <onnx/onnx_pb.h>
#include <optional>
#include <string>

// Ops that make a model uncacheable (SPEC §3: Ascend cannot cache "resource operators").
// ONNX has no resource type; its counterparts are ops whose effect lives outside the
// graph's values, so a compiled result cannot be trusted to stand for them:
//   - training-state ops of ai.onnx.preview.training (Adagrad, Adam, Momentum, Gradient):
//     they update optimiser state held by the runtime;
//   - ops of a domain with no schema registered in onnx::OpSchemaRegistry: custom ops
//     whose meaning lives in a runtime library the key cannot see.
// A model-local function is not custom: its body is in the model, hence in the key.
namespace npucc::pipeline {

struct Uncacheable {
  std::string reason;  // counter name: "training-op" or "custom-op"
  std::string message; // names the op and the node
};

std::optional<Uncacheable> find_uncacheable_op(const onnx::ModelProto& model);

// What decides the compile and the key cannot see, so that the compile is not cached: an
// accuracy function the caller gave no key for (CompileOptions::accuracy_functions: code
// cannot be hashed), or NPUCC_BENCH_NO_RANGE_RULE (tests/bench/run's baseline without the
// activation-range rule, accuracy/activation_ranges.h).
std::optional<Uncacheable> find_unkeyed_function(const CompileOptions& options);

} // namespace npucc::pipeline

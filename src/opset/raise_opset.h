#pragma once

#include <cstdint>
#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>

// Raising a model's ai.onnx opset (`--target-opset N`, and fast1's low graph: npucc-precision(7)).
// Every operator version crossed between the model's opset and the target is either one
// that only widens what the op accepts (checked against both schemas, compatible.cpp), or
// has an adapter here (one file per family), or the raise is refused naming the op: a node
// is never carried into a version whose meaning differs from its own.
namespace npucc::opset {

// The newest opset npucc raises to (its schemas' newest).
inline constexpr int k_max_target_opset = 26;

struct RaiseReport {
  int64_t from = 0;
  int64_t to = 0;
  // "Op-version" (the version an adapter crossed into) -> nodes rewritten.
  std::map<std::string, int64_t> adapted;
};

// Raises `model` (typed: shape-inferred, so adapters see element types and ranks) in place.
// Throws npucc::Error "--target-opset N: cannot raise OP (ai.onnx) from version A to B: why"
// when a node cannot be carried; `model` is then partly rewritten (work on a copy to keep
// it). A target below the model's opset is refused; equal changes nothing.
RaiseReport raise_opset(onnx::ModelProto& model, int64_t target);

// The model's ai.onnx opset (0 when it imports none).
int64_t default_opset(const onnx::ModelProto& model);

// The IR version ONNX's release of that opset wrote (IR 10 for opset 21 and 22, ...).
int64_t ir_version_for_opset(int64_t opset);

} // namespace npucc::opset

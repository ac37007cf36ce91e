#pragma once

#include "opset/adapter.h"

#include <onnx/defs/schema.h>
#include <string>

namespace npucc::opset {

enum class StepKind {
  compatible, // the node means the same at the new version: only the opset moves
  adapt,      // an adapter rewrites the node
  refuse,     // npucc cannot carry the node across
};

struct VersionStep {
  StepKind kind = StepKind::refuse;
  Adapter adapter = nullptr;
  std::string why; // for refuse: what changed
};

// How a node of `op` (default domain) crosses from `before` (its schema at the previous
// opset) into `after` (the version introduced at after->SinceVersion()).
VersionStep version_step(const std::string& op, const onnx::OpSchema& before,
                         const onnx::OpSchema& after);

// Does `after` only widen `before`: the same inputs, outputs and attributes (names, kinds,
// defaults), each slot taking at least its old types, no new tie between slots, inputs
// only made optional?
// Empty when so, else the first difference ("attribute axes removed").
std::string signature_difference(const onnx::OpSchema& before, const onnx::OpSchema& after);

} // namespace npucc::opset

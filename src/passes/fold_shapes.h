#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Replaces Shape (with its start/end slice, opset 15+) and Size of a tensor whose
// inferred shape is static by an int64 initializer. Once --input-shape has fixed
// the inputs, this is what lets shape inference see through Shape -> Gather ->
// Concat -> Reshape chains (with fold_constants). Needs the shapes shape inference
// leaves in value_info; never runs inside Loop/Scan bodies, where a value's shape
// may change from one iteration to the next.
class FoldShapes final : public Pass {
public:
  const char* name() const override { return "fold_shapes"; }
  const char* description() const override {
    return "replace Shape and Size of statically shaped tensors by constants";
  }
  const char* unit() const override { return "nodes folded"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

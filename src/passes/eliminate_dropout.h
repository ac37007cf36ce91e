#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Removes inference Dropouts, as ONNX's optimizer and ONNX Runtime do: a Dropout whose
// mask nothing reads (no reader here or in a nested body, not a graph output) and that
// cannot be in training mode (versions 7 to 11 have none; 12 and later without a
// `training_mode` input, or with a constant false one; 1 and 6 only with `is_test` set)
// passes its input through. Its readers read the input instead; when its output is a
// graph output it becomes an Identity (the interface names stay). A Dropout whose mask is
// read is left for the opset adapters (opset/attribute_inputs.cpp carries it up).
class EliminateDropout final : public Pass {
public:
  const char* name() const override { return "eliminate_dropout"; }
  const char* description() const override {
    return "remove inference Dropout nodes whose mask is unread";
  }
  const char* unit() const override { return "nodes removed"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

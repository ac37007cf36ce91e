#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Merges initializers of a graph that hold the same tensor (same type, dims and
// stored bytes) into the first of them; readers, nested bodies included, read that
// one. Initializers that are graph inputs (overridable defaults) or outputs stay.
class DeduplicateInitializers final : public Pass {
public:
  const char* name() const override { return "deduplicate_initializers"; }
  const char* description() const override {
    return "merge initializers that hold identical tensors";
  }
  const char* unit() const override { return "initializers merged"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

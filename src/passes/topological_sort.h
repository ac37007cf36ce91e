#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Orders nodes so that every value is produced before it is read (real models arrive
// unsorted, and the ONNX checker insists). Also the place where a cycle, a value
// with two producers, or a read of something nothing produces is reported.
class TopologicalSort final : public Pass {
public:
  const char* name() const override { return "topological_sort"; }
  const char* description() const override {
    return "order nodes so every value is produced before it is read";
  }
  const char* unit() const override { return "nodes moved"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

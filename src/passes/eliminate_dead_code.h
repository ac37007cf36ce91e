#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Removes nodes whose outputs nothing reads (no later node, no graph output, no
// nested body), repeatedly, then initializers nothing reads and the value_info of
// what was removed. Nodes of ops without a registered schema (custom domains, model
// functions) stay: their side effects are unknown.
class EliminateDeadCode final : public Pass {
public:
  const char* name() const override { return "eliminate_dead_code"; }
  const char* description() const override {
    return "remove nodes and initializers whose values nothing reads";
  }
  const char* unit() const override { return "nodes/initializers removed"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Removes Identity nodes: their readers (nested bodies included) read the input
// instead, or, when the output is a graph output, the input's producer is renamed to
// it. Graph input and output names never change; an Identity neither way can
// remove safely stays.
class EliminateIdentity final : public Pass {
public:
  const char* name() const override { return "eliminate_identity"; }
  const char* description() const override { return "remove Identity nodes"; }
  const char* unit() const override { return "nodes removed"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

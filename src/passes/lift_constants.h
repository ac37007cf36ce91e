#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Turns Constant nodes into initializers (exporters such as Paddle's keep every weight
// in a Constant node), so later passes and the memory planner see them as weights.
// Leaves sparse and attribute-reference constants, constants that are graph outputs,
// and IR < 4 models (where every initializer must also be a graph input) alone.
class LiftConstants final : public Pass {
public:
  const char* name() const override { return "lift_constants"; }
  const char* description() const override { return "turn Constant nodes into initializers"; }
  const char* unit() const override { return "constants lifted"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

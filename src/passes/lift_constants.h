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

// Lifts the main graph's Constant nodes whose value type Constant's schema at the model's
// opset does not allow (before Constant-9 only float16, float and double; the PyTorch
// exporter of 2017 wrote int64 shapes in them at opset 6) into initializers, which take any
// type; below IR 4 each also becomes a graph input, as that IR requires. Such a model fails
// ONNX's checks as written, so the compiler runs this before them. Returns the count.
int64_t lift_constants_the_opset_forbids(onnx::ModelProto& model);

} // namespace npucc::passes

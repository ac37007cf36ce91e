#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Replaces an If whose condition is a constant (an initializer of the same graph,
// typically left by fold_constants) by the nodes of the branch it always takes, its
// outputs copied by Identity nodes that eliminate_identity then removes. Shape
// inference merges the two branches of an If, so a branch that can never run can
// hide the static shapes of the one that does. A branch whose names would collide
// with names of the enclosing graph stays.
class FoldIf final : public Pass {
public:
  const char* name() const override { return "fold_if"; }
  const char* description() const override {
    return "inline the branch an If with a constant condition always takes";
  }
  const char* unit() const override { return "Ifs inlined"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

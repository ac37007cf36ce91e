#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Evaluates nodes whose inputs are all initializers of the same graph, for the
// cheap ops of shape arithmetic (Cast, CastLike, Concat, Gather, Unsqueeze, Squeeze, Slice,
// Split, Pad, Reshape, Expand, Add/Sub/Mul/Div, Equal, Where, ConstantOfShape, integer
// Range, integer ReduceSum/ReduceProd, ReduceMax/ReduceMin) on int64, int32, bool and
// float32 tensors of at most k_max_fold_elements elements, and replaces them by
// initializers. Only the operator versions the evaluators were checked against fold
// (fold_ops_shape.cpp); at opsets 18-26 that is the versions introduced there too.
// CastLike needs only its first input constant: the second gives the type. Anything else is left
// alone, as is any result a runtime could compute differently (overflow, division by zero,
// out-of-range indices or casts). Initializers that are also graph inputs can be
// overridden at run time and never count as constants.
class FoldConstants final : public Pass {
public:
  const char* name() const override { return "fold_constants"; }
  const char* description() const override {
    return "evaluate small shape-arithmetic nodes whose inputs are constants";
  }
  const char* unit() const override { return "nodes folded"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

} // namespace npucc::passes

#pragma once

#include "passes/pass.h"

#include <map>
#include <set>
#include <string>

namespace npucc::passes {

// Fuses the decomposed hard activations exporters write (Paddle, torch without
// opset 14) into one node:
//   HardSwish-14   x * relu6(x + 3) / 6, with "/ 6" as Div by 6 or Mul by 1/6, and
//                  x * HardSigmoid<alpha = 1/6, beta = 0.5>(x)
//   HardSigmoid-6  relu6(x + 3) / 6 (alpha 1/6, beta 0.5)
// where relu6(t) is Clip(t, 0, 6), Min(Relu(t), 6), Relu(Min(t, 6)), Min(Max(t, 0), 6) or
// Max(Min(t, 6), 0). Each form is the same function in exact arithmetic; in a low type each
// of its four to six nodes rounds, the fused node rounds once. That is why the precision
// rewrite runs it on the low graph only (compile_precision.cpp): the high graph stays as the
// model wrote it. It is not in the default pipeline.
//
// Acts only where every intermediate value has one reader and is no graph output, the
// constants are float32 scalars (initializers that no graph input overrides, or Constant
// nodes) that broadcast to nothing wider than x, the default-domain opset allows the fused
// op, and no node of the form is named in `keep_nodes` (--keep-dtype: the user asked for
// that node as it is). Constants the fused nodes leave unread are removed.
class FuseHardActivations final : public Pass {
public:
  explicit FuseHardActivations(std::set<std::string> keep_nodes = {})
      : m_keep_nodes(std::move(keep_nodes)) {}

  const char* name() const override { return "fuse_hard_activations"; }
  const char* description() const override {
    return "fuse decomposed HardSwish / HardSigmoid (x * relu6(x + 3) / 6) into one node";
  }
  const char* unit() const override { return "activations fused"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;

  // Fused op type -> count, over every graph run so far.
  const std::map<std::string, int64_t>& fused() const { return m_fused; }

private:
  std::set<std::string> m_keep_nodes;
  std::map<std::string, int64_t> m_fused;
};

} // namespace npucc::passes

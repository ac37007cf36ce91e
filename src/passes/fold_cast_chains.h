#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Removes Casts (and CastLikes) to the type their input already has, and folds
// Cast(Cast(x: T) -> A) -> B into Cast(x) -> B when every T value is exactly
// representable in A (then going through A changes nothing). Lossy chains such as
// float32 -> float16 -> float32 round on purpose and stay. Needs the element types
// shape inference leaves in value_info; casts of unknown types are left alone.
class FoldCastChains final : public Pass {
public:
  const char* name() const override { return "fold_cast_chains"; }
  const char* description() const override {
    return "remove no-op casts and fold cast chains whose first step is exact";
  }
  const char* unit() const override { return "casts folded"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext& context) override;
};

// Whether every value of element type `from` converts to `to` exactly (and back).
bool cast_is_exact(int32_t from, int32_t to);

} // namespace npucc::passes

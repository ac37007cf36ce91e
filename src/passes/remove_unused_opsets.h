#pragma once

#include "passes/pass.h"

namespace npucc::passes {

// Drops opset_import entries of domains no node uses (in any graph, nested body,
// training graph or model-local function). The default domain always stays, and so
// do the domains of model-local functions: nodes call them through their domain.
class RemoveUnusedOpsets final : public Pass {
public:
  const char* name() const override { return "remove_unused_opsets"; }
  const char* description() const override { return "drop opset imports of domains no node uses"; }
  const char* unit() const override { return "opset imports removed"; }
  bool is_model_pass() const override { return true; }
  int64_t run_on_model(onnx::ModelProto& model) override;
};

} // namespace npucc::passes

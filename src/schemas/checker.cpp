#include "schemas/checker.h"

#include "npucc/model.h"
#include "schemas/registry.h"

#include <onnx/checker.h>
#include <set>
#include <unordered_map>

namespace npucc::schemas {

namespace {

void check_metadata_keys(const onnx::ModelProto& model) {
  std::set<std::string> keys;
  for (const auto& entry : model.metadata_props()) {
    if (!keys.insert(entry.key()).second) {
      fail_check("Your model has duplicate keys in metadata_props: ", entry.key());
    }
  }
}

} // namespace

// What onnx::checker::check_model(ModelProto) does at the top, with the IR limit and the
// registry npucc's; the graph and function checks below it are ONNX's own, and ask the
// registry through the context for every node.
void check_model(const onnx::ModelProto& model) {
  if (!model.has_ir_version() || model.ir_version() <= 0) {
    fail_check("The model does not have an ir_version set properly.");
  }
  if (model.ir_version() > k_max_ir_version) {
    fail_check("Your model ir_version ", model.ir_version(), " is higher than the checker's (",
               k_max_ir_version, ").");
  }
  check_metadata_keys(model);
  std::unordered_map<std::string, int> opsets;
  for (const auto& opset : model.opset_import()) {
    opsets[opset.domain()] = static_cast<int>(opset.version());
  }
  if (model.ir_version() >= 3 && opsets.empty()) {
    fail_check("model with IR version >= 3 must specify opset_import for ONNX");
  }
  if (model.ir_version() < 3) {
    if (!opsets.empty()) {
      fail_check("model with IR version < 3 cannot have opset_import specified");
    }
    opsets[""] = 1;
  }
  onnx::checker::CheckerContext context;
  context.set_ir_version(static_cast<int>(model.ir_version()));
  context.set_opset_imports(opsets);
  context.set_schema_registry(&registry());
  onnx::checker::LexicalScopeContext scope;
  onnx::checker::check_graph(model.graph(), context, scope);
  if (model.ir_version() >= 8) {
    onnx::checker::check_model_local_functions(model, context, scope);
  }
}

} // namespace npucc::schemas

#include "passes/op_version.h"

#include "schemas/registry.h"

#include <algorithm>
#include <climits>

namespace npucc::passes {

namespace {

bool is_default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

} // namespace

int op_version(const onnx::NodeProto& node, const onnx::ModelProto* model) {
  if (model == nullptr) {
    return 0;
  }
  const bool default_domain = is_default_domain(node.domain());
  for (const auto& opset : model->opset_import()) {
    const bool same =
        default_domain ? is_default_domain(opset.domain()) : opset.domain() == node.domain();
    if (!same) {
      continue;
    }
    // The registry answers an opset above the newest it knows with that newest
    // version; a newer opset may have redefined the op, so it gets no answer here.
    if (opset.version() <= 0 || (default_domain && opset.version() > k_checked_through_opset)) {
      return 0;
    }
    const auto version = static_cast<int>(std::min<int64_t>(opset.version(), INT_MAX));
    const auto* schema =
        schemas::find_schema(node.op_type(), version, default_domain ? "" : node.domain());
    return schema == nullptr ? 0 : schema->SinceVersion();
  }
  return 0;
}

bool version_is_one_of(const onnx::NodeProto& node, const onnx::ModelProto* model,
                       std::initializer_list<int> checked) {
  const int version = op_version(node, model);
  return version != 0 && std::find(checked.begin(), checked.end(), version) != checked.end();
}

} // namespace npucc::passes

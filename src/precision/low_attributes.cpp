// After phase 1: attributes a node needs once it runs in the low type. Attention-23+
// computes its softmax in the type of Q and K unless softmax_precision says otherwise;
// the softmax is a deny-list op (AC: softmax fp32_set_opt_dtype), so a lowered Attention
// keeps it float32 through its own attribute. A value the model set is its own choice.

#include "precision/rewrite_state.h"

namespace npucc::precision::detail {

namespace {

bool has_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) {
      return true;
    }
  }
  return false;
}

} // namespace

void set_low_attributes(Scope& scope) {
  for (int i = 0; i < scope.graph->node_size(); ++i) {
    auto& node = *scope.graph->mutable_node(i);
    if (!scope.nodes[static_cast<size_t>(i)].low || !node.domain().empty() ||
        node.op_type() != "Attention" || has_attribute(node, "softmax_precision")) {
      continue;
    }
    auto* precision = node.add_attribute();
    precision->set_name("softmax_precision");
    precision->set_type(onnx::AttributeProto::INT);
    precision->set_i(onnx::TensorProto::FLOAT);
  }
  for (auto& child : scope.children) {
    set_low_attributes(*child);
  }
}

} // namespace npucc::precision::detail

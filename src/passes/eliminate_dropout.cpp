#include "passes/eliminate_dropout.h"

#include "model/graph_walk.h"
#include "passes/fold_values.h"
#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

namespace npucc::passes {

namespace {

int64_t int_attribute_or(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.ref_attr_name().empty()) {
      return attribute.i();
    }
  }
  return fallback;
}

// A bool scalar initializer (or Constant node output) of this graph holding false.
bool is_constant_false(const onnx::GraphProto& graph, const std::string& name) {
  const onnx::TensorProto* tensor = nullptr;
  for (const auto& init : graph.initializer()) {
    tensor = init.name() == name ? &init : tensor;
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && is_onnx_node(node) && node.output_size() == 1 &&
        node.output(0) == name && node.attribute_size() == 1 &&
        node.attribute(0).name() == "value" && node.attribute(0).has_t()) {
      tensor = &node.attribute(0).t();
    }
  }
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::BOOL) {
    return false;
  }
  auto value = read_fold_value(*tensor);
  return value && value->ints.size() == 1 && value->ints[0] == 0;
}

// Versions 7 and 10 are inference-only; 12, 13 and 22 train only when told to; 1 and 6
// train unless `is_test` is set.
bool is_inference_dropout(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                          const onnx::ModelProto* model) {
  if (node.op_type() != "Dropout" || !is_onnx_node(node) || node.input_size() < 1 ||
      node.input(0).empty() || node.output_size() < 1 || node.output(0).empty()) {
    return false;
  }
  switch (op_version(node, model)) {
  case 1:
  case 6:
    return int_attribute_or(node, "is_test", 0) != 0;
  case 7:
  case 10:
    return true;
  case 12:
  case 13:
  case 22:
    return node.input_size() < 3 || node.input(2).empty() ||
           is_constant_false(graph, node.input(2));
  default:
    return false; // a version npucc has not read
  }
}

// Names read by this graph's nodes and its bodies' (a body may read an outer mask), and
// the graph's outputs.
std::unordered_set<std::string> read_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> reads;
  model::for_each_graph(graph, [&](const onnx::GraphProto& each, int) {
    for (const auto& node : each.node()) {
      reads.insert(node.input().begin(), node.input().end());
    }
  });
  for (const auto& value : graph.output()) {
    reads.insert(value.name());
  }
  return reads;
}

// Leaves the node computing only its output 0 as an Identity of its input 0.
void make_identity(onnx::NodeProto& node) {
  node.set_op_type("Identity");
  node.clear_attribute();
  while (node.input_size() > 1) {
    node.mutable_input()->RemoveLast();
  }
  while (node.output_size() > 1) {
    node.mutable_output()->RemoveLast();
  }
}

} // namespace

int64_t EliminateDropout::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  const std::unordered_set<std::string> reads = read_names(graph);
  const NestedNames nested = nested_names(graph);
  int64_t count = 0; // dropouts turned into Identity, removed or not
  rewrite_nodes(graph, [&](onnx::NodeProto& node, int index) {
    if (!is_inference_dropout(graph, node, context.model)) {
      return NodeEdit::keep();
    }
    if (node.output_size() > 1 && !node.output(1).empty() && reads.count(node.output(1)) != 0) {
      return NodeEdit::keep(); // the mask is read: opset/ carries it
    }
    std::string mask = node.output_size() > 1 ? node.output(1) : "";
    make_identity(node);
    if (!mask.empty()) {
      drop_value_info(graph, {mask});
    }
    ++count;
    // An Identity whose input and output are both graph interface names stays one.
    return bypass_node(graph, index, nested) ? NodeEdit::remove() : NodeEdit::keep();
  });
  return count;
}

} // namespace npucc::passes

#include "passes/fold_if.h"

#include "model/graph_walk.h"
#include "passes/fold_values.h"
#include "passes/node_rewriter.h"
#include "passes/op_version.h"

namespace npucc::passes {

namespace {

// The branch an If always takes; null when its condition is not a constant.
// Versions 19-25 only add element types to what a branch may return.
onnx::GraphProto*
taken_branch(onnx::NodeProto& node, const onnx::ModelProto* model,
             const std::unordered_map<std::string, const onnx::TensorProto*>& constants) {
  if (!is_onnx_node(node) || node.op_type() != "If" || node.input_size() != 1 ||
      !version_is_one_of(node, model, {1, 11, 13, 16, 19, 21, 23, 24, 25})) {
    return nullptr;
  }
  auto it = constants.find(node.input(0));
  if (it == constants.end()) {
    return nullptr;
  }
  auto cond = read_fold_value(*it->second);
  if (!cond || cond->type != onnx::TensorProto::BOOL || cond->size() != 1) {
    return nullptr;
  }
  const char* wanted = cond->ints[0] != 0 ? "then_branch" : "else_branch";
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == wanted && attribute.has_g()) {
      return attribute.mutable_g();
    }
  }
  return nullptr;
}

// Whether the branch can move into the enclosing graph as it is.
bool can_inline(const onnx::NodeProto& node, const onnx::GraphProto& branch,
                const std::unordered_set<std::string>& taken) {
  if (branch.output_size() != node.output_size() || branch.input_size() != 0 ||
      branch.sparse_initializer_size() != 0) {
    return false;
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty() || node.output(i) == branch.output(i).name()) {
      return false;
    }
  }
  for (const auto& name : model::defined_names(branch)) {
    if (taken.count(name) != 0) {
      return false;
    }
  }
  return true;
}

// The nodes that compute what the If computes, taken from its branch: the branch's nodes,
// then an Identity per output from the branch's output name to the If's. The branch's
// initializers and value_info move to `graph`.
std::vector<onnx::NodeProto> inline_branch(const onnx::NodeProto& node, onnx::GraphProto& branch,
                                           onnx::GraphProto& graph,
                                           std::unordered_set<std::string>& taken) {
  for (const auto& name : model::defined_names(branch)) {
    taken.insert(name);
  }
  std::vector<onnx::NodeProto> nodes;
  for (auto& inner : *branch.mutable_node()) {
    nodes.push_back(std::move(inner));
  }
  for (auto& tensor : *branch.mutable_initializer()) {
    graph.add_initializer()->Swap(&tensor);
  }
  for (auto& info : *branch.mutable_value_info()) {
    graph.add_value_info()->Swap(&info);
  }
  for (int i = 0; i < node.output_size(); ++i) {
    onnx::NodeProto& copy = nodes.emplace_back();
    copy.set_op_type("Identity");
    copy.add_input(branch.output(i).name());
    copy.add_output(node.output(i));
  }
  return nodes;
}

} // namespace

int64_t FoldIf::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  // Before IR 4 every initializer must also be a graph input.
  if (context.model == nullptr || context.model->ir_version() < 4) {
    return 0;
  }
  std::unordered_set<std::string> inputs;
  for (const auto& value : graph.input()) {
    inputs.insert(value.name());
  }
  std::unordered_map<std::string, const onnx::TensorProto*> constants;
  for (const auto& tensor : graph.initializer()) {
    if (inputs.count(tensor.name()) == 0) {
      constants[tensor.name()] = &tensor;
    }
  }
  bool any = false;
  for (auto& node : *graph.mutable_node()) {
    any = any || taken_branch(node, context.model, constants) != nullptr;
  }
  if (!any) {
    return 0;
  }
  std::unordered_set<std::string> taken = model::defined_names(graph);
  taken.insert(context.outer_names.begin(), context.outer_names.end());

  return rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
    onnx::GraphProto* branch = taken_branch(node, context.model, constants);
    if (branch == nullptr || !can_inline(node, *branch, taken)) {
      return NodeEdit::keep();
    }
    return NodeEdit::replace_with(inline_branch(node, *branch, graph, taken));
  });
}

} // namespace npucc::passes

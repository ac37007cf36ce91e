#include "passes/eliminate_identity.h"

#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

#include <unordered_map>

namespace npucc::passes {

namespace {

// Every version through opset 25 passes its input through; the later ones only add types.
bool is_identity(const onnx::NodeProto& node, const onnx::ModelProto* model) {
  return node.op_type() == "Identity" && (node.domain().empty() || node.domain() == "ai.onnx") &&
         node.input_size() == 1 && node.output_size() == 1 && !node.input(0).empty() &&
         !node.output(0).empty() &&
         version_is_one_of(node, model, {1, 13, 14, 16, 19, 21, 23, 24, 25});
}

} // namespace

int64_t EliminateIdentity::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  const NestedNames nested = nested_names(graph);
  std::unordered_set<std::string> outputs;
  for (const auto& value : graph.output()) {
    outputs.insert(value.name());
  }
  NodeRewriter rewriter(graph);

  // Identities whose output is internal: all their readers are redirected in one
  // walk over the graph (exporters can leave thousands of them), chains included.
  std::unordered_map<std::string, std::string> renames;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (!is_identity(node, context.model) || outputs.count(node.output(0)) != 0) {
      continue;
    }
    if (can_redirect(nested, node.output(0), node.input(0))) {
      renames.emplace(node.output(0), node.input(0));
      rewriter.remove(i);
    }
  }
  // y2 = Identity(y1), y1 = Identity(x): y2's readers read x. Every link passed
  // can_redirect, so its last target is safe for all of them.
  std::unordered_set<std::string> gone;
  for (auto& entry : renames) {
    std::string target = entry.second;
    size_t steps = 0; // a cycle cannot pass topological sorting; never loop on one
    for (auto it = renames.find(target); it != renames.end() && steps < renames.size();
         it = renames.find(target), ++steps) {
      target = it->second;
    }
    entry.second = target;
    gone.insert(entry.first);
  }
  rename_reads(graph, renames);
  drop_value_info(graph, gone);
  for (int i = 0; i < graph.node_size(); ++i) {
    if (rewriter.is_edited(i)) {
      // Removed below; until then it must not look like a producer.
      graph.mutable_node(i)->clear_output();
    }
  }

  // Identities that are graph outputs, one at a time: each may rename its producer.
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!rewriter.is_edited(i) && is_identity(graph.node(i), context.model) &&
        bypass_node(graph, i, nested)) {
      rewriter.remove(i);
    }
  }
  return rewriter.apply();
}

} // namespace npucc::passes

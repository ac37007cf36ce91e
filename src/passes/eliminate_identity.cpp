#include "passes/eliminate_identity.h"

#include "passes/rename.h"

namespace npucc::passes {

int64_t EliminateIdentity::run_on_graph(onnx::GraphProto& graph, const GraphContext& /*context*/) {
  const NestedNames nested = nested_names(graph);
  std::vector<bool> removed(static_cast<size_t>(graph.node_size()), false);
  int64_t count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (node.op_type() != "Identity" || !(node.domain().empty() || node.domain() == "ai.onnx")) {
      continue;
    }
    if (bypass_node(graph, i, nested)) {
      removed[static_cast<size_t>(i)] = true;
      ++count;
    }
  }
  if (count > 0) {
    remove_nodes(graph, removed);
  }
  return count;
}

} // namespace npucc::passes

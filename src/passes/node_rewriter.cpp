#include "passes/node_rewriter.h"

#include <memory>

namespace npucc::passes {

NodeRewriter::NodeRewriter(onnx::GraphProto& graph)
    : m_graph(graph), m_edited_at(static_cast<size_t>(graph.node_size()), false) {}

void NodeRewriter::remove(int index) {
  if (!m_edited_at[static_cast<size_t>(index)]) {
    m_edited_at[static_cast<size_t>(index)] = true;
    ++m_edited;
  }
}

void NodeRewriter::replace(int index, std::vector<onnx::NodeProto> nodes) {
  remove(index);
  m_replacements[index] = std::move(nodes);
}

bool NodeRewriter::is_edited(int index) const {
  return m_edited_at[static_cast<size_t>(index)];
}

int64_t NodeRewriter::apply() {
  const int64_t edited = m_edited;
  if (edited == 0) {
    return 0;
  }
  // The nodes are taken out and put back by pointer: no node kept is copied.
  auto& nodes = *m_graph.mutable_node();
  const int count = nodes.size();
  std::vector<onnx::NodeProto*> taken(static_cast<size_t>(count));
  nodes.ExtractSubrange(0, count, taken.data());
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<onnx::NodeProto> node(taken[static_cast<size_t>(i)]);
    if (!is_edited(i)) {
      nodes.AddAllocated(node.release());
      continue;
    }
    auto replacement = m_replacements.find(i);
    if (replacement != m_replacements.end()) {
      for (auto& added : replacement->second) {
        nodes.Add(std::move(added));
      }
    }
  }
  m_edited_at.assign(static_cast<size_t>(nodes.size()), false);
  m_replacements.clear();
  m_edited = 0;
  return edited;
}

int64_t rewrite_nodes(onnx::GraphProto& graph,
                      const std::function<NodeEdit(onnx::NodeProto& node, int index)>& edit) {
  NodeRewriter rewriter(graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    NodeEdit change = edit(*graph.mutable_node(i), i);
    if (change.kind == NodeEdit::Kind::remove) {
      rewriter.remove(i);
    } else if (change.kind == NodeEdit::Kind::replace) {
      rewriter.replace(i, std::move(change.replacement));
    }
  }
  return rewriter.apply();
}

} // namespace npucc::passes

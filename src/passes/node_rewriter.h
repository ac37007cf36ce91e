#pragma once

#include <cstdint>
#include <functional>
#include <onnx/onnx_pb.h>
#include <unordered_map>
#include <vector>

namespace npucc::passes {

// What a pattern pass does with one node: leave it, remove it, or put other nodes in
// its place.
struct NodeEdit {
  enum class Kind { keep, remove, replace };
  Kind kind = Kind::keep;
  std::vector<onnx::NodeProto> replacement;

  static NodeEdit keep() { return {}; }
  static NodeEdit remove() { return {Kind::remove, {}}; }
  // The nodes take the node's place, in this order.
  static NodeEdit replace_with(std::vector<onnx::NodeProto> nodes) {
    return {Kind::replace, std::move(nodes)};
  }
};

// Collects a pass's edits to a graph's nodes while it walks them and makes them all at
// once in apply(): until then every index still names the node it named when the walk
// began, and afterwards the nodes left keep their order, replacements standing where
// the node they replace stood.
class NodeRewriter {
public:
  explicit NodeRewriter(onnx::GraphProto& graph);

  // Removing a node twice counts once.
  void remove(int index);
  void replace(int index, std::vector<onnx::NodeProto> nodes);
  // Whether the node is removed or replaced.
  bool is_edited(int index) const;
  // Nodes removed or replaced so far.
  int64_t edited() const { return m_edited; }

  // Makes the edits (none is a no-op) and starts over; returns how many nodes it edited.
  int64_t apply();

private:
  onnx::GraphProto& m_graph;
  std::vector<bool> m_edited_at;
  std::unordered_map<int, std::vector<onnx::NodeProto>> m_replacements;
  int64_t m_edited = 0;
};

// The whole mark-and-rebuild loop of a simple pattern pass: `edit` sees each node of
// `graph` in order and says what becomes of it (it may add initializers, not nodes).
// Returns the number of nodes removed or replaced.
int64_t rewrite_nodes(onnx::GraphProto& graph,
                      const std::function<NodeEdit(onnx::NodeProto& node, int index)>& edit);

} // namespace npucc::passes

#include "model/nesting_scan.h"
#include "model/onnx_fields.h"

#include <vector>

namespace npucc::model {

namespace {

enum class ScanLevel { model, graph, node, attribute };

// The path a subgraph hangs from: model.graph, graph.node, node.attribute, attribute.g
// or attribute.graphs.
using namespace onnx_fields;

bool read_varint(std::string_view bytes, size_t& pos, size_t end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < end; shift += 7) {
    auto byte = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

struct Frame {
  size_t end;
  ScanLevel kind;
  int depth;
};

} // namespace

int scan_subgraph_depth(std::string_view bytes, int stop_above) {
  std::vector<Frame> stack{{bytes.size(), ScanLevel::model, -1}};
  size_t pos = 0;
  int deepest = 0;
  while (!stack.empty()) {
    const Frame frame = stack.back();
    if (pos >= frame.end) {
      stack.pop_back();
      continue;
    }
    uint64_t tag = 0;
    if (!read_varint(bytes, pos, frame.end, tag)) {
      return deepest;
    }
    uint64_t field = tag >> 3;
    uint64_t length = 0;
    switch (tag & 7) {
    case 0:
      if (!read_varint(bytes, pos, frame.end, length)) {
        return deepest;
      }
      continue;
    case 1:
      length = 8;
      break;
    case 5:
      length = 4;
      break;
    case 2:
      if (!read_varint(bytes, pos, frame.end, length)) {
        return deepest;
      }
      break;
    default:
      return deepest; // groups or garbage
    }
    if (length > frame.end - pos) {
      return deepest;
    }
    bool message = (tag & 7) == 2;
    ScanLevel child = ScanLevel::model;
    int depth = frame.depth;
    if (message && frame.kind == ScanLevel::model && field == k_model_graph) {
      child = ScanLevel::graph;
      depth = 0;
    } else if (message && frame.kind == ScanLevel::graph && field == k_graph_node) {
      child = ScanLevel::node;
    } else if (message && frame.kind == ScanLevel::node && field == k_node_attribute) {
      child = ScanLevel::attribute;
    } else if (message && frame.kind == ScanLevel::attribute &&
               (field == k_attribute_graph || field == k_attribute_graphs)) {
      child = ScanLevel::graph;
      depth = frame.depth + 1;
    } else {
      pos += length;
      continue;
    }
    deepest = std::max(deepest, depth);
    if (deepest > stop_above) {
      return deepest;
    }
    stack.push_back({pos + static_cast<size_t>(length), child, depth});
  }
  return deepest;
}

} // namespace npucc::model

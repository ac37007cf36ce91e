#include "precision/emulation_casts.h"

#include "model/graph_walk.h"
#include "precision/fusion_guards.h"

#include <unordered_set>
#include <vector>

namespace npucc::precision::detail {

namespace {

using onnx::TensorProto;

bool is_cast_to(const onnx::NodeProto& node, int32_t to) {
  if (node.op_type() != "Cast" || !(node.domain().empty() || node.domain() == "ai.onnx") ||
      node.input_size() != 1 || node.output_size() != 1) {
    return false;
  }
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "to") {
      return attribute.i() == to;
    }
  }
  return false;
}

// Every value read anywhere: node inputs of every graph (a body's reads of outer values
// included) and every graph's outputs.
std::unordered_set<std::string> values_read(onnx::GraphProto& root) {
  std::unordered_set<std::string> read;
  model::for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      read.insert(node.input().begin(), node.input().end());
    }
    for (const auto& output : graph.output()) {
      read.insert(output.name());
    }
  });
  return read;
}

void remove_unread_returns(onnx::GraphProto& graph, const RoundTrips& trips,
                           const std::unordered_set<std::string>& read) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& node : *graph.mutable_node()) {
    const bool unread_return = is_cast_to(node, TensorProto::FLOAT) &&
                               trips.count(node.output(0)) != 0 && read.count(node.output(0)) == 0;
    if (!unread_return) {
      *kept.Add() = std::move(node);
    }
  }
  graph.mutable_node()->Swap(&kept);
}

} // namespace

void read_low_copies(onnx::GraphProto& root, const RoundTrips& trips) {
  model::for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    for (auto& node : *graph.mutable_node()) {
      auto it = is_cast_to(node, TensorProto::FLOAT) ? trips.find(node.input(0)) : trips.end();
      if (it != trips.end()) {
        node.set_input(0, it->second.name);
      }
    }
  });
  const auto read = values_read(root);
  model::for_each_graph(
      root, [&](onnx::GraphProto& graph, int) { remove_unread_returns(graph, trips, read); });
}

int64_t guard_bfloat16_layer_norm_inputs(
    onnx::GraphProto& root, const RoundTrips& trips,
    const std::function<std::string(const std::string&)>& unique) {
  // float16 copies need none: a fused node reading float16 has a CPU kernel, and its scale
  // and bias are float32 in an emulation graph either way (tests/e2e/test_ort_levels.sh).
  std::unordered_set<std::string> bfloat16_copies;
  for (const auto& [value, copy] : trips) {
    if (copy.type == TensorProto::BFLOAT16) {
      bfloat16_copies.insert(copy.name);
    }
  }
  return guard_layer_norm_inputs(root, bfloat16_copies, unique);
}

} // namespace npucc::precision::detail

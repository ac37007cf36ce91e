// Guarding the inputs of decomposed layer norms: ONNX Runtime's LayerNormFusion (levels
// "extended" and "all") turns ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add into one
// LayerNormalization node, and when the ReduceMean's input comes from a Cast read only by the
// pattern, it drops that Cast and feeds the Cast's input to the fused node (the Apex O2 case:
// LayerNormalization computes in float whatever its input type). In a bfloat16 emulation graph
// that Cast is the way back of a round trip, so the fused node reads bfloat16, which ORT 1.30's
// CPU LayerNormalization has no kernel for: the session fails to load with "Failed to find
// kernel for LayerNormalization(1) ... Version mismatch". float16 inputs have a CPU kernel and
// need no guard. A single-input Max between the Cast and the pattern is a copy that ORT does
// not eliminate (an Identity it does), so the fusion sees a float32 input and keeps the Cast.

#include "precision/emulation_casts.h"

#include "model/graph_walk.h"

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

onnx::NodeProto guard(const std::string& input, const std::string& output,
                      const std::string& name) {
  onnx::NodeProto node;
  node.set_op_type("Max");
  node.set_name(name);
  node.add_input(input);
  node.add_output(output);
  node.set_doc_string("a copy: keeps ONNX Runtime's LayerNormFusion from feeding bfloat16 to "
                      "a LayerNormalization it has no CPU kernel for (npucc emulation)");
  return node;
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

int64_t guard_layer_norm_inputs(onnx::GraphProto& root, const RoundTrips& trips,
                                const std::function<std::string(const std::string&)>& unique) {
  std::unordered_set<std::string> bfloat16_copies;
  for (const auto& [value, copy] : trips) {
    if (copy.type == TensorProto::BFLOAT16) {
      bfloat16_copies.insert(copy.name);
    }
  }
  int64_t guards = 0;
  model::for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    std::unordered_set<std::string> reduced;
    for (const auto& node : graph.node()) {
      if (node.op_type() == "ReduceMean" && node.domain().empty() && node.input_size() > 0) {
        reduced.insert(node.input(0));
      }
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (auto& node : *graph.mutable_node()) {
      const bool guarded = is_cast_to(node, TensorProto::FLOAT) &&
                           bfloat16_copies.count(node.input(0)) != 0 &&
                           reduced.count(node.output(0)) != 0;
      if (!guarded) {
        *nodes.Add() = std::move(node);
        continue;
      }
      const std::string output = node.output(0);
      const std::string unfused = unique(output + "_emu_unfused");
      node.set_output(0, unfused);
      *nodes.Add() = std::move(node);
      *nodes.Add() = guard(unfused, output, unique(output + "_emu_guard"));
      ++guards;
    }
    graph.mutable_node()->Swap(&nodes);
  });
  return guards;
}

} // namespace npucc::precision::detail

#include "precision/emulation_casts.h"

#include "model/graph_walk.h"
#include "passes/node_rewriter.h"
#include "precision/fusion_guards.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace npucc::precision::detail {

namespace {

using onnx::TensorProto;

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

// Removes the ways back nothing reads; returns low copy -> the value it was the way back to.
std::unordered_map<std::string, std::string>
remove_unread_returns(onnx::GraphProto& graph, const RoundTrips& trips,
                      const std::unordered_set<std::string>& read) {
  std::unordered_map<std::string, std::string> removed;
  passes::rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
    auto trip = is_cast_to(node, TensorProto::FLOAT) ? trips.find(node.output(0)) : trips.end();
    if (trip == trips.end() || read.count(node.output(0)) != 0) {
      return passes::NodeEdit::keep();
    }
    removed[trip->second.name] = node.output(0);
    return passes::NodeEdit::remove();
  });
  return removed;
}

// A value whose way back is gone is held by its low copy alone, as in the low graph: the copy
// takes the value's name, so what names the value (a node's device configuration, a reader
// of the graph) finds it, with the low graph's type.
void rename_low_copies(onnx::GraphProto& root,
                       const std::unordered_map<std::string, std::string>& names) {
  auto renamed = [&](std::string* name) {
    auto it = names.find(*name);
    if (it != names.end()) {
      *name = it->second;
    }
  };
  model::for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    for (auto& node : *graph.mutable_node()) {
      for (auto& input : *node.mutable_input()) {
        renamed(&input);
      }
      for (auto& output : *node.mutable_output()) {
        renamed(&output);
      }
    }
    auto* infos = graph.mutable_value_info();
    for (int i = infos->size() - 1; i >= 0; --i) {
      const auto& name = infos->Get(i).name();
      if (names.count(name) != 0 || std::any_of(names.begin(), names.end(),
                                                [&](const auto& n) { return n.second == name; })) {
        infos->DeleteSubrange(i, 1); // re-inferred with the value's new type
      }
    }
  });
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
  std::unordered_map<std::string, std::string> removed;
  model::for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    removed.merge(remove_unread_returns(graph, trips, read));
  });
  rename_low_copies(root, removed);
}

int64_t
guard_bfloat16_layer_norm_inputs(onnx::GraphProto& root, const RoundTrips& trips,
                                 const std::function<std::string(const std::string&)>& unique) {
  // float16 copies need none: a fused node reading float16 has a CPU kernel, and its scale
  // and bias are float32 in an emulation graph either way (tests/e2e/test_ort_levels.sh).
  std::unordered_set<std::string> bfloat16_copies;
  for (const auto& [value, copy] : trips) {
    if (copy.type == TensorProto::BFLOAT16) {
      // The copy, or the value's own name where read_low_copies gave it to the copy.
      bfloat16_copies.insert(copy.name);
      bfloat16_copies.insert(value);
    }
  }
  return guard_layer_norm_inputs(root, bfloat16_copies, unique);
}

} // namespace npucc::precision::detail

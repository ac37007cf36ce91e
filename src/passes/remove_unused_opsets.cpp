#include "passes/remove_unused_opsets.h"

#include "model/graph_walk.h"

namespace npucc::passes {

namespace {

void add_domains(const onnx::NodeProto& node, std::unordered_set<std::string>& domains) {
  domains.insert(node.domain());
  for (const auto* body : model::subgraphs_of(node)) {
    model::for_each_graph(*body, [&](const onnx::GraphProto& graph, int) {
      for (const auto& inner : graph.node()) {
        domains.insert(inner.domain());
      }
    });
  }
}

void add_domains(const onnx::GraphProto& graph, std::unordered_set<std::string>& domains) {
  model::for_each_graph(graph, [&](const onnx::GraphProto& each, int) {
    for (const auto& node : each.node()) {
      domains.insert(node.domain());
    }
  });
}

} // namespace

int64_t RemoveUnusedOpsets::run_on_model(onnx::ModelProto& model) {
  std::unordered_set<std::string> used = {"", "ai.onnx"};
  add_domains(model.graph(), used);
  for (const auto& training : model.training_info()) {
    add_domains(training.initialization(), used);
    add_domains(training.algorithm(), used);
  }
  for (const auto& function : model.functions()) {
    used.insert(function.domain());
    for (const auto& node : function.node()) {
      add_domains(node, used);
    }
  }
  auto* opsets = model.mutable_opset_import();
  int kept = 0;
  for (int i = 0; i < opsets->size(); ++i) {
    if (used.count(opsets->Get(i).domain()) != 0) {
      if (kept != i) {
        opsets->SwapElements(kept, i);
      }
      ++kept;
    }
  }
  // ONNX's checker refuses a model (IR version 3 or later) that imports no opset at all:
  // one whose nodes are all gone keeps its first import.
  if (kept == 0 && !opsets->empty()) {
    kept = 1;
  }
  const auto removed = static_cast<int64_t>(opsets->size() - kept);
  while (opsets->size() > kept) {
    opsets->RemoveLast();
  }
  return removed;
}

} // namespace npucc::passes

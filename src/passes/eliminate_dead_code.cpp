#include "passes/eliminate_dead_code.h"

#include "model/graph_walk.h"
#include "passes/node_rewriter.h"
#include "passes/rename.h"
#include "schemas/registry.h"

#include <onnx/defs/schema.h>
#include <unordered_map>

namespace npucc::passes {

namespace {

using Opsets = std::unordered_map<std::string, int>;

Opsets opsets_of(const onnx::ModelProto* model) {
  Opsets opsets;
  if (model != nullptr) {
    for (const auto& opset : model->opset_import()) {
      opsets[schemas::canonical_domain(opset.domain())] = static_cast<int>(opset.version());
    }
  }
  return opsets;
}

bool has_schema(const onnx::NodeProto& node, const Opsets& opsets) {
  const std::string domain = schemas::canonical_domain(node.domain());
  auto it = opsets.find(domain);
  return it != opsets.end() && schemas::find_schema(node.op_type(), it->second, domain) != nullptr;
}

// A node that must stay even when nothing reads it: its op, or an op in one of its
// bodies, has no schema, so it may do more than compute its outputs.
bool pinned(const onnx::NodeProto& node, const Opsets& opsets) {
  if (!has_schema(node, opsets)) {
    return true;
  }
  for (const auto* body : model::subgraphs_of(node)) {
    for (const auto& inner : body->node()) {
      if (pinned(inner, opsets)) {
        return true;
      }
    }
  }
  return false;
}

template <typename Tensors, typename NameOf>
int64_t drop_unused(Tensors& tensors, const std::unordered_set<std::string>& used,
                    const std::unordered_set<std::string>& inputs,
                    std::unordered_set<std::string>& removed, NameOf name_of) {
  int kept = 0;
  for (int i = 0; i < tensors.size(); ++i) {
    const std::string& name = name_of(tensors.Get(i));
    if (used.count(name) == 0 && inputs.count(name) == 0) {
      removed.insert(name);
      continue;
    }
    if (kept != i) {
      tensors.SwapElements(kept, i);
    }
    ++kept;
  }
  const auto count = static_cast<int64_t>(tensors.size() - kept);
  while (tensors.size() > kept) {
    tensors.RemoveLast();
  }
  return count;
}

} // namespace

int64_t EliminateDeadCode::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  const Opsets opsets = opsets_of(context.model);
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& name : graph.node(i).output()) {
      if (!name.empty()) {
        producer.emplace(name, i);
      }
    }
  }

  // Mark and sweep from the graph outputs and the pinned nodes.
  std::vector<bool> live(static_cast<size_t>(n), false);
  std::unordered_set<std::string> used;
  std::vector<std::string> pending;
  auto use = [&](const std::string& name) {
    if (!name.empty() && used.insert(name).second) {
      pending.push_back(name);
    }
  };
  auto make_live = [&](int i) {
    if (live[static_cast<size_t>(i)]) {
      return;
    }
    live[static_cast<size_t>(i)] = true;
    const auto& node = graph.node(i);
    for (const auto& name : node.input()) {
      use(name);
    }
    for (const auto& name : model::implicit_inputs(node)) {
      use(name);
    }
  };
  for (const auto& value : graph.output()) {
    use(value.name());
  }
  for (int i = 0; i < n; ++i) {
    if (pinned(graph.node(i), opsets)) {
      make_live(i);
    }
  }
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    auto it = producer.find(name);
    if (it != producer.end()) {
      make_live(it->second);
    }
  }

  std::unordered_set<std::string> removed;
  int64_t count = rewrite_nodes(graph, [&](onnx::NodeProto& node, int index) {
    if (live[static_cast<size_t>(index)]) {
      return NodeEdit::keep();
    }
    removed.insert(node.output().begin(), node.output().end());
    return NodeEdit::remove();
  });

  // An initializer that is also a graph input is a default the caller may override.
  std::unordered_set<std::string> inputs;
  for (const auto& value : graph.input()) {
    inputs.insert(value.name());
  }
  count += drop_unused(*graph.mutable_initializer(), used, inputs, removed,
                       [](const onnx::TensorProto& t) -> const std::string& { return t.name(); });
  count += drop_unused(
      *graph.mutable_sparse_initializer(), used, inputs, removed,
      [](const onnx::SparseTensorProto& t) -> const std::string& { return t.values().name(); });
  drop_value_info(graph, removed);
  return count;
}

} // namespace npucc::passes

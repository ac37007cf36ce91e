#include "passes/rename.h"

#include "model/graph_walk.h"

namespace npucc::passes {

namespace {

void collect_nested(const onnx::GraphProto& body, NestedNames& names) {
  auto defined_here = model::defined_names(body);
  for (const auto& output : body.output()) {
    if (defined_here.count(output.name()) == 0) {
      names.outer_outputs.insert(output.name());
    }
  }
  names.defined.insert(defined_here.begin(), defined_here.end());
  for (const auto& node : body.node()) {
    for (const auto* inner : model::subgraphs_of(node)) {
      collect_nested(*inner, names);
    }
  }
}

int64_t rename_in(onnx::GraphProto& graph,
                  const std::unordered_map<std::string, std::string>& renames) {
  int64_t renamed = 0;
  for (auto& node : *graph.mutable_node()) {
    for (auto& input : *node.mutable_input()) {
      auto it = renames.find(input);
      if (it != renames.end()) {
        input = it->second;
        ++renamed;
      }
    }
    for (auto* body : model::subgraphs_of(node)) {
      auto defined = model::defined_names(*body);
      bool shadows = false;
      for (const auto& entry : renames) {
        shadows = shadows || defined.count(entry.first) != 0;
      }
      if (!shadows) {
        renamed += rename_in(*body, renames);
        continue;
      }
      auto visible = renames;
      for (auto it = visible.begin(); it != visible.end();) {
        it = defined.count(it->first) != 0 ? visible.erase(it) : std::next(it);
      }
      if (!visible.empty()) {
        renamed += rename_in(*body, visible);
      }
    }
  }
  return renamed;
}

// A bypassed node waits for its caller to remove it; until then it must not look
// like the producer or a reader of anything.
void detach(onnx::NodeProto& node) {
  node.clear_input();
  node.clear_output();
}

} // namespace

NestedNames nested_names(const onnx::GraphProto& graph) {
  NestedNames names;
  for (const auto& node : graph.node()) {
    for (const auto* body : model::subgraphs_of(node)) {
      collect_nested(*body, names);
    }
  }
  return names;
}

bool can_redirect(const NestedNames& nested, const std::string& from, const std::string& to) {
  return nested.defined.count(to) == 0 && nested.outer_outputs.count(from) == 0;
}

int64_t rename_reads(onnx::GraphProto& graph,
                     const std::unordered_map<std::string, std::string>& renames) {
  if (renames.empty()) {
    return 0;
  }
  return rename_in(graph, renames);
}

bool bypass_node(onnx::GraphProto& graph, int index, const NestedNames& nested) {
  const auto& node = graph.node(index);
  if (node.input_size() < 1 || node.output_size() != 1) {
    return false;
  }
  const std::string input = node.input(0);
  const std::string output = node.output(0);
  if (input.empty() || output.empty() || input == output) {
    return false;
  }
  bool output_is_graph_output = false;
  bool input_is_graph_output = false;
  for (const auto& value : graph.output()) {
    output_is_graph_output = output_is_graph_output || value.name() == output;
    input_is_graph_output = input_is_graph_output || value.name() == input;
  }
  if (!output_is_graph_output) {
    if (!can_redirect(nested, output, input)) {
      return false;
    }
    rename_reads(graph, {{output, input}});
    drop_value_info(graph, {output});
    detach(*graph.mutable_node(index));
    return true;
  }
  // The output name is part of the graph's interface and stays; the value can take
  // it over from its producer when nothing else needs the old name: the producer is
  // a node here (not an input, initializer or outer value) and the old name is not
  // an output as well.
  if (input_is_graph_output) {
    return false;
  }
  onnx::NodeProto* producer = nullptr;
  int producer_output = -1;
  for (int i = 0; i < graph.node_size() && producer == nullptr; ++i) {
    auto& candidate = *graph.mutable_node(i);
    for (int k = 0; k < candidate.output_size(); ++k) {
      if (candidate.output(k) == input) {
        producer = &candidate;
        producer_output = k;
        break;
      }
    }
  }
  if (producer == nullptr || producer == &node || !can_redirect(nested, input, output)) {
    return false;
  }
  producer->set_output(producer_output, output);
  rename_reads(graph, {{input, output}});
  // The graph output entry describes the value under its kept name.
  drop_value_info(graph, {input});
  detach(*graph.mutable_node(index));
  return true;
}

void drop_value_info(onnx::GraphProto& graph, const std::unordered_set<std::string>& names) {
  if (names.empty()) {
    return;
  }
  auto* infos = graph.mutable_value_info();
  int kept = 0;
  for (int i = 0; i < infos->size(); ++i) {
    if (names.count(infos->Get(i).name()) == 0) {
      if (kept != i) {
        infos->SwapElements(kept, i);
      }
      ++kept;
    }
  }
  while (infos->size() > kept) {
    infos->RemoveLast();
  }
}

} // namespace npucc::passes

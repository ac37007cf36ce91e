#include "model/graph_walk.h"

namespace npucc::model {

std::vector<onnx::GraphProto*> subgraphs_of(onnx::NodeProto& node) {
  std::vector<onnx::GraphProto*> graphs;
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.has_g()) {
      graphs.push_back(attribute.mutable_g());
    }
    for (auto& graph : *attribute.mutable_graphs()) {
      graphs.push_back(&graph);
    }
  }
  return graphs;
}

std::vector<const onnx::GraphProto*> subgraphs_of(const onnx::NodeProto& node) {
  std::vector<const onnx::GraphProto*> graphs;
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g()) {
      graphs.push_back(&attribute.g());
    }
    for (const auto& graph : attribute.graphs()) {
      graphs.push_back(&graph);
    }
  }
  return graphs;
}

std::vector<Body<onnx::GraphProto>> bodies_of(onnx::GraphProto& graph) {
  std::vector<Body<onnx::GraphProto>> bodies;
  for (auto& node : *graph.mutable_node()) {
    for (auto* body : subgraphs_of(node)) {
      bodies.push_back({body, &node});
    }
  }
  return bodies;
}

std::vector<Body<const onnx::GraphProto>> bodies_of(const onnx::GraphProto& graph) {
  std::vector<Body<const onnx::GraphProto>> bodies;
  for (const auto& node : graph.node()) {
    for (const auto* body : subgraphs_of(node)) {
      bodies.push_back({body, &node});
    }
  }
  return bodies;
}

namespace {

// for_each_graph's walk: the state is the depth.
template <typename Graph, typename Visit> void walk_with_depth(Graph& graph, const Visit& visit) {
  walk_graphs(
      graph, 0, [&](Graph& each, int& depth) { visit(each, depth); },
      [](Graph&, int& depth) { ++depth; }, [](const onnx::NodeProto&, Graph&, int&) {});
}

void collect_used(const onnx::GraphProto& graph, std::unordered_set<std::string>& used,
                  std::unordered_set<std::string>& defined) {
  for (const auto& input : graph.input()) {
    defined.insert(input.name());
  }
  for (const auto& init : graph.initializer()) {
    defined.insert(init.name());
  }
  for (const auto& init : graph.sparse_initializer()) {
    defined.insert(init.values().name());
  }
  for (const auto& node : graph.node()) {
    for (const auto& name : node.input()) {
      if (!name.empty()) {
        used.insert(name);
      }
    }
    for (const auto* sub : subgraphs_of(node)) {
      for (const auto& name : implicit_inputs_of_graph(*sub)) {
        used.insert(name);
      }
    }
    for (const auto& name : node.output()) {
      defined.insert(name);
    }
  }
  for (const auto& output : graph.output()) {
    used.insert(output.name());
  }
}

} // namespace

std::unordered_set<std::string> implicit_inputs_of_graph(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> used;
  std::unordered_set<std::string> defined;
  collect_used(graph, used, defined);
  std::unordered_set<std::string> outer;
  for (const auto& name : used) {
    if (defined.count(name) == 0) {
      outer.insert(name);
    }
  }
  return outer;
}

void for_each_graph(onnx::GraphProto& graph,
                    const std::function<void(onnx::GraphProto&, int)>& visit) {
  walk_with_depth(graph, visit);
}

void for_each_graph(const onnx::GraphProto& graph,
                    const std::function<void(const onnx::GraphProto&, int)>& visit) {
  walk_with_depth(graph, visit);
}

void rename_reads(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  for_each_graph(graph, [&](onnx::GraphProto& g, int) {
    for (auto& node : *g.mutable_node()) {
      for (auto& input : *node.mutable_input()) {
        if (input == from) {
          input = to;
        }
      }
    }
  });
}

void for_each_tensor(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& visit,
                     SparseTensors sparse_tensors) {
  const bool sparse = sparse_tensors == SparseTensors::visit;
  for_each_graph(graph, [&](onnx::GraphProto& g, int) {
    for (auto& tensor : *g.mutable_initializer()) {
      visit(tensor);
    }
    for (auto& initializer : *g.mutable_sparse_initializer()) {
      if (!sparse) {
        break;
      }
      visit(*initializer.mutable_values());
      visit(*initializer.mutable_indices());
    }
    for (auto& node : *g.mutable_node()) {
      for (auto& attribute : *node.mutable_attribute()) {
        if (attribute.has_t()) {
          visit(*attribute.mutable_t());
        }
        for (auto& tensor : *attribute.mutable_tensors()) {
          visit(tensor);
        }
        if (sparse && attribute.has_sparse_tensor()) {
          visit(*attribute.mutable_sparse_tensor()->mutable_values());
          visit(*attribute.mutable_sparse_tensor()->mutable_indices());
        }
      }
    }
  });
}

std::unordered_set<std::string> implicit_inputs(const onnx::NodeProto& node) {
  std::unordered_set<std::string> names;
  for (const auto* sub : subgraphs_of(node)) {
    for (const auto& name : implicit_inputs_of_graph(*sub)) {
      names.insert(name);
    }
  }
  return names;
}

std::unordered_set<std::string> defined_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> names;
  for (const auto& input : graph.input()) {
    names.insert(input.name());
  }
  for (const auto& init : graph.initializer()) {
    names.insert(init.name());
  }
  for (const auto& init : graph.sparse_initializer()) {
    names.insert(init.values().name());
  }
  for (const auto& node : graph.node()) {
    for (const auto& name : node.output()) {
      if (!name.empty()) {
        names.insert(name);
      }
    }
  }
  return names;
}

std::string describe_node(const onnx::NodeProto& node, int index) {
  std::string text = node.op_type() + " node ";
  if (!node.name().empty()) {
    return text + "\"" + node.name() + "\"";
  }
  if (node.output_size() > 0 && !node.output(0).empty()) {
    return text + "#" + std::to_string(index) + " (output \"" + node.output(0) + "\")";
  }
  return text + "#" + std::to_string(index);
}

} // namespace npucc::model

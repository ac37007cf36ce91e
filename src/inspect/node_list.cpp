// `npucc inspect --nodes`: node names, ops, element types and the graph holding each node,
// which is what a --keep-dtype file is written from.
#include "check/validate.h"
#include "inspect/graph_stats.h"
#include "util/text_table.h"
#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "npucc/inspect.h"

#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

namespace npucc {

namespace {

constexpr int k_nodes_format_version = 1;

// Element types by value name; a body sees the names of the graphs around it.
using TypeScope = std::unordered_map<std::string, int32_t>;

void add_value_types(const onnx::GraphProto& graph, TypeScope& types) {
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& value : *list) {
      if (value.type().has_tensor_type() && value.type().tensor_type().elem_type() != 0) {
        types[value.name()] = value.type().tensor_type().elem_type();
      }
    }
  }
  for (const auto& init : graph.initializer()) {
    types[init.name()] = init.data_type();
  }
}

std::vector<NodeSummary::Value> typed(const google::protobuf::RepeatedPtrField<std::string>& names,
                                      const TypeScope& types) {
  std::vector<NodeSummary::Value> values;
  for (const auto& name : names) {
    const auto found = name.empty() ? types.end() : types.find(name);
    values.push_back({name, found == types.end() ? "" : model::dtype_name(found->second)});
  }
  return values;
}

void list_graph(const onnx::GraphProto& graph, const std::string& path, TypeScope types,
                std::vector<NodeSummary>& out) {
  add_value_types(graph, types);
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    NodeSummary summary;
    summary.name = node.name();
    summary.domain = inspect::domain_name(node.domain());
    summary.op_type = node.op_type();
    summary.graph = path;
    summary.index = i;
    summary.inputs = typed(node.input(), types);
    summary.outputs = typed(node.output(), types);
    out.push_back(std::move(summary));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const std::string label = node.name().empty() ? "#" + std::to_string(i) : node.name();
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) {
        list_graph(attribute.g(), path + "/" + label + "." + attribute.name(), types, out);
      }
      for (const auto& body : attribute.graphs()) {
        list_graph(body, path + "/" + label + "." + attribute.name(), types, out);
      }
    }
  }
}

// The floating-point types among `values`, added to `into`.
std::set<std::string> floating_types(const std::vector<NodeSummary::Value>& values,
                                     std::set<std::string> into = {}) {
  for (const auto& value : values) {
    if (value.dtype.find("float") != std::string::npos) {
      into.insert(value.dtype);
    }
  }
  return into;
}

std::string float_list(const std::vector<NodeSummary::Value>& values) {
  std::string text;
  for (const auto& type : floating_types(values)) {
    text += (text.empty() ? "" : ",") + type;
  }
  return text.empty() ? "-" : text;
}

nlohmann::ordered_json values_json(const std::vector<NodeSummary::Value>& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& value : values) {
    list.push_back({{"name", value.name},
                    {"dtype", value.dtype.empty() ? nlohmann::ordered_json()
                                                  : nlohmann::ordered_json(value.dtype)}});
  }
  return list;
}

} // namespace

std::vector<std::string> NodeSummary::float_types() const {
  const std::set<std::string> floats = floating_types(outputs, floating_types(inputs));
  return {floats.begin(), floats.end()};
}

std::vector<NodeSummary> list_nodes(const Model& model) {
  onnx::ModelProto proto = model.proto; // inference adds value_info; the model stays as read
  check::infer_shapes_lenient(proto);
  std::vector<NodeSummary> nodes;
  list_graph(proto.graph(), "main", {}, nodes);
  return nodes;
}

std::string node_list_text(const std::vector<NodeSummary>& nodes) {
  util::TextTable table("llllll", "");
  table.add_row({"graph", "node", "op", "inputs", "->", "outputs"});
  for (const auto& node : nodes) {
    const std::string op =
        node.domain == "ai.onnx" ? node.op_type : node.domain + "." + node.op_type;
    table.add_row({node.graph,
                   node.name.empty() ? "#" + std::to_string(node.index) + " (unnamed)" : node.name,
                   op, float_list(node.inputs), "->", float_list(node.outputs)});
  }
  return table.render() + std::to_string(nodes.size()) + " nodes; the float types of each " +
         "node's inputs and outputs (- none); --keep-dtype takes the names of the node column\n";
}

std::string node_list_json(const std::filesystem::path& model,
                           const std::vector<NodeSummary>& nodes) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& node : nodes) {
    list.push_back({{"name", node.name},
                    {"domain", node.domain},
                    {"op_type", node.op_type},
                    {"graph", node.graph},
                    {"index", node.index},
                    {"float_types", node.float_types()},
                    {"inputs", values_json(node.inputs)},
                    {"outputs", values_json(node.outputs)}});
  }
  nlohmann::ordered_json out;
  out["format"] = "npucc-inspect-nodes";
  out["format_version"] = k_nodes_format_version;
  out["model"] = model.string();
  out["nodes"] = std::move(list);
  // Names come from the model: invalid UTF-8 is replaced, not a reason to fail.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace npucc

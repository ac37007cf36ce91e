// `npucc inspect --nodes`: node names, ops, element types and the graph holding each node,
// which is what a --keep-dtype file is written from.
#include "check/validate.h"
#include "inspect/compiled_output.h"
#include "inspect/graph_stats.h"
#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "npucc/inspect.h"
#include "util/json_fields.h"
#include "util/text_table.h"

#include <algorithm>
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

// The manifest's node_precisions for `model` when it is a graph of an npucc output folder:
// its role's report (precision_report for low and emulation graphs, high_precision_report
// for a high graph that has one), or null.
nlohmann::json compiled_precisions(const std::filesystem::path& model) {
  const auto graph = inspect::compiled_graph(model);
  const char* key = graph.role == "high" ? "high_precision_report" : "precision_report";
  if (graph.manifest.is_object() && graph.manifest.contains(key) &&
      graph.manifest.at(key).is_object() && graph.manifest.at(key).contains("node_precisions")) {
    return graph.manifest.at(key).at("node_precisions");
  }
  return nullptr;
}

// Each node's precision from the manifest, matched by its first output (the rewrite keeps
// the model's value names; the Casts it adds make new ones).
void add_precisions(const nlohmann::json& precisions, std::vector<NodeSummary>& nodes) {
  std::unordered_map<std::string, const nlohmann::json*> by_output;
  for (const auto& entry : precisions) {
    by_output.emplace(util::string_field(entry, "output"), &entry);
  }
  for (auto& node : nodes) {
    const std::string output = node.outputs.empty() ? "" : node.outputs[0].name;
    auto found = by_output.find(output);
    if (found != by_output.end() && util::string_field(*found->second, "op_type") == node.op_type) {
      node.precision = util::string_field(*found->second, "precision");
      node.reason = util::string_field(*found->second, "reason");
      if (const std::string range = util::string_field(*found->second, "range"); !range.empty()) {
        node.reason += " (" + range + ")"; // activation_range: the numbers
      }
    } else if (node.op_type == "Cast" && node.domain == "ai.onnx") {
      node.precision = "inserted";
    }
  }
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
  if (nlohmann::json precisions = compiled_precisions(model.path); precisions.is_array()) {
    add_precisions(precisions, nodes);
  }
  return nodes;
}

std::string node_list_text(const std::vector<NodeSummary>& nodes) {
  bool compiled = std::any_of(nodes.begin(), nodes.end(),
                              [](const NodeSummary& node) { return !node.precision.empty(); });
  util::TextTable table(compiled ? "llllllll" : "llllll", "");
  std::vector<std::string> header{"graph", "node", "op", "inputs", "->", "outputs"};
  if (compiled) {
    header.insert(header.end(), {"precision", "reason"});
  }
  table.add_row(header);
  for (const auto& node : nodes) {
    const std::string op =
        node.domain == "ai.onnx" ? node.op_type : node.domain + "." + node.op_type;
    std::vector<std::string> row{
        node.graph, node.name.empty() ? "#" + std::to_string(node.index) + " (unnamed)" : node.name,
        op, float_list(node.inputs), "->", float_list(node.outputs)};
    if (compiled) {
      row.insert(row.end(), {node.precision.empty() ? "-" : node.precision,
                             node.reason.empty() ? "-" : node.reason});
    }
    table.add_row(row);
  }
  return table.render() + std::to_string(nodes.size()) + " nodes; the float types of each " +
         "node's inputs and outputs (- none); --keep-dtype takes the names of the node column" +
         (compiled ? "; precision and reason from manifest.json (reasons: npucc-precision(7))"
                   : "") +
         "\n";
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
    if (!node.precision.empty()) {
      list.back()["precision"] = node.precision;
      list.back()["reason"] =
          node.reason.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(node.reason);
    }
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

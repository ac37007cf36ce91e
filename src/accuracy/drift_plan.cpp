// accuracy/drift_run.h: plan_drift, the values a drift report measures in a low graph.
#include "accuracy/drift_run.h"

#include "model/graph_walk.h"

#include <unordered_map>
#include <unordered_set>

namespace npucc::accuracy {

namespace {

using onnx::TensorProto;

const char* stored_name(int32_t type) {
  switch (type) {
  case TensorProto::FLOAT16: return "float16";
  case TensorProto::BFLOAT16: return "bfloat16";
  case TensorProto::FLOAT: return "float32";
  default: return nullptr;
  }
}

std::unordered_map<std::string, int32_t> stored_value_types(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int32_t> types;
  for (const auto* list : {&graph.value_info(), &graph.output()}) {
    for (const auto& value : *list) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
  }
  return types;
}

// The node outputs of `graph` of a float type, by name.
std::unordered_map<std::string, int32_t> float_node_outputs(const onnx::GraphProto& graph) {
  const auto types = stored_value_types(graph);
  std::unordered_map<std::string, int32_t> out;
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      auto found = types.find(output);
      if (found != types.end() && stored_name(found->second) != nullptr) {
        out.emplace(output, found->second);
      }
    }
  }
  return out;
}

// The precision report's reason per node name, for nodes kept float32.
std::unordered_map<std::string, std::string> kept_reasons(const nlohmann::json& report) {
  std::unordered_map<std::string, std::string> out;
  if (!report.is_object() || !report.contains("node_precisions")) {
    return out;
  }
  for (const auto& entry : report.at("node_precisions")) {
    if (entry.contains("reason") && entry.at("reason").is_string() &&
        entry.at("name").is_string()) {
      out[entry.at("name").get<std::string>()] = entry.at("reason").get<std::string>();
    }
  }
  return out;
}

} // namespace

nlohmann::json bodies_not_covered(const onnx::GraphProto& low) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& node : low.node()) {
    for (const auto& attribute : node.attribute()) {
      if (!attribute.has_g()) {
        continue;
      }
      int64_t values = 0;
      model::for_each_graph(attribute.g(), [&](const onnx::GraphProto& g, int) {
        for (const auto& inner : g.node()) {
          values += inner.output_size();
        }
      });
      out.push_back({{"graph", "main/" + node.name() + ":" + attribute.name()},
                     {"values", values},
                     {"reason", "a body's values are not graph outputs; the report does not "
                                "expose them yet"}});
    }
  }
  return out;
}

DriftPlan plan_drift(const onnx::GraphProto& low, const onnx::GraphProto& high,
                     const nlohmann::json& precision_report) {
  DriftPlan plan;
  const auto low_values = float_node_outputs(low);
  const auto high_values = float_node_outputs(high);
  const auto reasons = kept_reasons(precision_report);
  std::unordered_map<std::string, size_t> measured; // value (or inserted Cast's output) -> index
  for (int n = 0; n < low.node_size(); ++n) {
    const auto& node = low.node(n);
    std::vector<size_t> inputs;
    for (const auto& input : node.input()) {
      auto found = measured.find(input);
      if (found != measured.end()) {
        inputs.push_back(found->second);
      }
    }
    for (const auto& output : node.output()) {
      auto type = low_values.find(output);
      if (type == low_values.end()) {
        continue;
      }
      if (high_values.count(output) == 0) { // a Cast the rewrite inserted: its input's alias
        if (node.op_type() == "Cast" && inputs.size() == 1) {
          measured[output] = inputs.front();
        }
        continue;
      }
      accuracy::DriftValue value;
      value.order = n;
      value.node = node.name();
      value.op_type = node.op_type();
      value.value = output;
      value.stored = stored_name(type->second);
      auto reason = reasons.find(node.name());
      value.kept_reason = value.stored == "float32" && reason != reasons.end() ? reason->second : "";
      value.inputs = inputs;
      measured[output] = plan.values.size();
      plan.values.push_back(std::move(value));
    }
  }
  plan.not_covered = bodies_not_covered(low);
  return plan;
}

} // namespace npucc::accuracy

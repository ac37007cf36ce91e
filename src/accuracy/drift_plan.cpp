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

// The node outputs of a body and the bodies nested in it.
int64_t body_value_count(const onnx::GraphProto& body) {
  int64_t values = 0;
  model::for_each_graph(body, [&](const onnx::GraphProto& g, int) {
    for (const auto& inner : g.node()) {
      values += inner.output_size();
    }
  });
  return values;
}

std::string body_not_readable(const onnx::NodeProto& node, const onnx::GraphProto& body,
                              const onnx::GraphProto* counterpart, const accuracy::BodyPath& path) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() || (op != "If" && op != "Loop" && op != "Scan")) {
    return "a body of a " + op + " node: the report reads If, Loop and Scan bodies only";
  }
  if (op == "If" && accuracy::stacked_axes(path) > 0) {
    return "an If branch inside a Loop or Scan body: an iteration that takes the other "
           "branch leaves nothing to stack";
  }
  const int outputs = body.output_size() - (op == "Loop" ? 1 : 0);
  if (node.output_size() == 0 || node.output_size() != outputs) {
    return "the " + op + " node names " + std::to_string(node.output_size()) +
           " output(s) of its body's " + std::to_string(outputs) + ": a new one would not line up";
  }
  if (counterpart == nullptr) {
    return "the high graph (or the reference) holds no body under that node and attribute";
  }
  return "";
}

const onnx::GraphProto* matching_body(const onnx::GraphProto& other, const onnx::NodeProto& node,
                                      const std::string& attribute) {
  if (node.output_size() == 0) {
    return nullptr;
  }
  for (const auto& candidate_node : other.node()) {
    if (candidate_node.output_size() == 0 || candidate_node.output(0) != node.output(0)) {
      continue;
    }
    for (const auto& candidate : candidate_node.attribute()) {
      if (candidate.name() == attribute && candidate.has_g()) {
        return &candidate.g();
      }
    }
  }
  return nullptr;
}

namespace {

// What planning a graph and its bodies shares.
struct PlanWalk {
  DriftPlan& plan;
  const std::unordered_map<std::string, std::string>& reasons;
};

using MeasuredIndex = std::unordered_map<std::string, size_t>; // a value (or its alias) -> index

MeasuredIndex plan_graph(PlanWalk& walk, const onnx::GraphProto& low,
                         const onnx::GraphProto& high, const accuracy::BodyPath& path,
                         int64_t main_order, MeasuredIndex measured);

// The bodies of `node` (in `high`'s graph, at `path`): planned, or listed as not covered.
// Returns the measured values among the bodies' outputs: what the node's outputs come from.
std::vector<size_t> plan_bodies(PlanWalk& walk, const onnx::NodeProto& node,
                                const onnx::GraphProto& high, const accuracy::BodyPath& path,
                                int64_t main_order, const MeasuredIndex& measured) {
  std::vector<size_t> outputs;
  for (const auto& attribute : node.attribute()) {
    if (!attribute.has_g()) {
      continue;
    }
    accuracy::BodyPath child = path;
    child.push_back(accuracy::step_into(node, attribute.name()));
    const auto* high_body = matching_body(high, node, attribute.name());
    const std::string blocked = body_not_readable(node, attribute.g(), high_body, path);
    if (!blocked.empty()) {
      walk.plan.not_covered.push_back({{"graph", accuracy::body_graph_name(child)},
                                       {"values", body_value_count(attribute.g())},
                                       {"reason", blocked}});
      continue;
    }
    const auto inner = plan_graph(walk, attribute.g(), *high_body, child, main_order, measured);
    for (const auto& output : attribute.g().output()) {
      if (auto found = inner.find(output.name()); found != inner.end()) {
        outputs.push_back(found->second);
      }
    }
  }
  return outputs;
}

// The values of `low` (the graph at `path`; `high` the high graph's same graph) the high
// graph also computes, each body's before its node's outputs (a body runs within its node).
// `measured`: the values of the enclosing graphs, which a body reads too; returned with the
// graph's own. A node with bodies counts its bodies' measured outputs among its inputs.
MeasuredIndex plan_graph(PlanWalk& walk, const onnx::GraphProto& low,
                         const onnx::GraphProto& high, const accuracy::BodyPath& path,
                         int64_t main_order, MeasuredIndex measured) {
  const auto low_values = float_node_outputs(low);
  const auto high_values = float_node_outputs(high);
  for (int n = 0; n < low.node_size(); ++n) {
    const auto& node = low.node(n);
    const int64_t order = path.empty() ? n : main_order;
    std::vector<size_t> inputs;
    for (const auto& input : node.input()) {
      auto found = measured.find(input);
      if (found != measured.end()) {
        inputs.push_back(found->second);
      }
    }
    const auto from_bodies = plan_bodies(walk, node, high, path, order, measured);
    inputs.insert(inputs.end(), from_bodies.begin(), from_bodies.end());
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
      value.order = order;
      value.node = node.name();
      value.op_type = node.op_type();
      value.value = output;
      value.graph = accuracy::body_graph_name(path);
      value.body = path;
      value.stored = stored_name(type->second);
      auto reason = walk.reasons.find(node.name());
      value.kept_reason =
          value.stored == "float32" && reason != walk.reasons.end() ? reason->second : "";
      value.inputs = inputs;
      measured[output] = walk.plan.values.size();
      walk.plan.values.push_back(std::move(value));
    }
  }
  return measured;
}

} // namespace

DriftPlan plan_drift(const onnx::GraphProto& low, const onnx::GraphProto& high,
                     const nlohmann::json& precision_report) {
  DriftPlan plan;
  const auto reasons = kept_reasons(precision_report);
  PlanWalk walk{plan, reasons};
  plan_graph(walk, low, high, {}, 0, {});
  return plan;
}

} // namespace npucc::accuracy

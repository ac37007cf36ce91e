// compare/compare_pair.h: plan_compare_drift, the values a compare's drift report measures.
#include "compare/compare_pair.h"

#include "accuracy/drift_run.h"
#include "model/graph_walk.h"

#include <unordered_map>
#include <unordered_set>

namespace npucc::compare {

namespace {

using onnx::TensorProto;

const char* stored_type_name(int32_t type) {
  switch (type) {
  case TensorProto::FLOAT16: return "float16";
  case TensorProto::BFLOAT16: return "bfloat16";
  case TensorProto::FLOAT: return "float32";
  default: return nullptr;
  }
}

bool is_float_cast(const onnx::NodeProto& node) {
  if (node.op_type() != "Cast" || !node.domain().empty() || node.input_size() != 1) {
    return false;
  }
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "to") {
      return attribute.i() == TensorProto::FLOAT;
    }
  }
  return false;
}

// A low value the reference has no name for, widened by a Cast to float32 whose output it
// has (a converter's Cast before a float32 graph output): the widening is exact, so the
// Cast's output is the stored value itself, and the node that made it is the one named.
std::unordered_map<std::string, std::string>
exact_widenings(const onnx::GraphProto& candidate,
                const std::unordered_set<std::string>& in_reference) {
  std::unordered_map<std::string, std::string> out;
  for (const auto& node : candidate.node()) {
    if (is_float_cast(node) && in_reference.count(node.output(0)) != 0 &&
        in_reference.count(node.input(0)) == 0) {
      out.emplace(node.input(0), node.output(0));
    }
  }
  return out;
}

using CompareIndex = std::unordered_map<std::string, size_t>; // a value (or its alias) -> index

struct PlanState {
  CompareDriftPlan plan;
  CompareIndex measured;                   // the graph being planned and those enclosing it
  std::unordered_set<std::string> widened; // Cast outputs measured at their input
  accuracy::BodyPath path;                 // the graph being planned; empty: the main graph
  int64_t main_order = 0;                  // a body's: its main-graph node's order
};

// Plans one output of node `n`: measured by its name, by its exact float32 widening, as
// the alias of a Cast's single measured input, or counted as not measured.
void plan_output(PlanState& state, const onnx::NodeProto& node, int n, const std::string& output,
                 int32_t type, const std::vector<size_t>& inputs, bool in_reference,
                 const std::unordered_map<std::string, std::string>& widenings) {
  auto widening = widenings.find(output);
  const bool low = type != TensorProto::FLOAT;
  if (!in_reference && !(low && widening != widenings.end())) {
    if (low) {
      ++state.plan.unmatched;
    }
    if (node.op_type() == "Cast" && inputs.size() == 1) { // a converter's Cast: its input
      state.measured[output] = inputs.front();
    }
    return;
  }
  accuracy::DriftValue value;
  value.order = state.path.empty() ? n : state.main_order;
  value.node = node.name();
  value.graph = accuracy::body_graph_name(state.path);
  value.body = state.path;
  value.op_type = node.op_type();
  value.value = in_reference ? output : widening->second;
  value.stored = stored_type_name(type);
  value.inputs = inputs;
  state.measured[output] = state.plan.values.size();
  if (!in_reference) {
    state.measured[widening->second] = state.plan.values.size();
    state.widened.insert(widening->second);
  }
  state.plan.values.push_back(std::move(value));
}

void plan_compare_graph(PlanState& state, const onnx::GraphProto& candidate,
                        const onnx::GraphProto& reference);

// The bodies of `node` (of the candidate's graph being planned; `reference` its same graph):
// planned in a copy of the state's scope, or listed as not covered. Returns the measured values
// among their outputs: what the node's outputs come from.
std::vector<size_t> plan_compare_bodies(PlanState& state, const onnx::NodeProto& node,
                                        const onnx::GraphProto& reference) {
  std::vector<size_t> outputs;
  for (const auto& attribute : node.attribute()) {
    if (!attribute.has_g()) {
      continue;
    }
    const auto* counterpart = accuracy::matching_body(reference, node, attribute.name());
    accuracy::BodyPath child = state.path;
    child.push_back(accuracy::step_into(node, attribute.name()));
    const auto why = accuracy::body_not_readable(node, attribute.g(), counterpart, state.path);
    if (!why.empty()) {
      state.plan.not_covered.push_back({{"graph", accuracy::body_graph_name(child)},
                                        {"values", accuracy::body_value_count(attribute.g())},
                                        {"reason", why}});
      continue;
    }
    PlanState inner;
    inner.plan = std::move(state.plan);
    inner.measured = state.measured;
    inner.path = std::move(child);
    inner.main_order = state.main_order;
    plan_compare_graph(inner, attribute.g(), *counterpart);
    state.plan = std::move(inner.plan);
    for (const auto& output : attribute.g().output()) {
      if (auto found = inner.measured.find(output.name()); found != inner.measured.end()) {
        outputs.push_back(found->second);
      }
    }
  }
  return outputs;
}

// The values of the candidate's graph `candidate` (at state.path) that `reference`, the
// reference's same graph, defines too, each body's before its node's outputs.
void plan_compare_graph(PlanState& state, const onnx::GraphProto& candidate,
                        const onnx::GraphProto& reference) {
  std::unordered_map<std::string, int32_t> types;
  for (const auto* list : {&candidate.value_info(), &candidate.output()}) {
    for (const auto& value : *list) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
  }
  const auto in_reference = model::defined_names(reference);
  const auto widenings = exact_widenings(candidate, in_reference);
  for (int n = 0; n < candidate.node_size(); ++n) {
    const auto& node = candidate.node(n);
    if (state.path.empty()) {
      state.main_order = n;
    }
    std::vector<size_t> inputs;
    for (const auto& input : node.input()) {
      auto found = state.measured.find(input);
      if (found != state.measured.end()) {
        inputs.push_back(found->second);
      }
    }
    const auto from_bodies = plan_compare_bodies(state, node, reference);
    inputs.insert(inputs.end(), from_bodies.begin(), from_bodies.end());
    for (const auto& output : node.output()) {
      auto type = types.find(output);
      if (output.empty() || type == types.end() || stored_type_name(type->second) == nullptr ||
          state.widened.count(output) != 0) {
        continue;
      }
      plan_output(state, node, n, output, type->second, inputs,
                  in_reference.count(output) != 0, widenings);
    }
  }
}

} // namespace

CompareDriftPlan plan_compare_drift(const onnx::GraphProto& candidate,
                                    const onnx::GraphProto& reference) {
  PlanState state;
  plan_compare_graph(state, candidate, reference);
  return std::move(state.plan);
}

} // namespace npucc::compare

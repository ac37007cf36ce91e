#include "precision/opset_hint.h"

#include "model/graph_walk.h"
#include "opset/raise_opset.h"
#include "precision/low_graph_opset.h"
#include "precision/schema_check.h"
#include "schemas/registry.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace npucc::precision {

namespace {

using ValueTypes = std::unordered_map<std::string, int32_t>;
using onnx::TensorProto;

ValueTypes value_types(const onnx::ModelProto& model) {
  ValueTypes types;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& value : *list) {
        types[value.name()] = value.type().tensor_type().elem_type();
      }
    }
    for (const auto& tensor : graph.initializer()) {
      types[tensor.name()] = tensor.data_type();
    }
  });
  return types;
}

// Ops the report keeps float32 for their schema, with how many nodes each.
std::map<std::string, int64_t> schema_held_ops(const nlohmann::json& report) {
  std::map<std::string, int64_t> held;
  auto nodes = report.find("node_precisions");
  if (nodes == report.end()) {
    return held;
  }
  for (const auto& node : *nodes) {
    auto reason = node.find("reason");
    if (reason != node.end() && *reason == "schema") {
      ++held[node.at("op_type").get<std::string>()];
    }
  }
  return held;
}

// Would `schema` run `node` in `low`, the inputs and outputs it pins staying float32 (the
// rewrite's own proposal: paint.cpp, try_low)?
bool runs_low(const onnx::OpSchema& schema, const onnx::NodeProto& node, const ValueTypes& types,
              int32_t low) {
  auto propose = [&](const std::string& name, bool pinned) -> int32_t {
    auto found = types.find(name);
    if (name.empty() || found == types.end()) {
      return 0;
    }
    return found->second == TensorProto::FLOAT && !pinned ? low : found->second;
  };
  std::vector<int32_t> inputs;
  for (int j = 0; j < node.input_size(); ++j) {
    inputs.push_back(propose(node.input(j), is_pinned_input(schema, node.op_type(), j)));
  }
  std::vector<int32_t> outputs;
  for (int j = 0; j < node.output_size(); ++j) {
    outputs.push_back(propose(node.output(j), is_pinned_output(schema, node.op_type(), j)));
  }
  return schema_accepts(schema, inputs, outputs);
}

// The first opset after `opset` whose version of the node's op runs it in `low`; 0 if none.
int64_t first_freeing_opset(const onnx::NodeProto& node, int64_t opset, const ValueTypes& types,
                            int32_t low) {
  for (int version = static_cast<int>(opset) + 1; version <= opset::k_max_target_opset; ++version) {
    const auto* schema = schemas::find_schema(node.op_type(), version, "");
    if (schema != nullptr && schema->SinceVersion() > opset &&
        runs_low(*schema, node, types, low)) {
      return version;
    }
  }
  return 0;
}

int64_t count_of(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found == object.end() ? 0 : found->get<int64_t>();
}

} // namespace

int64_t opset_freeing_schema_holds(const onnx::ModelProto& model, const nlohmann::json& report) {
  const auto held = schema_held_ops(report);
  const int64_t opset = opset::default_opset(model);
  if (held.empty() || opset == 0) {
    return 0;
  }
  const int32_t low =
      report.at("low_type") == "bfloat16" ? TensorProto::BFLOAT16 : TensorProto::FLOAT16;
  const ValueTypes types = value_types(model);
  std::set<std::string> judged; // one node per op: the schema, not the node, holds it
  int64_t target = 0;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      if (schemas::canonical_domain(node.domain()).empty() && held.count(node.op_type()) > 0 &&
          judged.insert(node.op_type()).second) {
        target = std::max(target, first_freeing_opset(node, opset, types, low));
      }
    }
  });
  return target;
}

LowCount count_low_nodes(const nlohmann::json& report) {
  LowCount count;
  const std::string low = report.at("low_type").get<std::string>();
  for (const auto& [op, by_precision] : report.at("nodes").items()) {
    if (op != "Constant") {
      int64_t op_low = count_of(by_precision, low.c_str());
      count.low += op_low;
      count.float_nodes += op_low + count_of(by_precision, "float32");
    }
  }
  return count;
}

nlohmann::json target_opset_hint(const nlohmann::json& report, const nlohmann::json& raised,
                                 int64_t target) {
  const LowCount now = count_low_nodes(report);
  const LowCount then = count_low_nodes(raised);
  if (then.low <= now.low) {
    return nullptr;
  }
  return {{"target_opset", target},
          {"schema_float32", schema_held_ops(report)},
          {"low_nodes", then.low},
          {"float_nodes", then.float_nodes},
          {"casts_inserted", raised.at("casts").at("inserted")}};
}

std::string target_opset_hint_line(const nlohmann::json& report) {
  auto hint = report.find("target_opset_hint");
  if (hint == report.end()) {
    return {};
  }
  const int64_t low = hint->at("low_nodes").get<int64_t>();
  return "opset: " + low_graph_opset_held(*hint) +
         " stay float32 for their schema; --target-opset " +
         std::to_string(hint->at("target_opset").get<int64_t>()) + " lowers about " +
         std::to_string(low) + " of " + std::to_string(hint->at("float_nodes").get<int64_t>()) +
         " float nodes (" + std::to_string(low - count_low_nodes(report).low) +
         " more) and inserts about " + std::to_string(hint->at("casts_inserted").get<int64_t>()) +
         " casts instead of " + std::to_string(report.at("casts").at("inserted").get<int64_t>());
}

} // namespace npucc::precision

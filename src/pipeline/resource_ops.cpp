#include "pipeline/resource_ops.h"

#include "accuracy/activation_ranges.h"
#include "model/graph_walk.h"

#include <onnx/defs/schema.h>
#include <set>

namespace npucc::pipeline {

namespace {

constexpr const char* k_training_domain = "ai.onnx.preview.training";

bool has_registered_schemas(const std::string& domain) {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return map.count(domain == "ai.onnx" ? std::string() : domain) != 0;
}

std::optional<Uncacheable>
check_node(const onnx::NodeProto& node, int index,
           const std::set<std::pair<std::string, std::string>>& functions,
           const std::string& where) {
  const std::string& domain = node.domain();
  std::string op = (domain.empty() ? "" : domain + "::") + node.op_type();
  if (domain == k_training_domain) {
    return Uncacheable{"training-op", "training-state op " + op + " (" +
                                          model::describe_node(node, index) + where +
                                          ") keeps optimiser state outside the graph"};
  }
  if (functions.count({domain, node.op_type()}) != 0 || has_registered_schemas(domain)) {
    return std::nullopt;
  }
  return Uncacheable{"custom-op", "custom op " + op + " (" + model::describe_node(node, index) +
                                      where + "): domain \"" + domain +
                                      "\" has no registered schema, its meaning lives outside "
                                      "the model"};
}

} // namespace

std::optional<Uncacheable> find_uncacheable_op(const onnx::ModelProto& model) {
  std::set<std::pair<std::string, std::string>> functions;
  for (const auto& function : model.functions()) {
    functions.insert({function.domain(), function.name()});
  }
  std::optional<Uncacheable> found;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int depth) {
    for (int i = 0; i < graph.node_size() && !found; ++i) {
      found = check_node(graph.node(i), i, functions,
                         depth == 0 ? "" : " in subgraph \"" + graph.name() + "\"");
    }
  });
  for (const auto& function : model.functions()) {
    for (int i = 0; i < function.node_size() && !found; ++i) {
      found =
          check_node(function.node(i), i, functions, " in function \"" + function.name() + "\"");
    }
  }
  return found;
}

std::optional<Uncacheable> find_unkeyed_function(const CompileOptions& options) {
  if (accuracy::range_rule_off_for_bench()) {
    return Uncacheable{"bench-setting",
                       "NPUCC_BENCH_NO_RANGE_RULE is set (a benchmark's baseline without the "
                       "activation-range rule): the cache key does not see it, so this compile "
                       "is not cached"};
  }
  for (const auto& function : options.accuracy_functions) {
    if (!function.keyed) {
      return Uncacheable{"accuracy-function",
                         "accuracy_target's function " + function.name +
                             " has no key: a function cannot be hashed, so this compile is not "
                             "cached (npucc.Target(..., key='NAME-v1') caches it under that key)"};
    }
  }
  return std::nullopt;
}

} // namespace npucc::pipeline

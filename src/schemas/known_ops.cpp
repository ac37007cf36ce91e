#include "schemas/known_ops.h"

#include "model/graph_walk.h"
#include "npucc/error.h"
#include "schemas/registry.h"

#include <map>
#include <set>

namespace npucc::schemas {

namespace {

std::string shown(const std::string& domain) {
  return domain.empty() ? "ai.onnx" : domain;
}

// The first opset of `domain` that defines `op`; 0 when none npucc knows does.
int first_opset_of(const std::string& op, const std::string& domain) {
  const int newest = Registry::max_opset(domain);
  for (int version = 1; version <= newest; ++version) {
    if (find_schema(op, version, domain) != nullptr) {
      return version;
    }
  }
  return 0;
}

[[noreturn]] void refuse(const onnx::NodeProto& node, int index, const std::string& domain,
                         int opset) {
  const std::string what = model::describe_node(node, index) + ": no operator " + node.op_type() +
                           " in domain " + shown(domain) + " at opset " + std::to_string(opset);
  const int first = first_opset_of(node.op_type(), domain);
  if (first > opset) {
    throw Error(what + " (" + node.op_type() + " is defined from opset " + std::to_string(first) +
                    ")",
                "import opset " + std::to_string(first) + " or later of " + shown(domain) +
                    ", or re-export the model");
  }
  throw Error(what + " (nor at any opset npucc knows, up to " +
                  std::to_string(Registry::max_opset(domain)) + ")",
              "a custom operator belongs in a domain of its own");
}

} // namespace

void check_known_operators(const onnx::ModelProto& model) {
  std::map<std::string, int> opsets;
  for (const auto& opset : model.opset_import()) {
    opsets[canonical_domain(opset.domain())] = static_cast<int>(opset.version());
  }
  std::set<std::pair<std::string, std::string>> functions;
  for (const auto& function : model.functions()) {
    functions.insert({canonical_domain(function.domain()), function.name()});
  }
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& node = graph.node(i);
      const std::string domain = canonical_domain(node.domain());
      auto opset = opsets.find(domain);
      if (Registry::max_opset(domain) == 0 || opset == opsets.end() ||
          functions.count({domain, node.op_type()}) != 0) {
        continue; // a custom domain, or one the checker refuses as not imported
      }
      if (find_schema(node.op_type(), opset->second, domain) == nullptr) {
        refuse(node, i, domain, opset->second);
      }
    }
  });
}

} // namespace npucc::schemas

#include "inspect/graph_stats.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "model/weight_store.h"
#include "schemas/registry.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <onnx/defs/schema.h>
#include <set>
#include <tuple>

namespace npucc::inspect {

std::string domain_name(const std::string& domain) {
  return domain.empty() ? "ai.onnx" : domain;
}

void count_nodes(const onnx::GraphProto& graph, InspectReport& report) {
  std::map<std::pair<std::string, std::string>, OpUse> uses;
  model::for_each_graph(graph, [&](const onnx::GraphProto& g, int depth) {
    report.max_depth = std::max(report.max_depth, depth);
    if (depth > 0) {
      ++report.subgraph_count;
    }
    for (const auto& node : g.node()) {
      auto& use = uses[{domain_name(node.domain()), node.op_type()}];
      use.domain = domain_name(node.domain());
      use.op_type = node.op_type();
      (depth == 0 ? use.main_graph : use.subgraphs) += 1;
      (depth == 0 ? report.main_graph_nodes : report.subgraph_nodes) += 1;
    }
  });
  report.ops.clear();
  for (auto& [key, use] : uses) {
    report.ops.push_back(std::move(use));
  }
  std::stable_sort(report.ops.begin(), report.ops.end(),
                   [](const OpUse& a, const OpUse& b) { return a.count() > b.count(); });
}

namespace {

using Groups = std::map<std::pair<std::string, std::string>, ParameterGroup>;

void add(Groups& groups, const std::string& source, int32_t data_type, uint64_t elements,
         uint64_t bytes) {
  auto& group = groups[{source, model::dtype_name(data_type)}];
  group.source = source;
  group.dtype = model::dtype_name(data_type);
  group.tensors += 1;
  group.elements += elements;
  group.bytes += bytes;
}

// The bytes a tensor of no fixed element size holds, wherever the reader left them.
uint64_t held_bytes(const onnx::TensorProto& tensor) {
  if (model::is_stored(tensor)) {
    return model::stored_size(tensor);
  }
  return model::stored_bytes(tensor);
}

void add_tensor(Groups& groups, const std::string& source, const onnx::TensorProto& tensor) {
  // The reader refused tensors whose dims overflow; value_or keeps this total anyway.
  uint64_t elements = model::element_count(tensor).value_or(0);
  // The size in memory, float8 and the packed 4-bit types of IR 9-13 included, whether
  // they are stored as raw bytes or one per int32_data entry.
  uint64_t bytes = model::element_bits(tensor.data_type()) != 0
                       ? model::bytes_for(tensor.data_type(), elements).value_or(UINT64_MAX)
                       : held_bytes(tensor);
  add(groups, source, tensor.data_type(), elements, bytes);
}

void add_constant(Groups& groups, const onnx::NodeProto& node) {
  const std::string source = "constant";
  for (const auto& attribute : node.attribute()) {
    const std::string& name = attribute.name();
    if (name == "value" && attribute.has_t()) {
      add_tensor(groups, source, attribute.t());
    } else if (name == "sparse_value" && attribute.has_sparse_tensor()) {
      add_tensor(groups, source, attribute.sparse_tensor().values());
    } else if (name == "value_float") {
      add(groups, source, onnx::TensorProto::FLOAT, 1, 4);
    } else if (name == "value_floats") {
      uint64_t n = static_cast<uint64_t>(attribute.floats_size());
      add(groups, source, onnx::TensorProto::FLOAT, n, 4 * n);
    } else if (name == "value_int") {
      add(groups, source, onnx::TensorProto::INT64, 1, 8);
    } else if (name == "value_ints") {
      uint64_t n = static_cast<uint64_t>(attribute.ints_size());
      add(groups, source, onnx::TensorProto::INT64, n, 8 * n);
    } else if (name == "value_string") {
      add(groups, source, onnx::TensorProto::STRING, 1, attribute.s().size());
    } else if (name == "value_strings") {
      uint64_t bytes = 0;
      for (const auto& s : attribute.strings()) {
        bytes += s.size();
      }
      add(groups, source, onnx::TensorProto::STRING,
          static_cast<uint64_t>(attribute.strings_size()), bytes);
    }
  }
}

} // namespace

std::vector<ParameterGroup> count_parameters(const onnx::GraphProto& graph) {
  Groups groups;
  model::for_each_graph(graph, [&](const onnx::GraphProto& g, int) {
    for (const auto& tensor : g.initializer()) {
      add_tensor(groups, "initializer", tensor);
    }
    for (const auto& sparse : g.sparse_initializer()) {
      add_tensor(groups, "initializer", sparse.values());
    }
    for (const auto& node : g.node()) {
      if (node.op_type() == "Constant" && domain_name(node.domain()) == "ai.onnx") {
        add_constant(groups, node);
      }
    }
  });
  std::vector<ParameterGroup> out;
  for (auto& [key, group] : groups) {
    out.push_back(std::move(group));
  }
  std::stable_sort(out.begin(), out.end(), [](const ParameterGroup& a, const ParameterGroup& b) {
    return std::tie(a.source, b.bytes) < std::tie(b.source, a.bytes);
  });
  return out;
}

std::vector<UnregisteredOp> find_unregistered_ops(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> opsets;
  for (const auto& opset : model.opset_import()) {
    opsets[domain_name(opset.domain())] = opset.version();
  }
  std::set<std::pair<std::string, std::string>> functions;
  for (const auto& function : model.functions()) {
    functions.insert({domain_name(function.domain()), function.name()});
  }
  std::map<std::pair<std::string, std::string>, UnregisteredOp> found;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& g, int) {
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& node = g.node(i);
      const std::string domain = domain_name(node.domain());
      if (functions.count({domain, node.op_type()}) != 0) {
        continue;
      }
      auto it = opsets.find(domain);
      int64_t version = it == opsets.end() ? 0 : it->second;
      if (version > 0 &&
          schemas::find_schema(node.op_type(),
                               static_cast<int>(std::min<int64_t>(version, INT32_MAX)),
                               domain) != nullptr) {
        continue;
      }
      auto& op = found[{domain, node.op_type()}];
      op.domain = domain;
      op.op_type = node.op_type();
      op.opset = version;
      op.nodes.push_back(model::describe_node(node, i));
    }
  });
  std::vector<UnregisteredOp> out;
  for (auto& [key, op] : found) {
    out.push_back(std::move(op));
  }
  return out;
}

} // namespace npucc::inspect

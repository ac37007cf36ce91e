#include "accuracy/units.h"

#include "model/graph_walk.h"

#include <set>
#include <unordered_map>

namespace npucc::accuracy {

namespace {

using Types = std::unordered_map<std::string, int32_t>;

void add_types(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
               Types& types) {
  for (const auto& value : values) {
    if (value.type().has_tensor_type()) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
  }
}

// Element types of every value the graph and its bodies declare (inference typed them all).
Types value_types(const onnx::GraphProto& main) {
  Types types;
  model::for_each_graph(main, [&](const onnx::GraphProto& graph, int) {
    add_types(graph.input(), types);
    add_types(graph.output(), types);
    add_types(graph.value_info(), types);
    for (const auto& initializer : graph.initializer()) {
      types[initializer.name()] = initializer.data_type();
    }
  });
  return types;
}

bool is_low(const Types& types, const std::string& name) {
  auto found = types.find(name);
  return found != types.end() && (found->second == onnx::TensorProto::FLOAT16 ||
                                  found->second == onnx::TensorProto::BFLOAT16);
}

bool computes_low(const onnx::NodeProto& node, const Types& types) {
  if (node.name().empty() || node.op_type() == "Cast") {
    return false; // a Cast is where precision changes, not a computation to keep
  }
  for (const auto& name : node.output()) {
    if (is_low(types, name)) {
      return true;
    }
  }
  for (const auto& name : node.input()) {
    if (is_low(types, name)) {
      return true;
    }
  }
  return false;
}

const std::set<std::string> k_matrix_ops = {"Conv", "ConvTranspose", "MatMul", "Gemm"};

// A node joins the unit whose nodes produce every low value it reads, unless it is a matrix
// op (each starts a unit): a Conv's bias, normalisation and activation (Mul, Add, HardSwish
// after PP-OCR's Convs) are low exactly when the Conv is, so measuring the Conv without
// them would miss their rounding, and keeping it float32 keeps them float32 too.
void graph_units(const onnx::GraphProto& graph, const Types& types,
                 std::vector<PrecisionUnit>& units) {
  std::unordered_map<std::string, size_t> unit_of; // a value -> the unit that writes it
  for (const auto& node : graph.node()) {
    if (!computes_low(node, types)) {
      continue;
    }
    std::set<size_t> writers;
    for (const auto& name : node.input()) {
      auto found = unit_of.find(name);
      if (found != unit_of.end() && is_low(types, name)) {
        writers.insert(found->second);
      }
    }
    size_t index = units.size();
    if (k_matrix_ops.count(node.op_type()) == 0 && writers.size() == 1) {
      index = *writers.begin();
      units[index].nodes.push_back(node.name());
      units[index].op += "+" + node.op_type();
    } else {
      units.push_back({{node.name()}, node.op_type()});
    }
    for (const auto& name : node.output()) {
      unit_of[name] = index;
    }
  }
}

} // namespace

std::vector<PrecisionUnit> low_precision_units(const onnx::ModelProto& low) {
  const Types types = value_types(low.graph());
  std::vector<PrecisionUnit> units;
  model::for_each_graph(low.graph(), [&](const onnx::GraphProto& graph, int) {
    graph_units(graph, types, units);
  });
  return units;
}

} // namespace npucc::accuracy

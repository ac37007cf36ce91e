#include "compiler/accuracy_units.h"

#include "model/graph_walk.h"

#include <set>
#include <unordered_map>

namespace npucc::compiler {

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
const std::set<std::string> k_activations = {
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip",
    "Elu", "Selu", "Gelu", "Softplus", "Mish", "Swish"};

void graph_units(const onnx::GraphProto& graph, const Types& types,
                 std::vector<PrecisionUnit>& units) {
  std::unordered_map<std::string, std::vector<int>> consumers;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& name : graph.node(i).input()) {
      consumers[name].push_back(i);
    }
  }
  std::set<int> taken;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (taken.count(i) != 0 || !computes_low(node, types)) {
      continue;
    }
    PrecisionUnit unit{{node.name()}, node.op_type()};
    if (k_matrix_ops.count(node.op_type()) != 0 && node.output_size() == 1) {
      const auto& readers = consumers[node.output(0)];
      if (readers.size() == 1) {
        const auto& next = graph.node(readers[0]);
        if (k_activations.count(next.op_type()) != 0 && computes_low(next, types)) {
          unit.nodes.push_back(next.name());
          unit.op += "+" + next.op_type();
          taken.insert(readers[0]);
        }
      }
    }
    units.push_back(std::move(unit));
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

} // namespace npucc::compiler

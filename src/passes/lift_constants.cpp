#include "passes/lift_constants.h"

#include "passes/fold_values.h"
#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

#include <onnx/defs/schema.h>

namespace npucc::passes {

namespace {

constexpr int64_t k_min_ir_version = 4;

// Versions 19-25 only add element types; the value_* attributes are those of 12 and 13.
bool is_constant(const onnx::NodeProto& node, const onnx::ModelProto* model) {
  return node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx") &&
         node.output_size() == 1 && !node.output(0).empty() && node.attribute_size() == 1 &&
         node.attribute(0).ref_attr_name().empty() &&
         version_is_one_of(node, model, {1, 9, 11, 12, 13, 19, 21, 23, 24, 25});
}

// The value of a Constant's attribute as a tensor; false for kinds left alone.
bool take_value(onnx::AttributeProto& attribute, onnx::TensorProto& tensor) {
  const std::string& kind = attribute.name();
  if (kind == "value") {
    if (!attribute.has_t()) {
      return false;
    }
    tensor.Swap(attribute.mutable_t());
  } else if (kind == "value_float") {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_float_data(attribute.f());
  } else if (kind == "value_floats") {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_dims(attribute.floats_size());
    *tensor.mutable_float_data() = attribute.floats();
  } else if (kind == "value_int") {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_int64_data(attribute.i());
  } else if (kind == "value_ints") {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_dims(attribute.ints_size());
    *tensor.mutable_int64_data() = attribute.ints();
  } else if (kind == "value_string") {
    tensor.set_data_type(onnx::TensorProto::STRING);
    tensor.add_string_data(attribute.s());
  } else if (kind == "value_strings") {
    tensor.set_data_type(onnx::TensorProto::STRING);
    tensor.add_dims(attribute.strings_size());
    *tensor.mutable_string_data() = attribute.strings();
  } else {
    return false;
  }
  return true;
}

// Whether Constant at `opset` may output `elem_type` (an unknown schema allows everything:
// the checker decides).
bool constant_allows(int64_t opset, int32_t elem_type) {
  const auto* schema = onnx::OpSchemaRegistry::Schema("Constant", static_cast<int>(opset), "");
  if (schema == nullptr || schema->outputs().empty()) {
    return true;
  }
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem_type);
  return schema->outputs()[0].GetTypes().count(onnx::Utils::DataTypeUtils::ToType(type)) != 0;
}

onnx::ValueInfoProto input_for(const onnx::TensorProto& tensor) {
  onnx::ValueInfoProto input;
  input.set_name(tensor.name());
  auto* type = input.mutable_type()->mutable_tensor_type();
  type->set_elem_type(tensor.data_type());
  auto* shape = type->mutable_shape();
  for (int64_t dim : tensor.dims()) {
    shape->add_dim()->set_dim_value(dim);
  }
  return input;
}

} // namespace

int64_t lift_constants_the_opset_forbids(onnx::ModelProto& model) {
  int64_t opset = 1;
  for (const auto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") {
      opset = entry.version();
    }
  }
  auto& graph = *model.mutable_graph();
  return rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
    if (!is_constant(node, &model) || node.attribute(0).name() != "value" ||
        !node.attribute(0).has_t() || constant_allows(opset, node.attribute(0).t().data_type())) {
      return NodeEdit::keep();
    }
    onnx::TensorProto tensor;
    take_value(*node.mutable_attribute(0), tensor);
    tensor.set_name(node.output(0));
    if (model.ir_version() < k_min_ir_version) {
      *graph.add_input() = input_for(tensor);
    }
    graph.add_initializer()->Swap(&tensor);
    return NodeEdit::remove();
  });
}

int64_t LiftConstants::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  if (context.model == nullptr || context.model->ir_version() < k_min_ir_version) {
    return 0;
  }
  std::unordered_set<std::string> outputs;
  for (const auto& value : graph.output()) {
    outputs.insert(value.name());
  }
  return rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
    // Runtimes differ on initializers that are also graph outputs: keep the node.
    if (!is_constant(node, context.model) || outputs.count(node.output(0)) != 0) {
      return NodeEdit::keep();
    }
    onnx::TensorProto tensor;
    if (!take_value(*node.mutable_attribute(0), tensor)) {
      return NodeEdit::keep();
    }
    tensor.set_name(node.output(0));
    graph.add_initializer()->Swap(&tensor);
    return NodeEdit::remove();
  });
}

} // namespace npucc::passes

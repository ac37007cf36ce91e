#include "npucc/error.h"
#include "opset/adapter.h"

namespace npucc::opset {

std::string AdaptContext::unique(const std::string& base) {
  std::string name = base;
  for (int n = 1; taken->count(name) != 0; ++n) {
    name = base + "_" + std::to_string(n);
  }
  taken->insert(name);
  return name;
}

std::string AdaptContext::constant(const onnx::TensorProto& value, const std::string& hint) {
  onnx::NodeProto node;
  node.set_op_type("Constant");
  std::string output = unique(hint);
  node.set_name(output);
  node.add_output(output);
  auto* attribute = node.add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  *attribute->mutable_t() = value;
  before.push_back(std::move(node));
  return output;
}

std::string AdaptContext::int64s(const std::vector<int64_t>& values, const std::string& hint,
                                 bool scalar) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  if (!scalar) {
    tensor.add_dims(static_cast<int64_t>(values.size()));
  }
  for (int64_t value : values) {
    tensor.add_int64_data(value);
  }
  return constant(tensor, hint);
}

std::string AdaptContext::float_scalar(float value, int32_t elem_type, const std::string& hint) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_float_data(value);
  std::string name = constant(tensor, hint);
  if (elem_type == onnx::TensorProto::FLOAT) {
    return name;
  }
  // Exact for the values adapters need (0, 0.5, clip bounds within the type's range).
  return node("Cast", {name}, hint, {int_attribute("to", elem_type)});
}

std::string AdaptContext::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::string& hint,
                               std::vector<onnx::AttributeProto> attributes) {
  onnx::NodeProto made;
  made.set_op_type(op);
  std::string output = unique(hint);
  made.set_name(output);
  for (const auto& input : inputs) {
    made.add_input(input);
  }
  made.add_output(output);
  for (auto& attribute : attributes) {
    *made.add_attribute() = std::move(attribute);
  }
  before.push_back(std::move(made));
  return output;
}

int32_t AdaptContext::elem_type(const std::string& name) const {
  auto it = types->find(name);
  return it != types->end() && it->second.has_tensor_type() ? it->second.tensor_type().elem_type()
                                                            : 0;
}

int AdaptContext::rank(const std::string& name) const {
  auto it = types->find(name);
  if (it == types->end() || !it->second.has_tensor_type() ||
      !it->second.tensor_type().has_shape()) {
    return -1;
  }
  return it->second.tensor_type().shape().dim_size();
}

int64_t AdaptContext::dim(const std::string& name, int index) const {
  if (rank(name) <= index) {
    return -1;
  }
  const auto& dim = types->at(name).tensor_type().shape().dim(index);
  return dim.has_dim_value() ? dim.dim_value() : -1;
}

void AdaptContext::refuse(const onnx::NodeProto& node, const std::string& why) const {
  throw Error("--target-opset " + std::to_string(target) + ": cannot raise " + node.op_type() +
                  (node.name().empty() ? "" : " \"" + node.name() + "\"") + " (ai.onnx) from " +
                  "version " + std::to_string(from) + " to " + std::to_string(version) + ": " + why,
              "compile without --target-opset, or rewrite that node in the model");
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) {
      return &attribute;
    }
  }
  return nullptr;
}

void remove_attribute(onnx::NodeProto& node, const std::string& name) {
  auto* attributes = node.mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i) {
    if (attributes->Get(i).name() == name) {
      attributes->DeleteSubrange(i, 1);
    }
  }
}

onnx::AttributeProto int_attribute(const std::string& name, int64_t value) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto::INT);
  attribute.set_i(value);
  return attribute;
}

onnx::AttributeProto ints_attribute(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) {
    attribute.add_ints(value);
  }
  return attribute;
}

void set_input(onnx::NodeProto& node, int index, const std::string& name) {
  while (node.input_size() <= index) {
    node.add_input("");
  }
  node.set_input(index, name);
}

} // namespace npucc::opset

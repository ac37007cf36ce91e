#include "model/newer_types.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "npucc/error.h"

namespace npucc::model {

namespace {

// The typed field holding values, if any but int32_data does: onnx.proto allows only
// int32_data (or raw_data) for every newer type.
const char* disallowed_field(const onnx::TensorProto& tensor) {
  if (tensor.float_data_size() > 0) {
    return "float_data";
  }
  if (tensor.double_data_size() > 0) {
    return "double_data";
  }
  if (tensor.int64_data_size() > 0) {
    return "int64_data";
  }
  if (tensor.uint64_data_size() > 0) {
    return "uint64_data";
  }
  if (tensor.string_data_size() > 0) {
    return "string_data";
  }
  return nullptr;
}

} // namespace

void move_newer_type_values_to_raw(onnx::TensorProto& tensor, const std::string& what) {
  if (!is_newer_type(tensor.data_type()) || tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return;
  }
  const std::string type = dtype_name(tensor.data_type());
  if (const char* field = disallowed_field(tensor)) {
    throw Error(what + " of type " + type + " stores its values in " + field +
                    ", which onnx.proto does not allow for " + type,
                "store " + type + " values in raw_data or int32_data");
  }
  if (tensor.has_raw_data()) {
    if (tensor.int32_data_size() > 0) {
      throw Error(what + " of type " + type + " has both raw_data and int32_data");
    }
    return;
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(tensor.int32_data_size()));
  for (int32_t value : tensor.int32_data()) {
    // A wider value would be a misread waiting to happen: which bits are the element?
    if (value < 0 || value > 255) {
      throw Error(what + " of type " + type + " has int32_data value " + std::to_string(value) +
                      " outside 0..255",
                  "each int32_data entry holds one byte: a float8 value's bits, or two 4-bit "
                  "or four 2-bit values packed from the least significant bit");
    }
    bytes.push_back(static_cast<char>(value));
  }
  tensor.clear_int32_data();
  tensor.set_raw_data(std::move(bytes));
}

void check_sparse_element_type(const onnx::SparseTensorProto& sparse, const std::string& what) {
  int32_t type = sparse.values().data_type();
  if (element_bits(type) != 0 && element_bits(type) < 8) {
    throw Error(what + " has element type " + dtype_name(type) +
                    ": npucc does not carry sparse tensors of packed 2- or 4-bit types",
                "store it as a dense initializer");
  }
}

void for_each_function_tensor(onnx::ModelProto& model,
                              const std::function<void(onnx::TensorProto&)>& visit) {
  for (auto& function : *model.mutable_functions()) {
    for (auto& node : *function.mutable_node()) {
      for (auto& attribute : *node.mutable_attribute()) {
        if (attribute.has_t()) {
          visit(*attribute.mutable_t());
        }
        for (auto& tensor : *attribute.mutable_tensors()) {
          visit(tensor);
        }
        if (attribute.has_sparse_tensor()) {
          visit(*attribute.mutable_sparse_tensor()->mutable_values());
        }
      }
      for (auto* graph : subgraphs_of(node)) {
        for_each_tensor(*graph, visit);
      }
    }
  }
}

} // namespace npucc::model

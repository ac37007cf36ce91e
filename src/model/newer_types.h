#pragma once

#include <functional>
#include <onnx/onnx_pb.h>
#include <string>

// Tensors of the element types newer than ONNX 1.12 (float8 x5, 4-bit, 2-bit: tensor_info.h).
// npucc never computes in them; it carries their bytes. ONNX 1.12's checker refuses such a
// tensor unless its values are in raw_data ("Unrecognized data_type"), so the reader moves
// int32_data into raw_data, byte for byte, where onnx.proto allows int32_data at all.
namespace npucc::model {

// For a tensor of a newer type stored inline: int32_data (one byte per value: a float8
// value's bits, or two 4-bit or four 2-bit values packed LSB first) becomes raw_data with
// the same bytes. Throws npucc::Error naming `what` and the type on a value outside 0..255,
// or on values in a field onnx.proto does not allow for the type. Other tensors: unchanged.
void move_newer_type_values_to_raw(onnx::TensorProto& tensor, const std::string& what);

// Sparse tensors of packed (2- and 4-bit) types: packing and per-element indices do not
// fit together, and no runtime reads them; refused naming `what`.
void check_sparse_element_type(const onnx::SparseTensorProto& sparse, const std::string& what);

// Every tensor in the model's local functions (Constant values, tensor attributes, their
// subgraphs): for_each_tensor sees the graphs only.
void for_each_function_tensor(onnx::ModelProto& model,
                              const std::function<void(onnx::TensorProto&)>& visit);

} // namespace npucc::model

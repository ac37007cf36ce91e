#pragma once

#include <cstdint>

// ONNX's protobuf field numbers (onnx.proto) that npucc's wire-format scanners follow on the
// way from a model to its subgraphs and its tensors' bytes, without parsing the model.
namespace npucc::model::onnx_fields {

constexpr uint32_t k_model_graph = 7;
constexpr uint32_t k_graph_node = 1;
constexpr uint32_t k_graph_initializer = 5;
constexpr uint32_t k_node_attribute = 5;
constexpr uint32_t k_attribute_t = 5;
constexpr uint32_t k_attribute_graph = 6;
constexpr uint32_t k_attribute_tensors = 10;
constexpr uint32_t k_attribute_graphs = 11;
constexpr uint32_t k_tensor_dims = 1;
constexpr uint32_t k_tensor_data_type = 2;
constexpr uint32_t k_tensor_float_data = 4;
constexpr uint32_t k_tensor_int32_data = 5;
constexpr uint32_t k_tensor_int64_data = 7;
constexpr uint32_t k_tensor_raw_data = 9;
constexpr uint32_t k_tensor_double_data = 10;
constexpr uint32_t k_tensor_uint64_data = 11;
constexpr uint32_t k_tensor_external_data = 13;
constexpr uint32_t k_tensor_data_location = 14;

} // namespace npucc::model::onnx_fields

#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

namespace npucc::model {

// "float32", "float16", "bfloat16", "int64", ...
std::string dtype_name(int32_t data_type);
// Bytes per element; 0 for string and undefined types.
uint64_t element_size(int32_t data_type);
bool is_floating(int32_t data_type);

// Number of elements the dims declare; nullopt on a negative dim or overflow.
std::optional<uint64_t> element_count(const onnx::TensorProto& tensor);
// Bytes the tensor's data occupies (for fixed-size types); nullopt on overflow.
std::optional<uint64_t> data_bytes(const onnx::TensorProto& tensor);

// Bytes actually stored in the tensor (raw_data or typed fields).
uint64_t stored_bytes(const onnx::TensorProto& tensor);

// a * b with overflow detection.
std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b);

} // namespace npucc::model

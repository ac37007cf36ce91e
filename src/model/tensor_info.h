#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

namespace npucc::model {

// TensorProto.DataType values past ONNX 1.12's enum (which ends at BFLOAT16 = 16): the
// element types of IR versions 9 to 13 (onnx.proto of ONNX 1.23).
inline constexpr int32_t k_float8e4m3fn = 17;
inline constexpr int32_t k_float8e4m3fnuz = 18;
inline constexpr int32_t k_float8e5m2 = 19;
inline constexpr int32_t k_float8e5m2fnuz = 20;
inline constexpr int32_t k_uint4 = 21;
inline constexpr int32_t k_int4 = 22;
inline constexpr int32_t k_float4e2m1 = 23;
inline constexpr int32_t k_float8e8m0 = 24;
inline constexpr int32_t k_uint2 = 25;
inline constexpr int32_t k_int2 = 26;
inline constexpr int32_t k_max_data_type = k_int2;

// "float32", "float16", "bfloat16", "int64", "float8e4m3fn", "int4", ... (ONNX's spelling
// for the types newer than 1.12); "undefined" for 0 and "type N" for unknown values.
std::string dtype_name(int32_t data_type);
// 1 to k_max_data_type: a type some IR version defines.
bool is_known_type(int32_t data_type);
// A type ONNX 1.12's generated enum does not know (17 to k_max_data_type).
bool is_newer_type(int32_t data_type);
// Bits per element: 2 (uint2, int2), 4 (uint4, int4, float4e2m1), 8 and up; 0 for string,
// undefined and unknown types.
uint32_t element_bits(int32_t data_type);
// Bytes per element rounded up (1 for the packed 2- and 4-bit types); 0 for string,
// undefined and unknown types. Good for limits; a tensor's exact size is bytes_for().
uint64_t element_size(int32_t data_type);
bool is_floating(int32_t data_type);

// Bytes `count` elements of `data_type` occupy in raw_data: packed types two or four to a
// byte, the last byte partly used. nullopt on overflow; 0 for types of no fixed size.
std::optional<uint64_t> bytes_for(int32_t data_type, uint64_t count);

// Number of elements the dims declare; nullopt on a negative dim or overflow.
std::optional<uint64_t> element_count(const onnx::TensorProto& tensor);
// Bytes the tensor's data occupies (for fixed-size types); nullopt on overflow.
std::optional<uint64_t> data_bytes(const onnx::TensorProto& tensor);

// Bytes actually stored in the tensor (raw_data or typed fields).
uint64_t stored_bytes(const onnx::TensorProto& tensor);

// a * b with overflow detection.
std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b);

} // namespace npucc::model

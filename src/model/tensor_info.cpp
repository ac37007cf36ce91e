#include "model/tensor_info.h"

namespace npucc::model {

using onnx::TensorProto;

std::string dtype_name(int32_t data_type) {
  switch (data_type) {
  case TensorProto::FLOAT: return "float32";
  case TensorProto::UINT8: return "uint8";
  case TensorProto::INT8: return "int8";
  case TensorProto::UINT16: return "uint16";
  case TensorProto::INT16: return "int16";
  case TensorProto::INT32: return "int32";
  case TensorProto::INT64: return "int64";
  case TensorProto::STRING: return "string";
  case TensorProto::BOOL: return "bool";
  case TensorProto::FLOAT16: return "float16";
  case TensorProto::DOUBLE: return "float64";
  case TensorProto::UINT32: return "uint32";
  case TensorProto::UINT64: return "uint64";
  case TensorProto::COMPLEX64: return "complex64";
  case TensorProto::COMPLEX128: return "complex128";
  case TensorProto::BFLOAT16: return "bfloat16";
  case k_float8e4m3fn: return "float8e4m3fn";
  case k_float8e4m3fnuz: return "float8e4m3fnuz";
  case k_float8e5m2: return "float8e5m2";
  case k_float8e5m2fnuz: return "float8e5m2fnuz";
  case k_uint4: return "uint4";
  case k_int4: return "int4";
  case k_float4e2m1: return "float4e2m1";
  case k_float8e8m0: return "float8e8m0";
  case k_uint2: return "uint2";
  case k_int2: return "int2";
  case TensorProto::UNDEFINED: return "undefined";
  default: return "type " + std::to_string(data_type);
  }
}

bool is_known_type(int32_t data_type) {
  return data_type > TensorProto::UNDEFINED && data_type <= k_max_data_type;
}

bool is_newer_type(int32_t data_type) {
  return data_type > TensorProto::BFLOAT16 && data_type <= k_max_data_type;
}

uint32_t element_bits(int32_t data_type) {
  switch (data_type) {
  case k_uint2:
  case k_int2: return 2;
  case k_uint4:
  case k_int4:
  case k_float4e2m1: return 4;
  case k_float8e4m3fn:
  case k_float8e4m3fnuz:
  case k_float8e5m2:
  case k_float8e5m2fnuz:
  case k_float8e8m0: return 8;
  default: return static_cast<uint32_t>(element_size(data_type) * 8);
  }
}

uint64_t element_size(int32_t data_type) {
  switch (data_type) {
  case TensorProto::BOOL:
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case k_float8e4m3fn:
  case k_float8e4m3fnuz:
  case k_float8e5m2:
  case k_float8e5m2fnuz:
  case k_float8e8m0:
  // Packed: a byte holds several elements, but one element still needs a byte.
  case k_uint4:
  case k_int4:
  case k_float4e2m1:
  case k_uint2:
  case k_int2: return 1;
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: return 2;
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32: return 4;
  case TensorProto::DOUBLE:
  case TensorProto::INT64:
  case TensorProto::UINT64:
  case TensorProto::COMPLEX64: return 8;
  case TensorProto::COMPLEX128: return 16;
  default: return 0;
  }
}

bool is_floating(int32_t data_type) {
  return data_type == TensorProto::FLOAT || data_type == TensorProto::FLOAT16 ||
         data_type == TensorProto::BFLOAT16 || data_type == TensorProto::DOUBLE;
}

std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) {
    return std::nullopt;
  }
  return result;
}

std::optional<uint64_t> bytes_for(int32_t data_type, uint64_t count) {
  uint64_t bits = element_bits(data_type);
  if (bits >= 8) {
    return checked_mul(count, bits / 8);
  }
  if (bits == 0) {
    return 0;
  }
  // count * bits / 8 rounded up, without overflowing on the multiplication.
  uint64_t per_byte = 8 / bits;
  return count / per_byte + (count % per_byte != 0 ? 1 : 0);
}

std::optional<uint64_t> element_count(const TensorProto& tensor) {
  uint64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) {
      return std::nullopt;
    }
    auto next = checked_mul(count, static_cast<uint64_t>(dim));
    if (!next) {
      return std::nullopt;
    }
    count = *next;
  }
  return count;
}

std::optional<uint64_t> data_bytes(const TensorProto& tensor) {
  auto count = element_count(tensor);
  if (!count) {
    return std::nullopt;
  }
  return bytes_for(tensor.data_type(), *count);
}

uint64_t stored_bytes(const TensorProto& tensor) {
  if (tensor.has_raw_data()) {
    return tensor.raw_data().size();
  }
  uint64_t size = element_size(tensor.data_type());
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
  case TensorProto::COMPLEX64: return tensor.float_data_size() * 4ull;
  case TensorProto::DOUBLE:
  case TensorProto::COMPLEX128: return tensor.double_data_size() * 8ull;
  case TensorProto::INT64: return tensor.int64_data_size() * 8ull;
  case TensorProto::UINT32:
  case TensorProto::UINT64: return tensor.uint64_data_size() * size;
  case TensorProto::STRING: {
    uint64_t total = 0;
    for (const auto& s : tensor.string_data()) {
      total += s.size();
    }
    return total;
  }
  default:
    // One int32 per element, but for the newer types one per byte: float8 values one each,
    // 4-bit values two and 2-bit values four (onnx.proto, int32_data).
    return tensor.int32_data_size() * (is_newer_type(tensor.data_type()) ? 1 : size);
  }
}

} // namespace npucc::model

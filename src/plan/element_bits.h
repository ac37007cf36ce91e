#pragma once

#include "model/tensor_info.h"

#include <cstdint>

namespace npucc::plan {

// Bits per element, with the types of IR 9 to 13 that ONNX 1.12 (and model::element_size)
// does not know: float8 (17-20) and float8e8m0 (24) take a byte, the 4-bit types (uint4,
// int4, float4e2m1: 21-23) and the 2-bit ones (uint2, int2: 25, 26) are packed several to
// a byte, in a tensor as in a runtime's buffer. 0 when the size is not fixed (strings) or
// the type is unknown.
inline uint64_t element_bits(int32_t elem_type) {
  switch (elem_type) {
  case 17:
  case 18:
  case 19:
  case 20:
  case 24:
    return 8;
  case 21:
  case 22:
  case 23:
    return 4;
  case 25:
  case 26:
    return 2;
  default:
    return model::element_size(elem_type) * 8;
  }
}

// The bytes `elements` elements of `elem_type` take, the last byte of a packed tensor
// counted whole; 0 when the type has no fixed size, UINT64_MAX when the count overflows.
inline uint64_t packed_bytes(int32_t elem_type, uint64_t elements) {
  uint64_t bits = 0;
  if (__builtin_mul_overflow(elements, element_bits(elem_type), &bits) || bits > UINT64_MAX - 7) {
    return UINT64_MAX;
  }
  return (bits + 7) / 8;
}

} // namespace npucc::plan

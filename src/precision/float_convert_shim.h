#pragma once

// TEMPORARY stand-in for precision/float_convert.h (written on branch precision-options);
// same names and policy (round to nearest even, overflow to inf). Delete this file and
// include "precision/float_convert.h" once that branch is merged.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace npucc::precision::shim {

inline uint32_t bits_of(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float float_of(uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline uint16_t float_to_bfloat16(float value) {
  uint32_t bits = bits_of(value);
  if (std::isnan(value)) {
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  }
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bfloat16_to_float(uint16_t value) { return float_of(static_cast<uint32_t>(value) << 16); }

inline uint16_t float_to_half(float value) {
  uint32_t bits = bits_of(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) {
    return static_cast<uint16_t>(sign | 0x7E00 | ((magnitude >> 13) & 0x3FF));
  }
  if (magnitude >= 0x477FF000) { // rounds to 65520 or beyond: inf
    return static_cast<uint16_t>(sign | 0x7C00);
  }
  if (magnitude < 0x38800000) { // float16 subnormal or zero
    float scaled = float_of(magnitude) * 16777216.0F; // 2^24: units of the smallest subnormal
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  uint32_t rounded = magnitude + 0xFFF + ((magnitude >> 13) & 1);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000) >> 13));
}

inline float half_to_float(uint16_t value) {
  uint32_t sign = static_cast<uint32_t>(value & 0x8000) << 16;
  uint32_t exponent = (value >> 10) & 0x1F;
  uint32_t mantissa = value & 0x3FF;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) / 16777216.0F;
    return float_of(sign | bits_of(magnitude));
  }
  if (exponent == 31) {
    return float_of(sign | 0x7F800000 | (mantissa << 13) | (mantissa != 0 ? 0x400000 : 0));
  }
  return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline size_t count_half_overflows(const float* in, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(in[i]) && (float_to_half(in[i]) & 0x7FFF) == 0x7C00) {
      ++count;
    }
  }
  return count;
}

inline size_t count_bfloat16_overflows(const float* in, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(in[i]) && (float_to_bfloat16(in[i]) & 0x7FFF) == 0x7F80) {
      ++count;
    }
  }
  return count;
}

} // namespace npucc::precision::shim

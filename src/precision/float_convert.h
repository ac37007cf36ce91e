#pragma once

// Bit-exact float32 <-> float16 / bfloat16 conversion (SPEC §1 weights, research/precision.md §6).
//
// Policy, identical on every code path (scalar, F16C, AVX2):
// - narrowing rounds to nearest, ties to even; finite values beyond the low type's range become
//   +-inf (count them first with count_*_overflows when that matters);
// - float16 subnormals are produced by gradual underflow with RNE; float32 subnormals keep their
//   bits in bfloat16 (RNE), they are never flushed to zero;
// - a NaN stays a NaN with its sign and the top payload bits, and always comes out quiet
//   (quiet bit set), in both directions;
// - widening is otherwise exact.
// The array functions pick a SIMD path at run time (the binary runs on any x86-64) and give
// the same bits as the scalar functions.

#include <cstddef>
#include <cstdint>

namespace npucc::precision {

uint16_t float_to_half(float value);
uint16_t float_to_bfloat16(float value);
float half_to_float(uint16_t value);
float bfloat16_to_float(uint16_t value);

void float_to_half(const float* in, uint16_t* out, size_t n);
void float_to_bfloat16(const float* in, uint16_t* out, size_t n);
void half_to_float(const uint16_t* in, float* out, size_t n);
void bfloat16_to_float(const uint16_t* in, float* out, size_t n);

// Finite inputs that round to +-inf in the low type (|x| >= 65520 for float16,
// |x| >= 0x1.ff8p+127 for bfloat16). Infinities and NaNs are not counted.
size_t count_half_overflows(const float* in, size_t n);
size_t count_bfloat16_overflows(const float* in, size_t n);

namespace detail {

// Which implementation the array functions use; exposed so tests can compare paths.
enum class Kernel { scalar, simd };

// The SIMD kernel exists on this CPU (F16C+AVX for float16, AVX2 for bfloat16).
bool has_simd_half();
bool has_simd_bfloat16();

// Run one specific path. Kernel::simd on a CPU without it falls back to scalar.
void float_to_half(const float* in, uint16_t* out, size_t n, Kernel kernel);
void float_to_bfloat16(const float* in, uint16_t* out, size_t n, Kernel kernel);
void half_to_float(const uint16_t* in, float* out, size_t n, Kernel kernel);
void bfloat16_to_float(const uint16_t* in, float* out, size_t n, Kernel kernel);
size_t count_half_overflows(const float* in, size_t n, Kernel kernel);
size_t count_bfloat16_overflows(const float* in, size_t n, Kernel kernel);

} // namespace detail
} // namespace npucc::precision

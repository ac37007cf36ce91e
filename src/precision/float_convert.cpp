#include "precision/float_convert.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#define NPUCC_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace npucc::precision {
namespace {

constexpr uint32_t k_abs_mask = 0x7fffffffu;
constexpr uint32_t k_float_inf = 0x7f800000u;
constexpr uint32_t k_float_quiet = 0x00400000u;
// Smallest finite float that rounds to inf: 65520 (float16), 0x1.ff8p+127 (bfloat16).
constexpr uint32_t k_half_overflow = 0x477ff000u;
constexpr uint32_t k_bfloat16_overflow = 0x7f7f8000u;

uint32_t bits_of(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float float_of(uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Shifts right by `shift` (1..31) rounding to nearest, ties to even. Branch-free: adding
// half - 1 plus the kept lsb carries exactly when the rest is above half, or is half and the
// kept value is odd.
uint32_t shift_right_rne(uint32_t value, uint32_t shift) {
  const uint32_t lsb = (value >> shift) & 1u;
  return (value + (1u << (shift - 1u)) - 1u + lsb) >> shift;
}

bool overflows(uint32_t bits, uint32_t threshold) {
  const uint32_t abs = bits & k_abs_mask;
  return abs >= threshold && abs < k_float_inf;
}

size_t count_overflows_scalar(const float* in, size_t n, uint32_t threshold) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    count += overflows(bits_of(in[i]), threshold) ? 1 : 0;
  }
  return count;
}

#ifdef NPUCC_X86

__attribute__((target("f16c,avx"))) void float_to_half_f16c(const float* in, uint16_t* out,
                                                            size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 values = _mm256_loadu_ps(in + i);
    // Immediate 0: round to nearest even, whatever MXCSR says.
    const __m128i halves = _mm256_cvtps_ph(values, 0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), halves);
  }
  for (; i < n; ++i) {
    out[i] = float_to_half(in[i]);
  }
}

__attribute__((target("f16c,avx"))) void half_to_float_f16c(const uint16_t* in, float* out,
                                                            size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  for (; i < n; ++i) {
    out[i] = half_to_float(in[i]);
  }
}

// bfloat16 uses integer RNE rather than AVX-512 BF16's VCVTNEPS2BF16: that instruction treats
// float32 subnormal inputs as zero (Intel SDM), so it could not match the scalar bits.
// Eight floats -> eight bfloat16 values in the low 16 bits of each 32-bit lane.
__attribute__((target("avx2"))) __m256i bfloat16_lanes_avx2(__m256i bits) {
  const __m256i abs = _mm256_and_si256(bits, _mm256_set1_epi32(static_cast<int>(k_abs_mask)));
  const __m256i is_nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(static_cast<int>(k_float_inf)));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}

__attribute__((target("avx2"))) void float_to_bfloat16_avx2(const float* in, uint16_t* out,
                                                            size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 8));
    // packus works per 128-bit lane: [a0..3 b0..3 | a4..7 b4..7]; reorder the 64-bit quarters.
    const __m256i packed = _mm256_packus_epi32(bfloat16_lanes_avx2(a), bfloat16_lanes_avx2(b));
    const __m256i ordered = _mm256_permute4x64_epi64(packed, 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), ordered);
  }
  for (; i < n; ++i) {
    out[i] = float_to_bfloat16(in[i]);
  }
}

__attribute__((target("avx2"))) void bfloat16_to_float_avx2(const uint16_t* in, float* out,
                                                            size_t n) {
  const __m256i abs_mask = _mm256_set1_epi32(static_cast<int>(k_abs_mask));
  const __m256i inf = _mm256_set1_epi32(static_cast<int>(k_float_inf));
  const __m256i quiet = _mm256_set1_epi32(static_cast<int>(k_float_quiet));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i narrow = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m256i bits = _mm256_slli_epi32(_mm256_cvtepu16_epi32(narrow), 16);
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, abs_mask), inf);
    const __m256i result = _mm256_or_si256(bits, _mm256_and_si256(is_nan, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), result);
  }
  for (; i < n; ++i) {
    out[i] = bfloat16_to_float(in[i]);
  }
}

__attribute__((target("avx2,popcnt"))) size_t count_overflows_avx2(const float* in, size_t n,
                                                                   uint32_t threshold) {
  const __m256i abs_mask = _mm256_set1_epi32(static_cast<int>(k_abs_mask));
  const __m256i below = _mm256_set1_epi32(static_cast<int>(threshold - 1u));
  const __m256i inf = _mm256_set1_epi32(static_cast<int>(k_float_inf));
  size_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i abs = _mm256_and_si256(bits, abs_mask);
    // Signed compares are safe: abs is in [0, 2^31).
    const __m256i hit =
        _mm256_and_si256(_mm256_cmpgt_epi32(abs, below), _mm256_cmpgt_epi32(inf, abs));
    const int mask = _mm256_movemask_ps(_mm256_castsi256_ps(hit));
    count += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
  }
  return count + count_overflows_scalar(in + i, n - i, threshold);
}

#endif // NPUCC_X86

} // namespace

uint16_t float_to_half(float value) {
  const uint32_t bits = bits_of(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & k_abs_mask;
  if (abs > k_float_inf) {
    // Keep the top 10 payload bits and force the quiet bit (as VCVTPS2PH does).
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x03ffu));
  }
  if (abs >= k_half_overflow) {
    return static_cast<uint16_t>(sign | 0x7c00u); // includes inf itself
  }
  if (abs >= 0x38800000u) {
    // Normal float16 (>= 2^-14): rebias the exponent (127 -> 15), round away 13 bits. A carry
    // out of the mantissa correctly bumps the exponent; 65520 was handled above.
    const uint32_t rebased = abs - (112u << 23);
    return static_cast<uint16_t>(sign | shift_right_rne(rebased, 13));
  }
  if (abs < 0x33000000u) {
    return sign; // below 2^-25: rounds to zero (float32 subnormals included)
  }
  // Subnormal float16: value = m * 2^-24. With the implicit bit, the float mantissa is
  // scaled by 2^(exponent - 150); m = mantissa >> (126 - exponent), shift 14..24.
  const uint32_t exponent = abs >> 23;
  const uint32_t mantissa = (abs & 0x007fffffu) | 0x00800000u;
  return static_cast<uint16_t>(sign | shift_right_rne(mantissa, 126u - exponent));
}

uint16_t float_to_bfloat16(float value) {
  const uint32_t bits = bits_of(value);
  if ((bits & k_abs_mask) > k_float_inf) {
    // Plain truncation could turn a NaN into inf; keep sign and top payload, force quiet.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + lsb) >> 16);
}

float half_to_float(uint16_t value) {
  const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  const uint32_t exponent = (value >> 10) & 0x1fu;
  uint32_t mantissa = value & 0x03ffu;
  if (exponent == 0x1fu) {
    const uint32_t quiet = mantissa != 0 ? k_float_quiet : 0u;
    return float_of(sign | k_float_inf | (mantissa << 13) | quiet);
  }
  if (exponent != 0) {
    return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) {
    return float_of(sign);
  }
  // Subnormal float16: normalise (it is a normal float32).
  uint32_t float_exponent = 113; // 2^-14
  while ((mantissa & 0x0400u) == 0) {
    mantissa <<= 1;
    --float_exponent;
  }
  return float_of(sign | (float_exponent << 23) | ((mantissa & 0x03ffu) << 13));
}

float bfloat16_to_float(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  if ((bits & k_abs_mask) > k_float_inf) {
    bits |= k_float_quiet;
  }
  return float_of(bits);
}

namespace detail {

bool has_simd_half() {
#ifdef NPUCC_X86
  __builtin_cpu_init();
  // F16C from CPUID directly: clang 14 (the fuzz build) has no "f16c" for
  // __builtin_cpu_supports.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  return __builtin_cpu_supports("avx") && f16c;
#else
  return false;
#endif
}

bool has_simd_bfloat16() {
#ifdef NPUCC_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
#else
  return false;
#endif
}

void float_to_half(const float* in, uint16_t* out, size_t n, Kernel kernel) {
#ifdef NPUCC_X86
  if (kernel == Kernel::simd && has_simd_half()) {
    float_to_half_f16c(in, out, n);
    return;
  }
#endif
  (void)kernel;
  for (size_t i = 0; i < n; ++i) {
    out[i] = precision::float_to_half(in[i]);
  }
}

void half_to_float(const uint16_t* in, float* out, size_t n, Kernel kernel) {
#ifdef NPUCC_X86
  if (kernel == Kernel::simd && has_simd_half()) {
    half_to_float_f16c(in, out, n);
    return;
  }
#endif
  (void)kernel;
  for (size_t i = 0; i < n; ++i) {
    out[i] = precision::half_to_float(in[i]);
  }
}

void float_to_bfloat16(const float* in, uint16_t* out, size_t n, Kernel kernel) {
#ifdef NPUCC_X86
  if (kernel == Kernel::simd && has_simd_bfloat16()) {
    float_to_bfloat16_avx2(in, out, n);
    return;
  }
#endif
  (void)kernel;
  for (size_t i = 0; i < n; ++i) {
    out[i] = precision::float_to_bfloat16(in[i]);
  }
}

void bfloat16_to_float(const uint16_t* in, float* out, size_t n, Kernel kernel) {
#ifdef NPUCC_X86
  if (kernel == Kernel::simd && has_simd_bfloat16()) {
    bfloat16_to_float_avx2(in, out, n);
    return;
  }
#endif
  (void)kernel;
  for (size_t i = 0; i < n; ++i) {
    out[i] = precision::bfloat16_to_float(in[i]);
  }
}

size_t count_half_overflows(const float* in, size_t n, Kernel kernel) {
#ifdef NPUCC_X86
  if (kernel == Kernel::simd && has_simd_bfloat16()) {
    return count_overflows_avx2(in, n, k_half_overflow);
  }
#endif
  (void)kernel;
  return count_overflows_scalar(in, n, k_half_overflow);
}

size_t count_bfloat16_overflows(const float* in, size_t n, Kernel kernel) {
#ifdef NPUCC_X86
  if (kernel == Kernel::simd && has_simd_bfloat16()) {
    return count_overflows_avx2(in, n, k_bfloat16_overflow);
  }
#endif
  (void)kernel;
  return count_overflows_scalar(in, n, k_bfloat16_overflow);
}

} // namespace detail

void float_to_half(const float* in, uint16_t* out, size_t n) {
  detail::float_to_half(in, out, n, detail::Kernel::simd);
}
void float_to_bfloat16(const float* in, uint16_t* out, size_t n) {
  detail::float_to_bfloat16(in, out, n, detail::Kernel::simd);
}
void half_to_float(const uint16_t* in, float* out, size_t n) {
  detail::half_to_float(in, out, n, detail::Kernel::simd);
}
void bfloat16_to_float(const uint16_t* in, float* out, size_t n) {
  detail::bfloat16_to_float(in, out, n, detail::Kernel::simd);
}
size_t count_half_overflows(const float* in, size_t n) {
  return detail::count_half_overflows(in, n, detail::Kernel::simd);
}
size_t count_bfloat16_overflows(const float* in, size_t n) {
  return detail::count_bfloat16_overflows(in, n, detail::Kernel::simd);
}

} // namespace npucc::precision

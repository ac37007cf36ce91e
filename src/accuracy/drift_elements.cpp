#include "accuracy/drift_elements.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <emmintrin.h>
#include <limits>

namespace npucc::accuracy {

namespace {

// The element-by-element fold: doubles, and the last few floats.
template <typename T>
void fold_each(DriftFigures& f, const T* high, const T* low, size_t n, DriftPass& pass) {
  double dot = pass.dot, norm_high = pass.norm_high, norm_low = pass.norm_low;
  double high_max = f.high_max_abs, high_min = f.high_min_nonzero_abs, error = f.max_abs_error;
  int64_t high_nonfinite = 0, low_nonfinite = 0, flushed = 0;
  constexpr double k_infinity = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    const double h = high[i];
    const double l = low[i];
    dot += h * l;
    norm_high += h * h;
    norm_low += l * l;
    const bool h_finite = std::isfinite(h);
    const bool both_finite = h_finite && std::isfinite(l);
    const double magnitude = std::fabs(h);
    high_nonfinite += h_finite ? 0 : 1;
    low_nonfinite += h_finite && !both_finite ? 1 : 0; // an overflow where high is finite
    high_max = std::max(high_max, h_finite ? magnitude : 0.0);
    high_min = std::min(high_min, h_finite && magnitude > 0 ? magnitude : k_infinity);
    flushed += both_finite && l == 0 && h != 0 ? 1 : 0;
    error = std::max(error, both_finite ? std::fabs(l - h) : 0.0);
  }
  f.high_max_abs = high_max;
  f.high_min_nonzero_abs = high_min;
  f.max_abs_error = error;
  f.flushed += flushed;
  f.overflowed += low_nonfinite;
  pass.dot = dot;
  pass.norm_high = norm_high;
  pass.norm_low = norm_low;
  pass.high_nonfinite += high_nonfinite;
  pass.low_nonfinite += low_nonfinite;
}

// SSE2 lanes of a float block's figures. A float's magnitude bits order as its magnitude
// (non-negative floats compare as their bits), and the finite ones are below infinity's, so
// maxima, minima and the tests run on integers, exactly.
struct Lanes {
  __m128i high_max = _mm_setzero_si128();
  __m128i high_min = _mm_set1_epi32(0x7f800000); // infinity: none yet
  __m128d error = _mm_setzero_pd();
  __m128i high_nonfinite = _mm_setzero_si128(), low_nonfinite = _mm_setzero_si128();
  __m128i flushed = _mm_setzero_si128();
};

__m128i select(__m128i mask, __m128i yes, __m128i no) {
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

int64_t lane_sum(__m128i counts) {
  alignas(16) int32_t lanes[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), counts); // NOLINT: SSE2 store
  return int64_t{lanes[0]} + lanes[1] + lanes[2] + lanes[3];
}

// Four elements: everything but the sums.
void fold_four(Lanes& lanes, const float* high, const float* low) {
  const __m128i abs_bits = _mm_set1_epi32(0x7fffffff);
  const __m128i infinity = _mm_set1_epi32(0x7f800000);
  const __m128i zero = _mm_setzero_si128();
  const __m128 h = _mm_loadu_ps(high);
  const __m128 l = _mm_loadu_ps(low);
  const __m128i h_abs = _mm_and_si128(_mm_castps_si128(h), abs_bits);
  const __m128i l_abs = _mm_and_si128(_mm_castps_si128(l), abs_bits);
  const __m128i h_finite = _mm_cmplt_epi32(h_abs, infinity);
  const __m128i both = _mm_and_si128(h_finite, _mm_cmplt_epi32(l_abs, infinity));
  lanes.high_nonfinite = _mm_sub_epi32(lanes.high_nonfinite, _mm_andnot_si128(h_finite, _mm_set1_epi32(-1)));
  lanes.low_nonfinite = _mm_sub_epi32(lanes.low_nonfinite, _mm_andnot_si128(both, h_finite));
  const __m128i magnitude = _mm_and_si128(h_finite, h_abs); // 0 where not finite
  lanes.high_max = select(_mm_cmpgt_epi32(magnitude, lanes.high_max), magnitude, lanes.high_max);
  const __m128i nonzero = _mm_andnot_si128(_mm_cmpeq_epi32(h_abs, zero), h_finite);
  const __m128i candidate = select(nonzero, h_abs, infinity);
  lanes.high_min = select(_mm_cmplt_epi32(candidate, lanes.high_min), candidate, lanes.high_min);
  const __m128i flush = _mm_and_si128(both, _mm_andnot_si128(_mm_cmpeq_epi32(h_abs, zero),
                                                             _mm_cmpeq_epi32(l_abs, zero)));
  lanes.flushed = _mm_sub_epi32(lanes.flushed, flush);
  const __m128d abs_double = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff));
  const __m128d low_error = _mm_and_pd(
      _mm_and_pd(_mm_sub_pd(_mm_cvtps_pd(l), _mm_cvtps_pd(h)), abs_double),
      _mm_castsi128_pd(_mm_unpacklo_epi32(both, both)));
  const __m128d high_error = _mm_and_pd(
      _mm_and_pd(_mm_sub_pd(_mm_cvtps_pd(_mm_movehl_ps(l, l)), _mm_cvtps_pd(_mm_movehl_ps(h, h))),
                 abs_double),
      _mm_castsi128_pd(_mm_unpackhi_epi32(both, both)));
  lanes.error = _mm_max_pd(lanes.error, _mm_max_pd(low_error, high_error));
}

float float_of_bits(int32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// The lanes' figures into `f` and `pass`.
void finish(const Lanes& lanes, DriftFigures& f, DriftPass& pass) {
  alignas(16) int32_t max_bits[4], min_bits[4];
  alignas(16) double errors[2];
  _mm_store_si128(reinterpret_cast<__m128i*>(max_bits), lanes.high_max); // NOLINT
  _mm_store_si128(reinterpret_cast<__m128i*>(min_bits), lanes.high_min); // NOLINT
  _mm_store_pd(errors, lanes.error);
  for (int i = 0; i < 4; ++i) {
    f.high_max_abs = std::max(f.high_max_abs, static_cast<double>(float_of_bits(max_bits[i])));
    f.high_min_nonzero_abs =
        std::min(f.high_min_nonzero_abs, static_cast<double>(float_of_bits(min_bits[i])));
  }
  f.max_abs_error = std::max({f.max_abs_error, errors[0], errors[1]});
  const int64_t overflowed = lane_sum(lanes.low_nonfinite);
  f.flushed += lane_sum(lanes.flushed);
  f.overflowed += overflowed;
  pass.high_nonfinite += lane_sum(lanes.high_nonfinite);
  pass.low_nonfinite += overflowed;
}

} // namespace

void fold_elements(DriftFigures& f, const double* high, const double* low, size_t n,
                   DriftPass& pass) {
  fold_each(f, high, low, n, pass);
}

void fold_elements(DriftFigures& f, const float* high, const float* low, size_t n,
                   DriftPass& pass) {
  constexpr size_t k_block = size_t{1} << 20; // the lanes' counts stay far from 2^31
  size_t i = 0;
  while (n - i >= 4) {
    const size_t end = i + std::min(k_block, (n - i) / 4 * 4);
    Lanes lanes;
    double dot = pass.dot, norm_high = pass.norm_high, norm_low = pass.norm_low;
    for (; i < end; i += 4) {
      for (size_t k = i; k < i + 4; ++k) { // in element order: the cosine's bits
        const double h = high[k];
        const double l = low[k];
        dot += h * l;
        norm_high += h * h;
        norm_low += l * l;
      }
      fold_four(lanes, high + i, low + i);
    }
    pass.dot = dot;
    pass.norm_high = norm_high;
    pass.norm_low = norm_low;
    finish(lanes, f, pass);
  }
  fold_each(f, high + i, low + i, n - i, pass);
}

} // namespace npucc::accuracy

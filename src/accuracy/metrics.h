#pragma once

#include "runtime/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

// How far a low-precision graph's output is from the high graph's, per output. The
// definitions (npucc-compile(1), ACCURACY; tests/oracle/accuracy_check.js recomputes them):
// - nonfinite: elements that are NaN or infinite in the low output where the high output
//   is finite (a non-finite value float32 computes too is the model's own);
// - cosine: cosine similarity over the elements finite in both (1 when both are all zero,
//   0 when only one is, or when no element is finite in both);
// - max_abs_error: max |low - high| over the same elements;
// - max_rel_error: max |low - high| / max(|high|, 1e-3 * max |high|, 1e-6): the floors keep
//   values near zero, where only rounding is left, from dominating it.
// Over several samples: the lowest cosine, the largest errors, the summed non-finite count.
namespace npucc::accuracy {

struct OutputMetrics {
  std::string name;
  double cosine = 1;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t nonfinite = 0;
  int64_t elements = 0; // compared, over every sample
};

// The values as doubles (float16 and bfloat16 decoded; integers and bool as numbers).
// Throws npucc::Error for a type without a numeric reading (strings).
std::vector<double> to_doubles(const runtime::Tensor& tensor);

// One sample's output. Throws npucc::Error when the shapes differ.
OutputMetrics compare_output(const runtime::Tensor& high, const runtime::Tensor& low);

// Folds one more sample's metrics of the same output into `total`.
void merge(OutputMetrics& total, const OutputMetrics& sample);

} // namespace npucc::accuracy

#pragma once

#include "accuracy/drift_report.h"

#include <cstddef>
#include <cstdint>

// One sample set's elements of one value folded into its drift figures (drift_report.h):
// the errors, the shares, the high value's range, and the cosine's sums. The runtime process
// folds 170 million elements a set on ppocrv4_det at 640x640, so float32 has a path of its
// own, four elements at a time; both give the same bits.
namespace npucc::accuracy {

// The cosine's sums and the non-finite counts, continued from call to call over one set.
struct DriftPass {
  double dot = 0, norm_high = 0, norm_low = 0;
  int64_t high_nonfinite = 0, low_nonfinite = 0;
};

// Folds `n` elements into `f` and continues `pass`. The sums run in element order, as
// task_metrics.h's cosine sums them, so the cosine is its bits.
void fold_elements(DriftFigures& f, const double* high, const double* low, size_t n,
                   DriftPass& pass);
void fold_elements(DriftFigures& f, const float* high, const float* low, size_t n,
                   DriftPass& pass);

} // namespace npucc::accuracy

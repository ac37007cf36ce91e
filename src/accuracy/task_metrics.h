#pragma once

#include "accuracy/metrics.h"

#include <cstdint>
#include <string>
#include <vector>

// The figures of one output on one sample, from the high and low values (doubles, same
// length). Each is undefined, with the reason, when it cannot be computed honestly; every
// one is undefined when the high output holds a non-finite value (the reference is broken).
// tests/python/test_accuracy_figures.py recomputes each with NumPy.
// - cosine: dot(h, l) / (|h| |l|); undefined below k_min_cosine_elements elements, when the
//   low output holds a non-finite value, or when |h| = 0 (a zero-norm reference). |l| = 0
//   with |h| > 0 scores 0 (a collapse).
// - top1: rows along the last axis whose argmax agrees (numpy.argmax: the first maximum, a
//   NaN counts as the maximum), as a share of the rows; undefined when the last axis has
//   fewer than 2 elements.
// - iou@T: |h > T and l > T| / |h > T or l > T|; undefined when neither exceeds T.
// - psnr: 10 log10(peak^2 / mean((h - l)^2)), peak = max(h) - min(h) (the reference's
//   range); undefined when h is constant or l holds a non-finite value; +infinity when
//   h == l.
// - snr_db: 10 log10(sum(h^2) / sum((h - l)^2)); undefined when |h| = 0 or l holds a
//   non-finite value; +infinity when h == l.
// - close[atol=A,rtol=R]: the share of elements with |l - h| <= A + R |h| (Polygraphy's and
//   numpy.isclose's test; a non-finite low value misses).
namespace npucc::accuracy {

struct Values {
  const std::vector<double>& high;
  const std::vector<double>& low;
  const std::vector<int64_t>& shape;
  int64_t high_nonfinite = 0;
  int64_t low_nonfinite = 0; // where high is finite
};

Figure cosine_figure(const Values& v);
Figure top1_figure(const Values& v);
Figure iou_figure(const Values& v, double threshold);
Figure psnr_figure(const Values& v);
Figure snr_figure(const Values& v);
Figure close_figure(const Values& v, double atol, double rtol);

// The figures' names: "iou@0.5", "close[atol=0.001,rtol=0.01]".
std::string iou_name(double threshold);
std::string close_name(double atol, double rtol);

} // namespace npucc::accuracy

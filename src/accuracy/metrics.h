#pragma once

#include "runtime/tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

// How far a low-precision graph's output is from the high graph's, per output and per sample
// set. The definitions (npucc-compile(1), ACCURACY; tests/oracle/accuracy_check.js recomputes
// them, tests/python/test_accuracy_figures.py checks them against NumPy):
// - nonfinite: elements that are NaN or infinite in the low output where the high output
//   is finite; high_nonfinite: the high output's own non-finite elements (never compared);
// - max_abs_error: max |low - high| over the elements finite in both;
// - max_rel_error: max |low - high| / max(|high|, 1e-3 * max |high|, 1e-6): the floors keep
//   values near zero, where only rounding is left, from dominating it;
// - figures (task_metrics.h): cosine, top1, psnr, snr_db, and what a target asks for
//   (iou@T, close[atol=A,rtol=R]). A figure that cannot be computed honestly (a non-finite
//   value on either side, a zero-norm reference, too few elements) is undefined, with the
//   reason, and never given its best value.
namespace npucc::accuracy {

// Below this many elements per sample an output has no cosine. With one element a cosine is
// only the sign (silero_vad's speech probability scores 1 whatever its error); with two, a
// probability pair off by 0.1 (0.6/0.4 against 0.5/0.5) still scores 0.98. Heads this small
// (a score, a class pair, a box's 4 coordinates) are judged by their errors instead. 8 keeps
// a cosine for 10-class logits.
constexpr int64_t k_min_cosine_elements = 8;

// A cosine below this with no target gets a warning: float16/bfloat16 rounding alone keeps
// real models above 0.99; far below it the low graph computes something else.
constexpr double k_collapse_cosine = 0.9;

struct Figure {
  double value = 0;      // +infinity for psnr/snr_db of identical outputs
  std::string undefined; // why the figure is undefined; empty when defined
  bool defined() const { return undefined.empty(); }
};

// Figures a target asks for beyond the fixed ones.
struct FigureRequests {
  std::vector<double> iou_thresholds;
  std::vector<std::pair<double, double>> tolerances; // atol, rtol
};

// One output on one sample set.
struct SampleMetrics {
  int64_t set = 0;            // the set's index (the report's "sets")
  double max_abs_error = 0;   // over `elements`
  double max_rel_error = 0;
  int64_t nonfinite = 0;
  int64_t high_nonfinite = 0;
  int64_t elements = 0;       // finite in both: compared
  int64_t size = 0;           // the output's elements
  int64_t classes = 0;        // the length of its last axis (1 for a scalar)
  bool low_all_zero = false;  // the low output is all zero and the high one is not
  std::map<std::string, Figure> figures; // "cosine", "top1", "psnr", "snr_db", ...
};

// One output over every sample: the worst of each, and the samples themselves.
struct OutputMetrics {
  std::string name;
  double cosine = 1;            // the lowest defined cosine; NaN when no sample has one
  std::string cosine_undefined; // the first sample's reason when some cosine is undefined
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t nonfinite = 0;        // summed over the samples
  int64_t high_nonfinite = 0;   // summed over the samples
  int64_t elements = 0;         // compared, over every sample
  std::vector<SampleMetrics> samples;
  // Not an output: a caller's function over every output (npucc/compile.h: AccuracyFunction),
  // named by its clause's metric ("check[LABEL]", "score[LABEL]"), its value per sample set
  // the figure of that name. Every-output clauses and the output reports skip it.
  bool function = false;
  bool higher_is_better = true; // a score bounded by <= is better lower
};

// The values as doubles (float16 and bfloat16 decoded; integers and bool as numbers).
// Throws npucc::Error for a type without a numeric reading (strings).
std::vector<double> to_doubles(const runtime::Tensor& tensor);

// NaN and infinite values of a tensor (0 for integer types).
std::pair<int64_t, int64_t> count_nonfinite(const runtime::Tensor& tensor);

// One sample's output. Throws npucc::Error when the shapes differ.
SampleMetrics compare_output(const runtime::Tensor& high, const runtime::Tensor& low,
                             const FigureRequests& requests = {});

// Folds one more sample's metrics of the same output into `total` (and keeps the sample).
void merge(OutputMetrics& total, SampleMetrics sample);

// The shortest text that reads back as `value` ("0.9995", "1e-05"): figure names and the
// target's canonical text.
std::string shortest_number(double value);

} // namespace npucc::accuracy

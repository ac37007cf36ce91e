#pragma once

#include "accuracy/body_probe.h"
#include "runtime/tensor.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

// The per-value drift report (npucc-compile(1), DRIFT REPORT; tests/schemas/npucc-drift):
// each value a low graph stores, against the high graph's same value on the same samples,
// folded set by set (value_probe.h hands the values over). Definitions, per value over every
// sample set (tests/oracle/drift_check.js recomputes them):
// - cosine: the lowest defined cosine of the sets, by the check's rules (task_metrics.h:
//   undefined below 8 elements, for a zero-norm high value, or a non-finite value), clamped
//   to [-1, 1];
//   null when no set has one; cosine_undefined: the first set's reason when a set has none;
// - max_abs_error: max |low - high| over the elements finite in both;
// - flush_share: elements zero in the low run where the high value is non-zero and finite,
//   over all elements; overflow_share: elements non-finite in the low run where the high
//   value is finite, over all elements;
// - high_max_abs, high_min_nonzero_abs: the high value's largest finite magnitude and its
//   smallest non-zero one (null when it is all zero);
// - drift: 1 - cosine; 1 when no cosine is defined because the low run holds non-finite
//   values (an overflow); undefined otherwise (null);
// - a body's value (If/Loop/Scan, body_probe.h) is read once per set, its iterations
//   stacked: its figures cover every iteration; a set where it is empty in both runs, or
//   of another shape in one (the low run took another branch), is counted, not compared;
//   cosine is undefined when no set compared it;
// - added_drift: drift / max(the largest drift among the measured values the node reads,
//   k_drift_floor); a value read but not measured (a graph input, a weight, an integer)
//   counts as exact. Undefined when the value's drift is.
// The first crossing is the first value, in the low graph's node order, whose cosine is
// below the threshold or whose low run holds non-finite values where the high run does not;
// the top offenders are the values of drift above k_drift_floor and added_drift >= 2, the
// largest added_drift first, at most k_top_offenders.
namespace npucc::accuracy {

constexpr double k_drift_floor = 1e-6;
constexpr double k_default_drift_threshold = 0.9999;
constexpr size_t k_top_offenders = 5;

// A value to measure: where it is in the low graph and how it is stored there.
struct DriftValue {
  int64_t order = 0;          // the node's index in the low graph's (topological) node order;
                              // a body's value: its main-graph owner's
  std::string node;
  std::string op_type;
  std::string value;          // the tensor's name
  std::string graph = "main"; // or "main/<node>:<attribute>" for a body's value
  BodyPath body;              // empty in the main graph; else the path to its body
  std::string stored;         // "float16", "bfloat16" or "float32"
  std::string kept_reason;    // why a float32 value was kept; empty when unknown or low
  std::vector<size_t> inputs; // indexes of the measured values its node reads
};

// One value's figures so far.
struct DriftFigures {
  int64_t elements = 0; // per sample set (the largest)
  int64_t total = 0;    // over every set
  double cosine = std::numeric_limits<double>::quiet_NaN();
  std::string cosine_undefined;
  double max_abs_error = 0;
  int64_t flushed = 0;
  int64_t overflowed = 0;
  double high_max_abs = 0;
  double high_min_nonzero_abs = std::numeric_limits<double>::infinity();
  // A body's value is not there on every set: the sets folded, those where both runs gave
  // it no element (its If branch did not run, its Loop no iteration), and those where they
  // gave different shapes (one run took the other branch, or iterated another count).
  int64_t sets = 0;
  int64_t sets_empty = 0;
  int64_t sets_differing = 0;
};

// Whether a body value's high and low tensors of one set are compared: true, or false with
// the set counted in `figures` as empty or differing.
bool body_set_comparable(DriftFigures& figures, const runtime::TensorView& high,
                         const runtime::TensorView& low);
bool body_set_comparable(DriftFigures& figures, const runtime::Tensor& high,
                         const runtime::Tensor& low);

// Folds one set's high and low tensor of value `index` into its figures. Throws
// npucc::Error when the shapes differ.
void fold_drift(DriftFigures& figures, const runtime::Tensor& high, const runtime::Tensor& low);
void fold_drift(DriftFigures& figures, const runtime::TensorView& high,
                const runtime::TensorView& low);

struct DriftRun {
  std::string low_type; // "float16" or "bfloat16"
  int64_t sample_sets = 0;
  int64_t runtime_runs = 0;
  double threshold = k_default_drift_threshold;
};

// The report document ("format": "npucc-drift", version 1), values in `values`' order.
nlohmann::json drift_json(const std::vector<DriftValue>& values,
                          const std::vector<DriftFigures>& figures, const DriftRun& run);

// The short text table: the run, the first crossing and the top offenders.
std::vector<std::string> format_drift(const nlohmann::json& report);

} // namespace npucc::accuracy

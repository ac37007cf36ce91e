#pragma once

#include "accuracy/samples.h"
#include "npucc/compile.h"
#include "precision/compile_precision.h"
#include "runtime/runtime.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

// The activation-range rule (npucc-compile(1), ACCURACY; npucc-precision(7), REASONS): before
// any repair search, the high graph runs once over the --sample-inputs sets with the values
// of the low graph exposed, its If/Loop/Scan bodies' included (accuracy/value_probe.h,
// body_probe.h: each iteration's values; the main graph's alone when the runtime cannot stack
// a body's), and every node the low graph computes in the low type, in a body or not, is
// kept float32 when the low type cannot hold what it computes or reads there:
//   - overflow: a value's largest finite magnitude exceeds the low type's largest
//     (65504 for float16, ~3.39e38 for bfloat16): the low run turns it into inf;
//   - underflow: more than k_subnormal_share of a value's non-zero elements lie below the
//     low type's smallest normal (6.1e-5 for float16, ~1.18e-38 for bfloat16): most of it
//     flushes to zero or keeps a few bits.
// A node is kept when one of its outputs, or a value it reads that the probe measured, is
// either. The rule costs runtime runs of one graph only, and no run per node.
// NPUCC_BENCH_NO_RANGE_RULE (non-empty) turns the rule off, for tests/bench/run's baseline of
// what it saves; the cache key does not see it, so such a compile is never cached
// (pipeline/resource_ops.h).
namespace npucc::accuracy {

// "Mostly": the share of non-zero elements below the smallest normal above which a value
// counts as underflowing.
constexpr double k_subnormal_share = 0.5;

// One value's range over every set, folded set by set.
struct ValueRange {
  double max_abs = 0;       // largest finite magnitude
  int64_t nonzero = 0;      // finite non-zero elements
  int64_t below_normal = 0; // of them, below the low type's smallest normal
};

// Folds a float32 or float64 tensor into `range`; other types hold nothing the rule judges.
void fold_range(ValueRange& range, const runtime::Tensor& tensor, double smallest_normal);

// Why `range` cannot be held by a low type with these limits ("max 1.04e+05 > 65504",
// "97% of non-zero values below 6.1e-05"), or "" when it can.
std::string range_verdict(const ValueRange& range, double largest, double smallest_normal);

// Whether NPUCC_BENCH_NO_RANGE_RULE turns the rule off.
bool range_rule_off_for_bench();

struct RangeRule {
  std::map<std::string, std::string> kept; // node name -> the numbers
  nlohmann::json report;                   // the manifest's accuracy.activation_ranges
  int64_t runs = 0;                        // runtime runs of the high graph
};

// The rule on `variants` (high and low graphs) over `samples`. Throws npucc::Error from
// the runtime.
RangeRule activation_range_rule(const precision::PrecisionBuild& variants,
                                const accuracy::Samples& samples, runtime::GraphRuntime& runtime,
                                const LogSink& log);

} // namespace npucc::accuracy

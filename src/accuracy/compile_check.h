#pragma once

#include "npucc/compile.h"
#include "precision/compile_precision.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace npucc::accuracy {

// The variants again with these nodes of the low graph kept float32 (reason "accuracy").
using RebuildVariants =
    std::function<precision::PrecisionBuild(const std::vector<std::string>& kept)>;
// The nodes the activation-range rule keeps float32 (activation_ranges.h): name -> the numbers.
using RangeKept = std::map<std::string, std::string>;
// The variants again with nodes kept float32 by the repair (reason "accuracy") and by the
// activation-range rule (reason "activation_range"), and deny-list nodes the descent lowered
// (descent.h).
using BuildVariants = std::function<precision::PrecisionBuild(
    const std::vector<std::string>& accuracy_kept, const RangeKept& range_kept,
    const std::vector<std::string>& lowered)>;

struct AccuracyOutcome {
  std::string report;                   // the manifest's "accuracy" object, JSON text
  std::vector<std::string> kept_nodes;  // what the repair kept float32, sorted; else empty
  RangeKept range_kept;                 // what the activation-range rule kept float32
  std::vector<std::string> lowered_nodes; // deny-list nodes the descent lowered, sorted
  std::string drift_report;             // --accuracy-report nodes: drift.json's text; else empty
};

// --check-accuracy / --accuracy-target on a compile's variants, before anything is written:
// loads the samples (or makes random inputs), runs the high graph and the low graph's
// emulation (the one --emit-emulation writes, else made here) in ONNX Runtime's process.
// With --sample-inputs, first keeps float32 the low nodes whose values on them the low type
// cannot hold (activation_ranges.h), replacing `variants`: the check and any repair start
// from that graph. With a target the low graph misses, repairs it (repair.h) and replaces
// `variants` with the repaired build. With a target met (as compiled or repaired) and
// --sample-inputs, then lowers the deny-list nodes it can with the target still met
// (descent.h), replacing `variants` again. Throws npucc::Error in one line (bad samples, no ONNX
// Runtime, a graph the runtime refuses or crashes on, a target even an all-float32 low graph
// misses); usage_error without a low graph to check. With --accuracy-report nodes, then
// measures the drift report of the low graph it leaves (drift_run.h) on the same sets.
AccuracyOutcome run_accuracy_check(precision::PrecisionBuild& variants,
                                   const CompileOptions& options, const BuildVariants& build,
                                   const LogSink& log);

} // namespace npucc::accuracy

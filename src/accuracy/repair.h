#pragma once

#include "accuracy/target.h"
#include "accuracy/compile_check.h"
#include "accuracy/units.h"
#include "accuracy/sample_runner.h"
#include "runtime/runtime.h"

#include <nlohmann/json.hpp>

// The accuracy repair (npucc-compile(1), ACCURACY): a small set of units (units.h)
// to keep float32 so that the low graph's emulation meets the target on every sample set,
// the search's and the validation sets it never measures.
//   1. the units ranked worst first by measured effect (ranking.h: groups of units
//      low alone, only the groups that matter split further);
//   2. binary search of the ranked list for the shortest prefix kept float32 that meets the
//      target (log2 N evaluations);
//   3. each kept unit, least effect first, tried low again; repeated until a whole pass
//      keeps them all, so no kept unit can go low on its own (1-minimal).
// Every evaluation runs every search set; the same set of units is never run twice.
// The search aims at a margin inside the target (margin.h); when the result misses
// the target on the validation sets, the search runs again with a wider margin, its
// measurements kept, until the result meets the target there too. Deterministic.
namespace npucc::accuracy {

struct RepairInputs {
  SampleRunner& search;      // the sets the search measures (their high outputs kept)
  SampleRunner* validation;  // sets it never measures, which the result must meet too; or null
  const std::vector<accuracy::OutputMetrics>& unrepaired; // the low graph as compiled, on search
  const accuracy::AccuracyTarget& target;
  const RebuildVariants& rebuild;
  const LogSink& log;
};

struct RepairResult {
  std::vector<std::string> kept_nodes; // sorted
  nlohmann::json report;               // the manifest's accuracy.repair object
  int64_t runs = 0;                    // graph runs (one per graph and sample set)
};

// `low`: the unrepaired low graph, whose units are searched. Throws npucc::Error in one line
// when even every unit float32 misses the target, on the search sets or the validation sets.
RepairResult repair_accuracy(const RepairInputs& in, const onnx::ModelProto& low);

// The emulation graph of a build: the written one, else made from its low graph.
onnx::ModelProto emulation_of(const precision::PrecisionBuild& variants);

} // namespace npucc::accuracy

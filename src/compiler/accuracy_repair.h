#pragma once

#include "accuracy/samples.h"
#include "accuracy/target.h"
#include "compiler/accuracy_check.h"
#include "compiler/accuracy_units.h"
#include "runtime/runtime.h"

#include <nlohmann/json.hpp>

// The accuracy repair (npucc-compile(1), ACCURACY): a small set of units (accuracy_units.h)
// to keep float32 so that the low graph's emulation meets the target on every sample.
//   1. the units ranked worst first by measured effect (accuracy_ranking.h: groups of units
//      low alone, only the groups that matter split further);
//   2. binary search of the ranked list for the shortest prefix kept float32 that meets the
//      target (log2 N evaluations);
//   3. each kept unit, least effect first, tried low again; repeated until a whole pass
//      keeps them all, so no kept unit can go low on its own (1-minimal).
// Every evaluation runs every sample; the same set is never run twice. Deterministic.
namespace npucc::compiler {

struct RepairInputs {
  runtime::GraphRuntime& runtime;
  const accuracy::Samples& samples;
  const std::vector<std::string>& outputs;
  const std::vector<runtime::TensorSet>& reference; // the high graph's outputs per sample
  const std::vector<accuracy::OutputMetrics>& unrepaired; // the low graph as compiled
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
// when even every unit float32 misses the target.
RepairResult repair_accuracy(const RepairInputs& in, const onnx::ModelProto& low);

// The emulation graph of a build: the written one, else made from its low graph.
onnx::ModelProto emulation_of(const precision::PrecisionBuild& variants);

} // namespace npucc::compiler

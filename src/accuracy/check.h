#pragma once

#include "accuracy/metrics.h"
#include "accuracy/samples.h"
#include "runtime/runtime.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// --check-accuracy: the high graph and the low graph's emulation run on the same inputs,
// and how far the low side drifts, per output. The low side is the emulation graph
// (precision/emulation.h: float32 compute with a rounding Cast wherever the low graph holds
// a float16/bfloat16 value), for float16 as for bfloat16: ONNX Runtime's CPU provider runs
// many float16 ops in float32 and drops the casts between them, which would hide an
// overflow float16 hardware shows, and it has no bfloat16 kernels for most ops.
namespace npucc::accuracy {

struct AccuracyReport {
  std::string inputs;      // "samples" or "random"
  int64_t samples = 0;     // input sets run
  std::string compared;    // the graph run for the low side: "emulation"
  std::string emulates;    // the low graph's precision ("mixed_float16")
  std::string runtime;     // "ONNX Runtime 1.30.0"
  int64_t runs = 0;        // graph runs (one per graph and sample set)
  double seconds = 0;      // spent in the runtime, sessions included
  std::vector<std::string> sources; // per sample set: where it came from ("sets")
  std::vector<OutputMetrics> outputs;
};

// Each output of `names` over every sample: the high graph's outputs against the low side's
// (both as GraphRuntime::run returns them), per sample and merged over the samples. The
// sets are the report's sets first_set, first_set + 1, ... (a batch of them).
std::vector<OutputMetrics> compare_sets(const std::vector<std::string>& names,
                                        const std::vector<runtime::TensorSet>& high,
                                        const std::vector<runtime::TensorSet>& low,
                                        const FigureRequests& requests = {},
                                        int64_t first_set = 0);

// The manifest's "accuracy" object (tests/schemas: manifest): per output the worst figures
// (the fields of old readers), a summary per figure (worst, mean, median, worst set), the
// figures per sample set, and warnings for a low graph that collapses.
nlohmann::json report_json(const AccuracyReport& report);
// Just the "outputs" array of report_json (a caller's functions left out).
nlohmann::json outputs_json(const std::vector<OutputMetrics>& outputs);
// With a caller's function among the metrics (OutputMetrics::function), block["functions"]:
// per function its clause's metric ("name"), worst/mean/median/worst_set of its values, the
// value per set ("per_sample"), and for a check the sets it held on ("sets_held").
void add_functions_json(nlohmann::json& block, const std::vector<OutputMetrics>& metrics);
// The lines under compile's summary ("accuracy: ..."), from the manifest's object
// (check_text.cpp).
std::vector<std::string> format_accuracy(const nlohmann::json& report);
// Its lines per output (with their warnings) and the validation block, without the heading
// and the target: for a report that heads them with its own (npucc compare).
std::vector<std::string> format_figures(const nlohmann::json& report);

} // namespace npucc::accuracy

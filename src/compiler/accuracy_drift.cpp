#include "compiler/accuracy_drift.h"

#include "accuracy/drift_fold.h"
#include "accuracy/value_probe.h"
#include "compiler/accuracy_repair.h"
#include "compiler/runtime_graph_file.h"
#include "npucc/error.h"

#include <chrono>

namespace npucc::compiler {

const precision::GraphVariant& variant_of(const precision::PrecisionBuild& variants,
                                          const std::string& role) {
  for (const auto& graph : variants.graphs) {
    if (graph.role == role) {
      return graph;
    }
  }
  throw Error("internal error: the accuracy check found no " + role + " graph",
              "please report this");
}

std::string low_type_of(const precision::PrecisionBuild& variants) {
  if (variants.report.is_object() && variants.report.contains("low_type") &&
      variants.report.at("low_type").is_string()) {
    return variants.report.at("low_type").get<std::string>();
  }
  return variant_of(variants, "low").precision == "mixed_bfloat16" ? "bfloat16" : "float16";
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

nlohmann::json measure_drift_values(DriftGraphs graphs,
                                    const std::vector<accuracy::DriftValue>& values,
                                    const std::string& low_type, const accuracy::Samples& samples,
                                    runtime::GraphRuntime& runtime, double threshold) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> names;
  for (const auto& value : values) {
    names.push_back(value.value);
  }
  accuracy::expose_values(graphs.high, names);
  accuracy::expose_values(graphs.low, names);
  const RuntimeGraphFile high_file(graphs.high);
  const RuntimeGraphFile low_file(graphs.low);
  // Folded inside the runtime process (accuracy/drift_fold.h): figures cross, values do not.
  std::vector<accuracy::DriftFigures> figures(names.size());
  double fold_seconds = 0;
  bool first_run = true;
  const int64_t runs = accuracy::fold_values(
      runtime, {graphs.high_what, high_file.source(), names},
      {graphs.low_what, low_file.source(), names}, samples, accuracy::k_drift_fold,
      [&](std::string_view result) {
        auto folded = accuracy::decode_drift_fold(result);
        if (folded.figures.size() != figures.size()) {
          throw Error("runtime: a drift report's figures did not arrive intact");
        }
        for (size_t v = 0; v < figures.size(); ++v) {
          if (first_run) {
            figures[v] = std::move(folded.figures[v]);
          } else {
            accuracy::merge_drift(figures[v], folded.figures[v]);
          }
        }
        first_run = false;
        fold_seconds += folded.fold_seconds;
      });
  auto report = accuracy::drift_json(
      values, figures, {low_type, static_cast<int64_t>(samples.count()), runs, threshold});
  report["seconds"] = seconds_since(start);
  report["fold_seconds"] = fold_seconds;
  return report;
}

nlohmann::json measure_drift(const precision::PrecisionBuild& variants,
                             const accuracy::Samples& samples, runtime::GraphRuntime& runtime,
                             double threshold, const LogSink& log) {
  const auto& high = variant_of(variants, "high");
  const auto plan =
      plan_drift(variant_of(variants, "low").model.graph(), high.model.graph(), variants.report);
  if (log) {
    log("accuracy: drift report: " + std::to_string(plan.values.size()) +
        " values of the high graph and the low graph's emulation on " +
        std::to_string(samples.count()) + " input set(s)");
  }
  auto report = measure_drift_values(
      {high.model, "the high graph", emulation_of(variants), "the emulation of the low graph"},
      plan.values, low_type_of(variants), samples, runtime, threshold);
  report["not_covered"] = plan.not_covered;
  return report;
}

} // namespace npucc::compiler

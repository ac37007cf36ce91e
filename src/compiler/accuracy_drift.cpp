#include "compiler/accuracy_drift.h"

#include "accuracy/value_probe.h"
#include "compiler/accuracy_repair.h"
#include "compiler/runtime_graph_file.h"
#include "npucc/error.h"
#include "util/parallel.h"

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

nlohmann::json measure_drift(const precision::PrecisionBuild& variants,
                             const accuracy::Samples& samples, runtime::GraphRuntime& runtime,
                             double threshold, const LogSink& log) {
  const auto start = std::chrono::steady_clock::now();
  const auto& high = variant_of(variants, "high");
  const auto plan =
      plan_drift(variant_of(variants, "low").model.graph(), high.model.graph(), variants.report);
  std::vector<std::string> names;
  for (const auto& value : plan.values) {
    names.push_back(value.value);
  }
  onnx::ModelProto high_model = high.model;
  onnx::ModelProto emulation = emulation_of(variants);
  accuracy::expose_values(high_model, names);
  accuracy::expose_values(emulation, names);
  const RuntimeGraphFile high_file(high_model);
  const RuntimeGraphFile emulation_file(emulation);
  if (log) {
    log("accuracy: drift report: " + std::to_string(names.size()) +
        " values of the high graph and the low graph's emulation on " +
        std::to_string(samples.count()) + " input set(s)");
  }
  std::vector<accuracy::DriftFigures> figures(names.size());
  double fold_seconds = 0;
  const int64_t runs = accuracy::probe_values(
      runtime, {"the high graph", high_file.source(), names},
      {"the emulation of the low graph", emulation_file.source(), names}, samples,
      [&](int64_t, const runtime::TensorSet& high_values, const runtime::TensorSet& low_values) {
        const auto fold_start = std::chrono::steady_clock::now();
        util::parallel_for(figures.size(), [&](size_t v) {
          accuracy::fold_drift(figures[v], high_values[v], low_values[v]);
        });
        fold_seconds += seconds_since(fold_start);
      },
      2 * accuracy::stated_bytes(high.model.graph(), names)); // the emulation's are no larger
  auto report = accuracy::drift_json(
      plan.values, figures,
      {low_type_of(variants), static_cast<int64_t>(samples.count()), runs, threshold});
  report["not_covered"] = plan.not_covered;
  report["seconds"] = seconds_since(start);
  report["fold_seconds"] = fold_seconds;
  return report;
}

} // namespace npucc::compiler

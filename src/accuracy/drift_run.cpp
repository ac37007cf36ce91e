#include "accuracy/drift_run.h"

#include "accuracy/drift_fold.h"
#include "accuracy/value_probe.h"
#include "accuracy/repair.h"
#include "output/runtime_graph_file.h"
#include "npucc/error.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace npucc::accuracy {

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

namespace {

// Each value's name in the exposed graphs, in `values`' order, and the body values among them
// (their names body_output_names'), with the graphs rewritten to expose them all.
std::vector<std::string> expose_all(DriftGraphs& graphs,
                                    const std::vector<accuracy::DriftValue>& values) {
  std::vector<std::string> main_names;
  std::vector<accuracy::BodyValue> body_values;
  for (const auto& value : values) {
    if (value.body.empty()) {
      main_names.push_back(value.value);
    } else {
      body_values.push_back({value.body, value.value});
    }
  }
  accuracy::expose_values(graphs.high, main_names);
  accuracy::expose_values(graphs.low, main_names);
  accuracy::expose_body_values(graphs.high, body_values);
  accuracy::expose_body_values(graphs.low, body_values);
  const auto body_names = accuracy::body_output_names(body_values);
  std::vector<std::string> names;
  size_t body = 0;
  for (const auto& value : values) {
    names.push_back(value.body.empty() ? value.value : body_names[body++]);
  }
  return names;
}

nlohmann::json measure_exposed(DriftGraphs graphs, const std::vector<accuracy::DriftValue>& values,
                               const std::string& low_type, const accuracy::Samples& samples,
                               runtime::GraphRuntime& runtime, double threshold) {
  const auto start = std::chrono::steady_clock::now();
  const auto names = expose_all(graphs, values);
  const output::RuntimeGraphFile high_file(graphs.high);
  const output::RuntimeGraphFile low_file(graphs.low);
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
  report["not_covered"] = nlohmann::json::array();
  return report;
}

// `values` without the body values, each one's inputs renumbered; the bodies they were in,
// with how many values each lost, as not_covered entries giving `why`.
std::vector<accuracy::DriftValue> main_values_only(const std::vector<accuracy::DriftValue>& values,
                                                   const std::string& why,
                                                   nlohmann::json& not_covered) {
  std::vector<accuracy::DriftValue> kept;
  std::vector<size_t> renumbered(values.size(), 0);
  std::map<std::string, int64_t> dropped;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].body.empty()) {
      ++dropped[values[i].graph];
      continue;
    }
    renumbered[i] = kept.size();
    kept.push_back(values[i]);
  }
  for (auto& value : kept) {
    for (auto& input : value.inputs) {
      input = renumbered[input];
    }
  }
  for (const auto& [graph, count] : dropped) {
    not_covered.push_back({{"graph", graph}, {"values", count}, {"reason", why}});
  }
  return kept;
}

} // namespace

nlohmann::json measure_drift_values(DriftGraphs graphs,
                                    const std::vector<accuracy::DriftValue>& values,
                                    const std::string& low_type, const accuracy::Samples& samples,
                                    runtime::GraphRuntime& runtime, double threshold) {
  const bool bodies = std::any_of(values.begin(), values.end(),
                                  [](const auto& value) { return !value.body.empty(); });
  if (!bodies) {
    return measure_exposed(std::move(graphs), values, low_type, samples, runtime, threshold);
  }
  try {
    return measure_exposed(graphs, values, low_type, samples, runtime, threshold);
  } catch (const Error& error) {
    // A body value ONNX Runtime cannot stack (its shape changes between iterations) fails
    // the whole run: the main graph's values are measured again without the bodies'.
    nlohmann::json not_covered = nlohmann::json::array();
    const auto kept = main_values_only(
        values, std::string("exposing the body's values failed: ") + error.what(), not_covered);
    auto report = measure_exposed(std::move(graphs), kept, low_type, samples, runtime, threshold);
    report["not_covered"] = std::move(not_covered);
    return report;
  }
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
  // The bodies the plan left out first, then any whose values the runtime could not stack.
  auto not_covered = plan.not_covered;
  for (auto& entry : report["not_covered"]) {
    not_covered.push_back(std::move(entry));
  }
  report["not_covered"] = std::move(not_covered);
  return report;
}

} // namespace npucc::accuracy

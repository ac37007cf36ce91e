#include "accuracy/compile_check.h"

#include "accuracy/check.h"
#include "accuracy/samples.h"
#include "accuracy/target.h"
#include "accuracy/target_functions.h"
#include "accuracy/drift_run.h"
#include "accuracy/repair.h"
#include "accuracy/search_sets.h"
#include "accuracy/activation_ranges.h"
#include "accuracy/descent.h"
#include "output/runtime_graph_file.h"
#include "npucc/error.h"
#include "accuracy/sample_runner.h"
#include "util/parallel.h"
#include "runtime/runtime.h"

#include <algorithm>
#include <chrono>

namespace npucc::accuracy {

namespace {

const precision::GraphVariant* find_role(const precision::PrecisionBuild& variants,
                                         const std::string& role) {
  for (const auto& graph : variants.graphs) {
    if (graph.role == role) {
      return &graph;
    }
  }
  return nullptr;
}


} // namespace

namespace {

bool meets_everywhere(const accuracy::AccuracyTarget& target, const Metrics& search,
                      const Metrics* validation) {
  return accuracy::meets(target, search) &&
         (validation == nullptr || accuracy::meets(target, *validation));
}

void say_running(const LogSink& log, const CheckSets& sets, runtime::GraphRuntime& runtime) {
  if (log) { // version(): the runtime has loaded meanwhile
    log("accuracy: running the high graph and the low graph's emulation on " +
        std::to_string(sets.search.count()) + " input set(s)" +
        (sets.validation.count() > 0 ? " and " + std::to_string(sets.validation.count()) +
                                           " validation set(s)"
                                     : std::string()) +
        " in " + runtime.version());
  }
}

// drift.json's text, with the check's own time (until now) beside the report's.
std::string drift_document(const precision::PrecisionBuild& variants,
                           const accuracy::Samples& samples, runtime::GraphRuntime& runtime,
                           const CompileOptions& options,
                           std::chrono::steady_clock::time_point start, const LogSink& log) {
  const double check_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto drift = measure_drift(variants, samples, runtime, options.drift_threshold, log);
  drift["check_seconds"] = check_seconds;
  return drift.dump(2) + "\n";
}

// The low graph of `variants`' emulation measured on `on`'s sets.
Metrics measure_low(const precision::PrecisionBuild& variants, SampleRunner& on, const char* what) {
  onnx::ModelProto emulation = emulation_of(variants);
  const output::RuntimeGraphFile file(emulation);
  return on.measure(what, file.source());
}

// What a check has measured so far, which a rebuild of the low graph measures again.
struct Measured {
  SampleRunner& search;
  SampleRunner* validation; // or null
  Metrics& metrics;
  Metrics& validation_metrics;
  int64_t& runs;
};

// The activation-range rule on the search sets (samples, never the validation sets):
// `variants` rebuilt with the nodes it keeps, and measured again. Returns the manifest's
// activation_ranges.
nlohmann::json apply_range_rule(precision::PrecisionBuild& variants, const CheckSets& sets,
                                runtime::GraphRuntime& runtime, const BuildVariants& build,
                                RangeKept& kept, const Measured& measured, const LogSink& log) {
  auto rule = activation_range_rule(variants, sets.search, runtime, log);
  measured.runs += rule.runs;
  kept = std::move(rule.kept);
  if (!kept.empty()) {
    variants = build({}, kept, {});
    const char* what = "the emulation of the low graph after the activation-range rule";
    measured.metrics = measure_low(variants, measured.search, what);
    measured.runs += measured.search.sets();
    if (measured.validation != nullptr) {
      measured.validation_metrics = measure_low(variants, *measured.validation, what);
      measured.runs += measured.validation->sets();
    }
  }
  return std::move(rule.report);
}

// The repair search (repair.h) from the low graph of `variants`, which it replaces
// with the repaired build, measured again on every set. Returns the manifest's
// accuracy.repair; `kept`: the nodes it keeps float32.
nlohmann::json repair_and_measure(precision::PrecisionBuild& variants,
                                  const accuracy::AccuracyTarget& target,
                                  const RebuildVariants& rebuild, std::vector<std::string>& kept,
                                  const Measured& measured, const LogSink& log) {
  const onnx::ModelProto unrepaired = find_role(variants, "low")->model;
  auto result = repair_accuracy(
      {measured.search, measured.validation, measured.metrics, target, rebuild, log}, unrepaired);
  variants = rebuild(result.kept_nodes);
  nlohmann::json repair = std::move(result.report);
  repair["before"] = accuracy::outputs_json(measured.metrics);
  if (measured.validation != nullptr) {
    repair["before_validation"] = accuracy::outputs_json(measured.validation_metrics);
  }
  // Once more, on the graph that is written, on every set.
  const char* what = "the emulation of the repaired low graph";
  measured.metrics = measure_low(variants, measured.search, what);
  measured.runs += result.runs + measured.search.sets();
  if (measured.validation != nullptr) {
    measured.validation_metrics = measure_low(variants, *measured.validation, what);
    measured.runs += measured.validation->sets();
  }
  if (!meets_everywhere(target, measured.metrics,
                        measured.validation != nullptr ? &measured.validation_metrics : nullptr)) {
    throw Error("internal error: the repaired low graph missed --accuracy-target " +
                    accuracy::target_text(target) + " when checked again",
                "please report this; --keep-dtype FILE keeps nodes float32 by hand");
  }
  kept = std::move(result.kept_nodes);
  return repair;
}

// The descent (descent.h) from the build the check leaves, which meets `target`: `variants`
// and the measured figures replaced when it lowers something. Returns accuracy.descent.
nlohmann::json descend_and_measure(precision::PrecisionBuild& variants,
                                   const CompileOptions& options,
                                   const accuracy::AccuracyTarget& target,
                                   const BuildVariants& build, AccuracyOutcome& outcome,
                                   const Measured& measured, const LogSink& log) {
  const auto denied = black_listed_ops(options.modify_mixlist, options.modify_mixlist_source);
  const LowerVariants lower = [&](const std::vector<std::string>& lowered) {
    return build(outcome.kept_nodes, outcome.range_kept, lowered);
  };
  auto result = descend(variants, {measured.search, measured.validation, target, lower, denied, log},
                        measured.metrics, measured.validation_metrics);
  measured.runs += result.runs;
  outcome.lowered_nodes = std::move(result.lowered);
  return std::move(result.report);
}

} // namespace

AccuracyOutcome run_accuracy_check(precision::PrecisionBuild& variants,
                                   const CompileOptions& options, const BuildVariants& build,
                                   const LogSink& log) {
  if (find_role(variants, "high") == nullptr || find_role(variants, "low") == nullptr) {
    throw usage_error("--check-accuracy compares a low graph with its high graph, and this "
                      "compile makes one graph",
                      "add --accelerate-train-mode, e.g. 'fast|step|0.9'");
  }
  const auto start = std::chrono::steady_clock::now();
  auto target = accuracy::parse_accuracy_target(
      options.accuracy_target.empty() ? std::vector<std::string>{}
                                      : std::vector<std::string>{options.accuracy_target});
  const AccuracyFunctions functions(options.accuracy_functions, target);
  const AccuracyFunctions* calls = functions.empty() ? nullptr : &functions;
  const CheckSets sets =
      check_sets(options, accuracy::model_inputs(find_role(variants, "high")->model.graph()),
                 !target.empty());
  auto runtime = runtime::start_runtime(runtime_processes(sets.search));
  AccuracyOutcome outcome;
  const RebuildVariants rebuild = [&](const std::vector<std::string>& kept) {
    return build(kept, outcome.range_kept, {});
  };
  const auto* high = find_role(variants, "high");
  const std::vector<std::string> outputs = output_names(high->model.graph());
  // Both graphs at once, one per runtime process: a session each, as ONNX Runtime alone
  // would make.
  onnx::ModelProto high_model = high->model;
  onnx::ModelProto emulation = emulation_of(variants);
  const output::RuntimeGraphFile high_file(high_model);
  const output::RuntimeGraphFile emulation_file(emulation);
  say_running(log, sets, *runtime);
  const auto requests = accuracy::figure_requests(target);
  SampleRunner search(*runtime, sets.search, outputs, requests, "sample sets", log, calls);
  SampleRunner validation(*runtime, sets.validation, outputs, requests, "validation sets", log,
                          calls);
  const bool validating = sets.validation.count() > 0;
  auto metrics = search.first_run(high_file.source(), emulation_file.source(), !target.empty());
  if (!target.empty()) { // before any repair: a target the high graph leaves unjudgeable
    const Metrics ideal = search.ideal();
    accuracy::check_judgeable(target, ideal);
    accuracy::set_function_bests(target, ideal);
  }
  Metrics validation_metrics;
  if (validating) {
    validation_metrics =
        validation.first_run(high_file.source(), emulation_file.source(), !target.empty());
  }

  accuracy::AccuracyReport report;
  report.inputs = sets.search.origin;
  report.samples = search.sets();
  report.compared = "emulation";
  report.emulates = find_role(variants, "low")->precision;
  report.runtime = runtime->version();
  report.runs = 2 * (search.sets() + validation.sets());
  report.sources = sets.search.sources;
  const Measured measured{search, validating ? &validation : nullptr, metrics, validation_metrics,
                          report.runs};
  nlohmann::json ranges;
  if (!target.empty() && !options.sample_inputs.empty() && !range_rule_off_for_bench() &&
      !meets_everywhere(target, metrics, validating ? &validation_metrics : nullptr)) {
    // Before any search: what the high graph's own values show the low type cannot hold.
    ranges = apply_range_rule(variants, sets, *runtime, build, outcome.range_kept, measured, log);
  }
  nlohmann::json repair;
  if (!target.empty() &&
      !meets_everywhere(target, metrics, validating ? &validation_metrics : nullptr)) {
    repair = repair_and_measure(variants, target, rebuild, outcome.kept_nodes, measured, log);
    repair["seconds_total"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  nlohmann::json descent;
  if (!target.empty() && !options.sample_inputs.empty()) { // the target is met here
    descent = descend_and_measure(variants, options, target, build, outcome, measured, log);
  }
  report.outputs = metrics;
  auto json = accuracy::report_json(report);
  if (validating) {
    json["validation"] = validation_json(sets, validation_metrics);
  }
  if (!ranges.is_null()) {
    json["activation_ranges"] = ranges;
  }
  if (!target.empty()) {
    json["target"] = accuracy::target_text(target);
    json["kept_float32"] = outcome.kept_nodes;
    if (!descent.is_null()) {
      json["descent"] = std::move(descent);
    }
    if (!repair.is_null()) {
      json["repair"] = std::move(repair);
    }
  }
  outcome.report = json.dump();
  if (options.accuracy_report == "nodes") {
    outcome.drift_report = drift_document(variants, sets.search, *runtime, options, start, log);
  }
  return outcome;
}

} // namespace npucc::accuracy

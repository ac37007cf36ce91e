#include "compare/compare.h"

#include "accuracy/check.h"
#include "accuracy/samples.h"
#include "accuracy/target.h"
#include "accuracy/drift_run.h"
#include "accuracy/search_sets.h"
#include "output/runtime_graph_file.h"
#include "accuracy/sample_runner.h"
#include "runtime/runtime.h"
#include "runtime/tensor.h"

#include <chrono>

namespace npucc::compare {

namespace {

using accuracy::Metrics;

std::string low_type_name(int32_t type) {
  return type == onnx::TensorProto::BFLOAT16 ? "bfloat16" : "float16";
}

nlohmann::json conversions_json(const ComparedPair& pair) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& conversion : pair.conversions) {
    out.push_back({{"name", conversion.name},
                   {"kind", conversion.input ? "input" : "output"},
                   {"reference_type", runtime::type_name(conversion.reference_type)},
                   {"candidate_type", runtime::type_name(conversion.candidate_type)}});
  }
  return out;
}

// The two graphs as the runtime reads them, and how its messages name the candidate's.
struct RunGraphs {
  runtime::GraphSource reference;
  runtime::GraphSource candidate;
  std::string candidate_name;
};

// The figures of one kind of sets (the samples, or the validation sets): both graphs run at
// once on each set, and the target checked for what the reference alone leaves undefined.
struct Measured {
  Metrics metrics;
  int64_t sets = 0;
};
Measured measure_sets(runtime::GraphRuntime& runtime, const accuracy::Samples& samples,
                      const char* what, const RunGraphs& graphs,
                      const std::vector<std::string>& outputs,
                      const accuracy::AccuracyTarget& target, const LogSink& log) {
  accuracy::SampleRunner runner(runtime, samples, outputs, accuracy::figure_requests(target),
                                what, log);
  runner.name_graphs("the reference", graphs.candidate_name);
  Measured out;
  out.metrics = runner.first_run(graphs.reference, graphs.candidate, !target.empty());
  if (!target.empty()) {
    accuracy::check_judgeable(target, runner.ideal());
  }
  out.sets = runner.sets();
  return out;
}

nlohmann::json pair_json(const CompareOptions& options, const ComparedPair& pair) {
  nlohmann::json low = nlohmann::json::array();
  for (int32_t type : pair.low_types) {
    low.push_back(low_type_name(type));
  }
  return {{"format", "npucc-compare"},
          {"format_version", 1},
          {"reference", options.reference.string()},
          {"candidate", options.candidate.string()},
          {"run", pair.run == CandidateRun::emulated ? "emulated" : "plain"},
          {"candidate_run", run_description(pair)},
          {"candidate_stores", low},
          {"rounded_values", pair.rounded_values},
          {"conversions", conversions_json(pair)},
          {"matched_values", pair.matched_values.size()}};
}

// "float16", "bfloat16", "float16 and bfloat16", or "none": what the candidate stores.
std::string drift_low_type(const ComparedPair& pair) {
  if (pair.low_types.empty()) {
    return "none";
  }
  std::string types;
  for (int32_t type : pair.low_types) {
    types += (types.empty() ? "" : " and ") + low_type_name(type);
  }
  return types;
}

// --accuracy-report nodes: the planned values of the reference against the candidate's run
// (its emulation, or the candidate as is), on the sample sets.
nlohmann::json measure_pair_drift(const ComparedPair& pair, const accuracy::Samples& samples,
                                  runtime::GraphRuntime& runtime, double threshold,
                                  const LogSink& log) {
  const bool emulated = pair.run == CandidateRun::emulated;
  if (log) {
    log("compare: drift report: " + std::to_string(pair.drift.values.size()) +
        " values of the reference and the candidate" + (emulated ? "'s emulation" : "") + " on " +
        std::to_string(samples.count()) + " input set(s)");
  }
  auto drift = accuracy::measure_drift_values(
      {pair.reference, "the reference", pair.candidate_run,
       emulated ? "the candidate's emulation" : "the candidate"},
      pair.drift.values, drift_low_type(pair), samples, runtime, threshold);
  auto not_covered = pair.drift.not_covered; // then any body the runtime could not stack
  for (auto& entry : drift["not_covered"]) {
    not_covered.push_back(std::move(entry));
  }
  drift["not_covered"] = std::move(not_covered);
  drift["unmatched_values"] = pair.drift.unmatched;
  return drift;
}

} // namespace

std::string run_description(const ComparedPair& pair) {
  if (pair.run == CandidateRun::plain) {
    return "ONNX Runtime as-is";
  }
  if (pair.low_types.empty()) {
    return "emulated (nothing stored in float16 or bfloat16)";
  }
  return "emulated " + drift_low_type(pair);
}

CompareResult compare_models(const CompareOptions& options, const LogSink& log) {
  const auto start = std::chrono::steady_clock::now();
  ComparedPair pair =
      prepare_pair(options.reference, options.candidate, options.run, options.measure.limits,
                   options.measure.input_shapes);
  const auto target = accuracy::parse_accuracy_target(
      options.measure.accuracy_target.empty()
          ? std::vector<std::string>{}
          : std::vector<std::string>{options.measure.accuracy_target});
  // No search here, so no set is held out: every sample set is measured, and validation sets
  // are the --validation-inputs alone.
  const accuracy::CheckSets sets = accuracy::check_sets(
      options.measure, accuracy::model_inputs(pair.reference.graph()), false);
  auto runtime = runtime::start_runtime(accuracy::runtime_processes(sets.search));
  const output::RuntimeGraphFile reference_file(pair.reference);
  const output::RuntimeGraphFile candidate_file(pair.candidate_run);
  const RunGraphs graphs{reference_file.source(), candidate_file.source(),
                         pair.run == CandidateRun::emulated ? "the candidate's emulation"
                                                            : "the candidate"};
  if (log) {
    log("compare: running the reference and the candidate (" + run_description(pair) + ") on " +
        std::to_string(sets.search.count() + sets.validation.count()) + " input set(s) in " +
        runtime->version());
  }
  const Measured search =
      measure_sets(*runtime, sets.search, "sample sets", graphs, pair.outputs, target, log);
  Measured validation;
  if (sets.validation.count() > 0) {
    validation = measure_sets(*runtime, sets.validation, "validation sets", graphs, pair.outputs,
                              target, log);
  }
  accuracy::AccuracyReport report;
  report.inputs = sets.search.origin;
  report.samples = search.sets;
  report.compared = pair.run == CandidateRun::emulated ? "emulation" : "as-is";
  report.emulates = run_description(pair);
  report.runtime = runtime->version();
  report.runs = 2 * (search.sets + validation.sets);
  report.sources = sets.search.sources;
  report.outputs = search.metrics;
  nlohmann::json accuracy = accuracy::report_json(report);
  // The whole comparison, models read and runtime started included (report_json has no field
  // for the runtime's own seconds, which the compile's check reports nowhere either).
  accuracy["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CompareResult result;
  if (sets.validation.count() > 0) {
    accuracy["validation"] = accuracy::validation_json(sets, validation.metrics);
  }
  if (!target.empty()) {
    result.has_target = true;
    result.meets_target =
        accuracy::meets(target, search.metrics) &&
        (sets.validation.count() == 0 || accuracy::meets(target, validation.metrics));
    accuracy["target"] = accuracy::target_text(target);
    accuracy["meets_target"] = result.meets_target;
  }
  result.report = pair_json(options, pair);
  result.report["accuracy"] = std::move(accuracy);
  if (options.measure.accuracy_report == "nodes") {
    result.report["drift"] = measure_pair_drift(pair, sets.search, *runtime,
                                                options.measure.drift_threshold, log);
  }
  return result;
}

} // namespace npucc::compare

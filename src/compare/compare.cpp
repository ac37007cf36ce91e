#include "compare/compare.h"

#include "accuracy/check.h"
#include "accuracy/samples.h"
#include "accuracy/target.h"
#include "compiler/accuracy_sets.h"
#include "compiler/runtime_graph_file.h"
#include "compiler/sample_runner.h"
#include "runtime/runtime.h"
#include "runtime/tensor.h"

#include <chrono>

namespace npucc::compare {

namespace {

using compiler::Metrics;

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
  compiler::SampleRunner runner(runtime, samples, outputs, accuracy::figure_requests(target),
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

} // namespace

std::string run_description(const ComparedPair& pair) {
  if (pair.run == CandidateRun::plain) {
    return "ONNX Runtime as-is";
  }
  if (pair.low_types.empty()) {
    return "emulated (nothing stored in float16 or bfloat16)";
  }
  std::string types;
  for (int32_t type : pair.low_types) {
    types += (types.empty() ? "" : " and ") + low_type_name(type);
  }
  return "emulated " + types;
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
  const compiler::CheckSets sets = compiler::check_sets(
      options.measure, accuracy::model_inputs(pair.reference.graph()), false);
  auto runtime = runtime::start_runtime(compiler::runtime_processes(sets.search));
  const compiler::RuntimeGraphFile reference_file(pair.reference);
  const compiler::RuntimeGraphFile candidate_file(pair.candidate_run);
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
  // Seam: per-node drift (issue 43 item 1) on a compare goes here, once the value probe lands:
  // it runs pair.reference against pair.candidate_run (the emulation, when emulated) on the
  // same sets with pair.matched_values exposed (MatchedValue: the two names, the low type); its
  // report joins result.report as "drift" (drift-report's per-node module; the lead wires it).
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
    accuracy["validation"] = compiler::validation_json(sets, validation.metrics);
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
  return result;
}

} // namespace npucc::compare

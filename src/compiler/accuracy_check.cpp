#include "compiler/accuracy_check.h"

#include "accuracy/check.h"
#include "accuracy/samples.h"
#include "accuracy/target.h"
#include "compiler/accuracy_repair.h"
#include "compiler/runtime_graph_file.h"
#include "npucc/error.h"
#include "util/parallel.h"
#include "runtime/runtime.h"

#include <chrono>

namespace npucc::compiler {

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

AccuracyOutcome run_accuracy_check(precision::PrecisionBuild& variants,
                                   const CompileOptions& options, const RebuildVariants& rebuild,
                                   const LogSink& log) {
  const auto* high = find_role(variants, "high");
  const auto* low = find_role(variants, "low");
  if (high == nullptr || low == nullptr) {
    throw usage_error("--check-accuracy compares a low graph with its high graph, and this "
                      "compile makes one graph",
                      "add --accelerate-train-mode, e.g. 'fast|step|0.9'");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto inputs = accuracy::model_inputs(high->model.graph());
  const accuracy::Samples samples = options.sample_inputs.empty()
                                        ? accuracy::random_samples(inputs)
                                        : accuracy::load_samples(options.sample_inputs, inputs);
  accuracy::check_finite_samples(samples, inputs, options.allow_nonfinite_samples);
  const auto target = accuracy::parse_accuracy_target(
      options.accuracy_target.empty() ? std::vector<std::string>{}
                                      : std::vector<std::string>{options.accuracy_target});
  const auto requests = accuracy::figure_requests(target);
  // One runtime process per core, up to one per sample set, and two for the two graphs of
  // the check (runtime.h: the same bits either way).
  auto runtime = runtime::start_runtime(
      std::min<size_t>(util::thread_budget(), std::max<size_t>(2, samples.sets.size())));
  std::vector<std::string> outputs;
  for (const auto& output : high->model.graph().output()) {
    outputs.push_back(output.name());
  }
  const auto sets = static_cast<int64_t>(samples.sets.size());
  // Both graphs at once, one per runtime process: a session each, as ONNX Runtime alone
  // would make.
  onnx::ModelProto high_model = high->model;
  onnx::ModelProto emulation = emulation_of(variants);
  const RuntimeGraphFile high_file(high_model);
  const RuntimeGraphFile emulation_file(emulation);
  if (log) { // version(): the runtime has loaded meanwhile
    log("accuracy: running the high graph and the low graph's emulation on " +
        std::to_string(samples.sets.size()) + " input set(s) in " + runtime->version());
  }
  auto first = runtime->run_each({{"the high graph", high_file.source()},
                                  {"the emulation of the low graph", emulation_file.source()}},
                                 samples.sets, outputs);
  const std::vector<runtime::TensorSet> reference = std::move(first[0]);
  auto metrics = accuracy::compare_sets(outputs, reference, first[1], requests);
  if (!target.empty()) { // before any repair: a target the high graph leaves unjudgeable
    accuracy::check_judgeable(target,
                              accuracy::compare_sets(outputs, reference, reference, requests));
  }
  auto run_low = [&](const char* what) {
    onnx::ModelProto repaired = emulation_of(variants);
    const RuntimeGraphFile file(repaired);
    return accuracy::compare_sets(outputs, reference,
                                  runtime->run(what, file.source(), samples.sets, outputs),
                                  requests);
  };

  accuracy::AccuracyReport report;
  report.inputs = samples.origin;
  report.samples = sets;
  report.compared = "emulation";
  report.emulates = low->precision;
  report.runtime = runtime->version();
  report.runs = 2 * sets;
  report.sources = samples.sources;
  AccuracyOutcome outcome;
  nlohmann::json repair;
  if (!target.empty() && !accuracy::meets(target, metrics)) {
    const onnx::ModelProto unrepaired = low->model;
    auto result = repair_accuracy({*runtime, samples, outputs, reference, metrics, target, rebuild, log},
                                  unrepaired);
    variants = rebuild(result.kept_nodes);
    repair = std::move(result.report);
    repair["before"] = accuracy::outputs_json(metrics);
    // Once more, on the graph that is written, on every sample.
    metrics = run_low("the emulation of the repaired low graph");
    report.runs += result.runs + sets;
    if (!accuracy::meets(target, metrics)) {
      throw Error("internal error: the repaired low graph missed --accuracy-target " +
                      accuracy::target_text(target) + " when checked again",
                  "please report this; --keep-dtype FILE keeps nodes float32 by hand");
    }
    outcome.kept_nodes = std::move(result.kept_nodes);
  }
  report.outputs = metrics;
  auto json = accuracy::report_json(report);
  if (!target.empty()) {
    json["target"] = accuracy::target_text(target);
    json["kept_float32"] = outcome.kept_nodes;
    if (!repair.is_null()) {
      repair["seconds_total"] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      json["repair"] = std::move(repair);
    }
  }
  outcome.report = json.dump();
  return outcome;
}

} // namespace npucc::compiler

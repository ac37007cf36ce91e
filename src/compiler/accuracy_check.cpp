#include "compiler/accuracy_check.h"

#include "accuracy/check.h"
#include "accuracy/samples.h"
#include "npucc/error.h"
#include "precision/emulation.h"
#include "runtime/runtime.h"

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

std::string run_accuracy_check(const precision::PrecisionBuild& variants,
                               const CompileOptions& options, const LogSink& log) {
  const auto* high = find_role(variants, "high");
  const auto* low = find_role(variants, "low");
  if (high == nullptr || low == nullptr) {
    throw usage_error("--check-accuracy compares a low graph with its high graph, and this "
                      "compile makes one graph",
                      "add --accelerate-train-mode, e.g. 'fast|step|0.9'");
  }
  const auto inputs = accuracy::model_inputs(high->model.graph());
  const accuracy::Samples samples = options.sample_inputs.empty()
                                        ? accuracy::random_samples(inputs)
                                        : accuracy::load_samples(options.sample_inputs, inputs);
  const auto* written_emulation = find_role(variants, "emulation");
  onnx::ModelProto made;
  if (written_emulation == nullptr) {
    made = low->model;
    precision::make_emulation(made);
  }
  const onnx::ModelProto& emulation = written_emulation ? written_emulation->model : made;
  auto runtime = runtime::start_runtime();
  if (log) {
    log("accuracy: running the high graph and the low graph's emulation on " +
        std::to_string(samples.sets.size()) + " input set(s) in " + runtime->version());
  }
  auto report = accuracy::check_accuracy(*runtime, high->model, emulation, low->precision, samples);
  return accuracy::report_json(report).dump();
}

} // namespace npucc::compiler

#include "accuracy/search_sets.h"

#include "accuracy/check.h"
#include "util/parallel.h"

#include <algorithm>

namespace npucc::accuracy {

CheckSets check_sets(const CompileOptions& options, const std::vector<accuracy::ModelInput>& inputs,
                     bool hold_out) {
  CheckSets out;
  const bool nonfinite = options.allow_nonfinite_samples;
  out.search = options.sample_inputs.empty()
                   ? accuracy::random_samples(inputs)
                   : accuracy::load_samples(options.sample_inputs, inputs, "--sample-inputs",
                                            accuracy::SampleBudget{}, nonfinite);
  if (!options.validation_inputs.empty()) {
    out.validation = accuracy::load_samples(options.validation_inputs, inputs,
                                            "--validation-inputs", accuracy::SampleBudget{},
                                            nonfinite);
    out.validation_origin = "validation-inputs";
  } else if (hold_out && !options.sample_inputs.empty()) {
    out.validation = accuracy::hold_out(out.search);
    out.validation_origin = out.validation.count() > 0 ? "held-out" : "";
  }
  return out;
}

nlohmann::json validation_json(const CheckSets& sets, const Metrics& metrics) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& source : sets.validation.sources) {
    names.push_back({{"source", source}});
  }
  nlohmann::json out = {{"inputs", sets.validation_origin},
                        {"samples", sets.validation.count()},
                        {"sets", names},
                        {"outputs", accuracy::outputs_json(metrics)}};
  accuracy::add_functions_json(out, metrics);
  if (sets.validation_origin == "held-out") {
    out["rule"] = "every " + std::to_string(accuracy::k_holdout_every) + "th of " +
                  std::to_string(sets.search.count() + sets.validation.count()) +
                  " sample sets (at least " + std::to_string(accuracy::k_holdout_minimum) +
                  " sets, a target and no --validation-inputs)";
  }
  return out;
}

size_t runtime_processes(const accuracy::Samples& samples) {
  size_t widest = 0;
  for (const auto& [first, last] : samples.batches()) {
    widest = std::max(widest, last - first);
  }
  return std::min<size_t>(util::thread_budget(), std::max<size_t>(2, widest));
}

std::vector<std::string> output_names(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& output : graph.output()) {
    names.push_back(output.name());
  }
  return names;
}

} // namespace npucc::accuracy

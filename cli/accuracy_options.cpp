#include "accuracy_options.h"

#include "accuracy/check.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace npucc::cli {

void add_accuracy_options(CLI::App& command, AccuracyArgs& args) {
  command.add_flag("--check-accuracy", args.check_accuracy,
                   "run the high graph and the low graph's emulation in ONNX Runtime and report "
                   "per output cosine, max abs/rel error and non-finite values");
  command.add_option("--sample-inputs", args.sample_inputs,
                     "inputs for --check-accuracy (implies it; repeatable): a folder of "
                     "test_data_set_*/input_*.pb, a .npz, or a folder of .npy files named after "
                     "the inputs (default: random inputs from a fixed seed)");
}

void apply_accuracy_options(const AccuracyArgs& args, CompileOptions& options) {
  options.check_accuracy = args.check_accuracy || !args.sample_inputs.empty();
  for (const auto& path : args.sample_inputs) {
    if (path.empty()) {
      throw usage_error("--sample-inputs: expected a file or folder, got ''");
    }
    options.sample_inputs.emplace_back(path);
  }
}

void print_accuracy_summary(const CompileResult& result) {
  if (result.accuracy_report.empty()) {
    return;
  }
  for (const auto& line : accuracy::format_accuracy(nlohmann::json::parse(result.accuracy_report))) {
    std::cout << "  " << util::printable(line) << "\n"; // output names come from the model
  }
}

} // namespace npucc::cli

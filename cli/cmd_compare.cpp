#include "app.h"
#include "compare/compare.h"
#include "config/option_table.h"
#include "npucc/error.h"
#include "progress.h"
#include "util/interrupt.h"
#include "util/strings.h"

#include <iostream>

namespace npucc::cli {

namespace {

struct CompareArgs {
  std::string reference;
  std::string candidate;
  std::vector<std::string> sample_inputs;
  std::vector<std::string> validation_inputs;
  std::vector<std::string> targets;
  bool allow_nonfinite = false;
  std::string run = "emulated";
  std::string max_memory;
  std::vector<std::string> input_shapes;
  bool json = false;
};

// A value given to one of the compile's options, read by its row of the option table: the
// same grammar and the same errors as `npucc compile` (npucc-compile(1), ACCURACY).
void apply_row(const char* name, const std::string& text, CompileOptions& options) {
  const config::OptionRow* row = config::find_option(name);
  if (row == nullptr || row->apply == nullptr) {
    throw Error(std::string("internal error: no option row --") + name);
  }
  row->apply(*row, text, options);
}

compare::CompareOptions compare_options(const CompareArgs& args) {
  compare::CompareOptions options;
  options.reference = args.reference;
  options.candidate = args.candidate;
  for (const auto& path : args.sample_inputs) {
    apply_row("sample-inputs", path, options.measure);
  }
  for (const auto& path : args.validation_inputs) {
    apply_row("validation-inputs", path, options.measure);
  }
  for (const auto& target : args.targets) {
    apply_row("accuracy-target", target, options.measure);
  }
  if (args.allow_nonfinite) {
    apply_row("allow-nonfinite-samples", "true", options.measure);
  }
  if (!args.input_shapes.empty()) { // given twice, one input each: one list, as compile's
    apply_row("input-shape", util::join(args.input_shapes, ";"), options.measure);
  }
  if (!args.max_memory.empty()) {
    apply_row("max-memory", args.max_memory, options.measure);
  }
  options.run =
      args.run == "plain" ? compare::CandidateRun::plain : compare::CandidateRun::emulated;
  return options;
}

void add_compare_options(CLI::App& command, CompareArgs& args) {
  command.add_option("REFERENCE", args.reference, "the .onnx model the figures are measured against")
      ->required();
  command.add_option("CANDIDATE", args.candidate,
                     "the .onnx model measured, e.g. a float16 model another tool converted")
      ->required();
  command.add_option("--sample-inputs", args.sample_inputs,
                     "inputs both models run on (repeatable), in the layouts of npucc compile's "
                     "--sample-inputs; without it, one random set from a fixed seed")
      ->allow_extra_args(false); // one PATH each: REFERENCE and CANDIDATE may follow
  command.add_option("--validation-inputs", args.validation_inputs,
                     "more sample sets, reported apart; the target must hold on them too")
      ->allow_extra_args(false);
  command.add_option("--accuracy-target", args.targets,
                     "bounds the candidate's outputs must meet on every set, as npucc compile's "
                     "(e.g. cosine>=0.999, y:top1>=0.99); missed: exit status 1")
      ->allow_extra_args(false);
  command.add_flag("--allow-nonfinite-samples", args.allow_nonfinite,
                   "run samples that hold NaN or infinite values (refused otherwise)");
  command
      .add_option("--run", args.run,
                  "what runs for the candidate: emulated (default: every float16/bfloat16 value "
                  "rounded where it is stored, as float16/bfloat16 hardware computes) or plain "
                  "(the candidate in ONNX Runtime as it is)")
      ->check(CLI::IsMember({"emulated", "plain"}));
  command
      .add_option("--input-shape", args.input_shapes,
                  "fix dynamic input dims in both models, as npucc compile's: "
                  "\"name:d0,d1,...;name2:...\" (random inputs need them)")
      ->allow_extra_args(false);
  command.add_option("--max-memory", args.max_memory,
                     "most bytes of model data read (a size, e.g. 4G; default a quarter of RAM)");
  command.add_flag("--json", args.json, "print the report as JSON (format npucc-compare)");
}

} // namespace

std::function<int()> setup_compare(CLI::App& command, const GlobalOptions& global) {
  auto args = std::make_shared<CompareArgs>();
  add_compare_options(command, *args);
  return [args, &global] {
    util::install_interrupt_handlers();
    const compare::CompareOptions options = compare_options(*args);
    Progress progress(global, "compare " + options.candidate.filename().string());
    const compare::CompareResult result = compare::compare_models(
        options, progress.log_sink(global.verbose ? Verbose::yes : Verbose::no));
    progress.finish();
    if (args->json) {
      std::cout << result.report.dump(2) << "\n";
    } else { // the report is the requested output: --quiet does not silence it
      for (const auto& line : compare::format_compare(result.report)) {
        std::cout << util::printable(line) << "\n"; // names come from the models
      }
    }
    if (result.has_target && !result.meets_target) {
      throw Error("the candidate misses --accuracy-target " +
                      result.report["accuracy"]["target"].get<std::string>() +
                      " (the figures above)",
                  "compare measures and changes nothing: npucc compile --accuracy-target "
                  "repairs a low graph it makes");
    }
    return 0;
  };
}

} // namespace npucc::cli

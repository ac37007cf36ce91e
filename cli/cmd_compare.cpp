#include "app.h"
#include "compare/compare.h"
#include "config/option_table.h"
#include "npucc/error.h"
#include "progress.h"
#include "report/drift_plot_file.h"
#include "util/file_io.h"
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
  std::string accuracy_report; // "nodes": the per-value drift report
  std::string drift_threshold;
  std::string drift_json;    // FILE: the drift report written there too (implies nodes)
  std::string accuracy_plot; // FILE.svg: the drift report drawn there (implies nodes)
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
  // A drift file or picture asked for is made: each implies the report, as on compile.
  const bool drift_asked =
      !args.accuracy_report.empty() || !args.drift_json.empty() || !args.accuracy_plot.empty();
  if (drift_asked) {
    apply_row("accuracy-report", args.accuracy_report.empty() ? "nodes" : args.accuracy_report,
              options.measure);
  }
  if (!args.drift_threshold.empty()) {
    if (!drift_asked) {
      throw usage_error("--drift-threshold sets where the drift report calls a value out, and "
                        "no drift report is asked for",
                        "add --accuracy-report nodes, or drop --drift-threshold");
    }
    apply_row("drift-threshold", args.drift_threshold, options.measure);
  }
  options.run =
      args.run == "plain" ? compare::CandidateRun::plain : compare::CandidateRun::emulated;
  return options;
}

// --accuracy-report nodes and what goes with it, named as on npucc compile.
void add_drift_options(CLI::App& command, CompareArgs& args) {
  command
      .add_option("--accuracy-report", args.accuracy_report,
                  "nodes: also measure every value the candidate stores that the reference "
                  "computes under the same name (cosine, max abs error, flush and overflow "
                  "shares, range), named where the drift begins (JSON: \"drift\")")
      ->check(CLI::IsMember({"nodes"}));
  command.add_option("--drift-threshold", args.drift_threshold,
                     "the cosine below which --accuracy-report nodes calls a value out "
                     "(default: 0.9999)");
  command.add_option("--drift-json", args.drift_json,
                     "also write the drift report to this file (format npucc-drift; implies "
                     "--accuracy-report nodes)")
      ->type_name("FILE");
  command.add_option("--accuracy-plot", args.accuracy_plot,
                     "draw the drift report as an SVG picture to this file (implies "
                     "--accuracy-report nodes; npucc-inspect(1), DRIFT PICTURE)")
      ->type_name("FILE.svg");
}

// --drift-json: replaces only a file that is missing or a drift report (one npucc wrote): any
// other file of that name is likely a slip, and is left as it is.
void write_drift_json(const nlohmann::json& drift, const std::string& file) {
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::symlink_status(file, error))) {
    const auto existing = std::filesystem::is_regular_file(file, error)
                              ? nlohmann::json::parse(util::read_file(file), nullptr, false)
                              : nlohmann::json();
    const auto format = existing.is_object() ? existing.find("format") : existing.end();
    if (format == existing.end() || *format != "npucc-drift") {
      throw Error(file + ": exists and is not a drift report; not replaced",
                  "name a new file, or remove this one first");
    }
  }
  util::write_file_atomic(file, drift.dump(2) + "\n", util::Durability::unsynced);
}

void write_drift_files(const CompareArgs& args, const compare::CompareResult& result,
                       const GlobalOptions& global) {
  if (!result.report.contains("drift")) {
    return;
  }
  const auto& drift = result.report.at("drift");
  std::ostream& say = args.json ? std::cerr : std::cout;
  if (!args.drift_json.empty()) {
    write_drift_json(drift, args.drift_json);
    if (!global.quiet) {
      say << "  drift report: " << util::printable(args.drift_json) << "\n";
    }
  }
  if (!args.accuracy_plot.empty()) {
    const std::string drawn = report::write_drift_plot(drift, args.accuracy_plot);
    if (!global.quiet) {
      say << "  drift picture: " << util::printable(args.accuracy_plot) << " (" << drawn << ")\n";
    }
  }
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
  add_drift_options(command, args);
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
    write_drift_files(*args, result, global);
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

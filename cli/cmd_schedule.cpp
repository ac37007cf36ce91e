#include "app.h"
#include "json_document.h"
#include "npucc/error.h"
#include "npucc/schedule.h"
#include "npucc/train_mode.h"
#include "schedule/state_file.h"
#include "util/strings.h"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

namespace npucc::cli {

namespace {

struct ScheduleArgs {
  std::string mode;
  std::string step;
  std::string total_step;
  std::string iterations_per_loop;
  std::string loss;
  std::string final_loss;
  std::string state_file;
  bool json = false;
  std::vector<CLI::Option*> step_options;
  std::vector<CLI::Option*> loss_options;
};

// One reported value and where it came from: a flag, or Ascend's environment variable
// (TellMeStepOrLossHook sets STEP_NOW/TOTAL_STEP/LOSS_NOW/TARGET_LOSS).
struct Input {
  std::string text;
  std::string source; // "--step" or "STEP_NOW"
};

std::optional<Input> resolve(const CLI::Option* option, const std::string& value, const char* flag,
                             const char* env) {
  if (option->count() > 0) {
    return Input{value, flag};
  }
  if (env != nullptr) {
    const char* text = std::getenv(env);
    if (text != nullptr && *text != '\0') {
      return Input{text, env};
    }
  }
  return std::nullopt;
}

Input require(const CLI::Option* option, const std::string& value, const char* flag,
              const char* env) {
  if (auto input = resolve(option, value, flag, env)) {
    return *input;
  }
  throw usage_error(std::string("missing ") + flag + " (and " + env +
                        " is not set in the environment)",
                    "see npucc schedule --help");
}

std::string describe(const Input& input) {
  const bool from_env = !util::starts_with(input.source, "--");
  return from_env ? input.source + "=\"" + input.text + "\" (environment)"
                  : input.source + " \"" + input.text + "\"";
}

int64_t to_integer(const Input& input) {
  int64_t value = 0;
  if (!util::parse_int64(input.text, value)) {
    throw usage_error(describe(input) + " is not a whole number", "e.g. 1000");
  }
  return value;
}

double to_real(const Input& input) {
  double value = 0;
  const char* end = input.text.data() + input.text.size();
  const auto result = std::from_chars(input.text.data(), end, value);
  if (result.ec != std::errc() || result.ptr != end) {
    throw usage_error(describe(input) + " is not a number", "e.g. 0.35 or 1.2e-3");
  }
  return value;
}

std::string option_names(const std::vector<CLI::Option*>& options) {
  std::vector<std::string> names;
  for (const auto* option : options) {
    if (option->count() > 0) {
      names.push_back("--" + option->get_lnames().front());
    }
  }
  return util::join(names, ", ");
}

bool any_given(const std::vector<CLI::Option*>& options) {
  for (const auto* option : options) {
    if (option->count() > 0) {
      return true;
    }
  }
  return false;
}

void check_option_set(const ScheduleArgs& args, const AccelerateTrainMode& mode) {
  const bool step = any_given(args.step_options);
  const bool loss = any_given(args.loss_options);
  if (step && loss) {
    throw usage_error("step options (" + option_names(args.step_options) + ") and loss options (" +
                          option_names(args.loss_options) + ") cannot be mixed",
                      "the mode's trigger decides: step needs --step and --total-step, loss "
                      "needs --loss and --final-loss");
  }
  if (mode.trigger == SwitchTrigger::step && loss) {
    throw usage_error(option_names(args.loss_options) + " given, but accelerate_train_mode \"" +
                          mode.to_string() + "\" switches on step",
                      "give --step and --total-step");
  }
  if (mode.trigger == SwitchTrigger::loss && step) {
    throw usage_error(option_names(args.step_options) + " given, but accelerate_train_mode \"" +
                          mode.to_string() + "\" switches on loss",
                      "give --loss and --final-loss");
  }
}

// decide(), with a rejected value traced back to the flag or environment variable it came from.
template <typename Report>
GraphRole decide_naming_inputs(const AccelerateTrainMode& mode, const Report& report,
                               const std::vector<Input>& inputs) {
  try {
    return decide(mode, report);
  } catch (const Error& error) {
    std::vector<std::string> described;
    for (const auto& input : inputs) {
      described.push_back(describe(input));
    }
    throw usage_error(error.what(), "from " + util::join(described, ", "));
  }
}

// --state-file: the one-way switch survives the call. The saved role comes back first (a
// state saved under another mode is refused: its switch point means something else), then
// this report applies; the file is rewritten only when it is new or the role changed.
template <typename Report>
GraphRole keep_one_way(const ScheduleArgs& args, const AccelerateTrainMode& mode,
                       const Report& report, GraphRole decided) {
  if (args.state_file.empty()) {
    return decided;
  }
  PrecisionSchedule kept(mode);
  const std::optional<ScheduleState> saved = schedule::read_state_file(args.state_file);
  if (saved) {
    try {
      kept.restore(*saved);
    } catch (const Error& error) {
      throw usage_error("--state-file " + args.state_file + ": " + error.what(),
                        "give each mode its own state file, or remove this one to start the "
                        "schedule over");
    }
  }
  kept.report(report);
  if (!saved || saved->role != kept.current()) {
    schedule::write_state_file(args.state_file, kept.state());
  }
  return kept.current();
}

nlohmann::ordered_json describe_mode(const ScheduleArgs& args, const AccelerateTrainMode& mode,
                                     GraphRole role) {
  // The format first: a reader sees at once what it is holding.
  nlohmann::ordered_json out = json_document(k_schedule_format, nlohmann::ordered_json::object());
  out["decision"] = to_string(role);
  out["state_file"] =
      args.state_file.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(args.state_file);
  out["mode"] = mode.to_string();
  out["type"] = mode.type_name();
  out["low_precision"] = mode.low == LowPrecision::float16 ? "float16" : "bfloat16";
  out["trigger"] = mode.trigger_name();
  out["ratio"] = mode.ratio;
  return out;
}

int run_step(const ScheduleArgs& args, const AccelerateTrainMode& mode) {
  const Input step = require(args.step_options[0], args.step, "--step", "STEP_NOW");
  const Input total = require(args.step_options[1], args.total_step, "--total-step", "TOTAL_STEP");
  const std::optional<Input> per_loop =
      resolve(args.step_options[2], args.iterations_per_loop, "--iterations-per-loop", nullptr);
  StepReport report{to_integer(step), to_integer(total), per_loop ? to_integer(*per_loop) : 1};
  std::vector<Input> inputs = {step, total};
  if (per_loop) {
    inputs.push_back(*per_loop);
  }
  const GraphRole role =
      keep_one_way(args, mode, report, decide_naming_inputs(mode, report, inputs));
  if (!args.json) {
    std::cout << to_string(role) << "\n";
    return 0;
  }
  nlohmann::ordered_json out = describe_mode(args, mode, role);
  out["threshold"] = step_to_switch(report.total_step, mode.ratio);
  out["rule"] = "high when step >= threshold or step + iterations_per_loop >= total_step";
  out["inputs"] = {{"step", report.step},
                   {"total_step", report.total_step},
                   {"iterations_per_loop", report.iterations_per_loop}};
  out["sources"] = {{"step", step.source},
                    {"total_step", total.source},
                    {"iterations_per_loop", per_loop ? per_loop->source : "default"}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_loss(const ScheduleArgs& args, const AccelerateTrainMode& mode) {
  const Input loss = require(args.loss_options[0], args.loss, "--loss", "LOSS_NOW");
  const Input target =
      require(args.loss_options[1], args.final_loss, "--final-loss", "TARGET_LOSS");
  LossReport report{to_real(loss), to_real(target)};
  const GraphRole role =
      keep_one_way(args, mode, report, decide_naming_inputs(mode, report, {loss, target}));
  if (!args.json) {
    std::cout << to_string(role) << "\n";
    return 0;
  }
  nlohmann::ordered_json out = describe_mode(args, mode, role);
  out["threshold"] = loss_to_switch(report.final_loss, mode.ratio);
  out["rule"] = "high when loss != 0 and loss <= threshold (relative tolerance 2^-22)";
  out["inputs"] = {{"loss", report.loss}, {"final_loss", report.final_loss}};
  out["sources"] = {{"loss", loss.source}, {"final_loss", target.source}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

} // namespace

std::function<int()> setup_schedule(CLI::App& command, const GlobalOptions&) {
  auto args = std::make_shared<ScheduleArgs>();
  command
      .add_option("--accelerate-train-mode", args->mode,
                  "TYPE|TRIGGER[|RATIO], e.g. \"fast|step|0.9\" or \"fast1|loss|1.05\"")
      ->required()
      ->type_name("MODE");
  args->step_options = {
      command.add_option("--step", args->step, "the current step (default: $STEP_NOW)")
          ->type_name("N"),
      command
          .add_option("--total-step", args->total_step,
                      "the total number of steps (default: $TOTAL_STEP)")
          ->type_name("N"),
      command
          .add_option("--iterations-per-loop", args->iterations_per_loop,
                      "steps between two reports (default: 1)")
          ->type_name("N")};
  args->loss_options = {
      command
          .add_option("--loss", args->loss, "the current loss, 0 = not yet (default: $LOSS_NOW)")
          ->type_name("X"),
      command
          .add_option("--final-loss", args->final_loss, "the target loss (default: $TARGET_LOSS)")
          ->type_name("X")};
  command
      .add_option("--state-file", args->state_file,
                  "keep the one-way switch across calls and resumed runs in FILE (created; "
                  "copy it with each checkpoint)")
      ->type_name("FILE");
  command.add_flag("--json", args->json,
                   "print the decision, threshold, mode and inputs as a JSON object");
  return [args] {
    const AccelerateTrainMode mode = parse_accelerate_train_mode(args->mode);
    check_option_set(*args, mode);
    return mode.trigger == SwitchTrigger::step ? run_step(*args, mode) : run_loss(*args, mode);
  };
}

} // namespace npucc::cli

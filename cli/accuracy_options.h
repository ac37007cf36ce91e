#pragma once

#include "npucc/compile.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace npucc::cli {

// The accuracy options of every command that compiles (npucc-compile(1), ACCURACY), kept in
// one place: when the options move to one table of settings, these become its rows.
struct AccuracyArgs {
  bool check_accuracy = false;
  std::vector<std::string> sample_inputs;
};

void add_accuracy_options(CLI::App& command, AccuracyArgs& args);

// --sample-inputs implies the check. Throws usage_error for an empty path.
void apply_accuracy_options(const AccuracyArgs& args, CompileOptions& options);

// The accuracy report under the compile summary, if the compile checked it.
void print_accuracy_summary(const CompileResult& result);

} // namespace npucc::cli

#pragma once

#include "npucc/compile.h"

#include <CLI/CLI.hpp>
#include <set>
#include <string>

namespace npucc::cli {

// The precision options of `npucc compile` (SPEC §1-2; npucc-precision(7)), kept in one
// place so every command that compiles (compile, cache populate) can take them.
struct PrecisionArgs {
  std::string accelerate_train_mode;
  std::string precision_mode;
  std::string precision_mode_v2;
  std::string modify_mixlist;
  std::string keep_dtype;
  bool keep_io_types = true;
  bool low_precision_weights = false;
  bool emit_emulation = false;
  std::set<std::string> empty_settings; // note_empty_value (config_options.h)
};

void add_precision_options(CLI::App& command, PrecisionArgs& args);

// Parses the values (accelerate_train_mode) and reads the files (--modify-mixlist contents,
// --keep-dtype names) into `options`; throws usage_error naming the option.
void apply_precision_options(const PrecisionArgs& args, CompileOptions& options);

// The short precision report under the compile summary.
void print_precision_summary(const CompileResult& result);

} // namespace npucc::cli

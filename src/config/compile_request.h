#pragma once

// The request builder (issue 28): option values by name -> settings and CompileOptions,
// for every front door. The CLI feeds it what CLI11 parsed, the Python module its
// keywords (npucc/compile_request.h), `populate --models` each table's keys; all of them
// go through the option table (config/option_table.h), so they accept the same names
// and raise the same one-line errors.

#include "npucc/compile.h"
#include "npucc/compile_request.h"
#include "npucc/config.h"

#include <vector>

namespace npucc::config {

// load_config() with the settings among `given` as command-line values (each under
// --NAME) and the --options file among them. Every name must be in the option table.
Config load_given_settings(const std::vector<OptionValue>& given,
                           const GetEnv& getenv = process_getenv);

// The compile options of `given` (the options that are not settings; a later value of a
// name wins) and `settings` (those that are), checked as a whole; model_path and
// output_dir are left empty.
CompileOptions build_compile_options(const std::vector<OptionValue>& given, const Config& settings);

} // namespace npucc::config

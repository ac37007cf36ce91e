#pragma once

// The options of the commands that compile or open a cache, registered from the option
// table (config/option_table.h). What CLI11 parses is kept as values by option name and
// handed to the request builder the Python module uses too (config/compile_request.h),
// so every front door takes the same names and gives the same errors.

#include "config/option_table.h"
#include "npucc/cache.h"
#include "npucc/compile.h"
#include "npucc/compile_request.h"
#include "npucc/config.h"

#include <CLI/CLI.hpp>
#include <initializer_list>
#include <string>
#include <vector>

namespace npucc::cli {

// The table's options a command line gave, in the order given (a later one wins).
using OptionValues = std::vector<OptionValue>;

// Registers the table's options of `groups`, in table order; each one given is appended
// to `values`. An option the command already has (--options) is not registered again.
void add_table_options(CLI::App& command, OptionValues& values,
                       std::initializer_list<config::OptionGroup> groups);

// The compile options of `compile`, `cache explain` and `cache populate` (they compute
// the same cache key for the same command line): --input-shape ... --options.
void add_compile_options(CLI::App& command, OptionValues& values);
// --cache-dir (alias --graph-compiler-cache-dir, Ascend's name), --read-only,
// --cache-shared, --cache-key-file and --options: every cache command's.
void add_cache_options(CLI::App& command, OptionValues& values);

// Everything `npucc compile` takes: MODEL, -o, the compile and cache options, --no-cache,
// --json, --force, --max-memory. `cache explain` registers the very same set, so a failing
// compile command explains itself with the word `compile` changed to `cache explain`.
struct CompileCommandArgs {
  std::string model;
  std::string output;
  OptionValues options;
  bool json = false;
  std::string accuracy_plot; // --accuracy-plot FILE.svg: implies --accuracy-report nodes; explain draws nothing
};
// compile: -o is required and --json prints the manifest; explain: -o is optional (it is
// never written) and --json prints the explanation.
enum class CompileCommand { compile, explain };
void add_compile_command_options(CLI::App& command, CompileCommandArgs& args, CompileCommand which);
// The compile a command line asks for (npucc::compile_request(), as Python's), its
// warnings printed.
CompileRequest make_compile_request(const CompileCommandArgs& args);

// The settings of a command from every source (npucc/config.h: the command line wins,
// then --options, NPUCC_* variables, config.toml and the defaults); its warnings are
// printed here, once.
Config load_settings(const OptionValues& values);
// The cache the options name (load_settings, then resolve_cache_config).
CacheConfig make_cache_config(const OptionValues& values);

} // namespace npucc::cli

#pragma once

// Command-line side of npucc/config.h: options that feed settings, and loading the
// configuration for a command (global --color, warnings printed unless --quiet).

#include "app.h"
#include "npucc/config.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace npucc::cli {

struct ConfigArgs {
  std::string options_file;                  // --options FILE
  std::map<std::string, std::string> values; // settings key -> value given on the command line
  std::set<std::string> empty_settings;      // keys whose option was given '' (below)
};

// Records `key` in `empty_settings` when the command line gives `option` an empty value:
// '' is not "not given" but "the default", over NPUCC_* variables and config files
// (CommandLineValue::given_empty). Returns `option`.
CLI::Option* note_empty_value(CLI::Option* option, std::set<std::string>& empty_settings,
                              const std::string& key);

// Adds `--options FILE` (Ascend option names in JSON).
void add_options_file_option(CLI::App& command, ConfigArgs& args);

// Adds the option of each listed setting (all when `keys` is empty) under its name and
// alias in the option table (config/option_table.h: cache.dir also answers to Ascend's
// --graph-compiler-cache-dir).
void add_setting_options(CLI::App& command, ConfigArgs& args,
                         const std::vector<std::string>& keys = {});

// The effective configuration for a command. `extra` holds values of options a command
// declares itself (e.g. {"cache.dir", args.cache_dir, "--cache-dir"}). Warnings go to
// stderr as "npucc: warning: ..." unless --quiet.
Config load_command_config(const GlobalOptions& global, const ConfigArgs& args,
                           const std::vector<CommandLineValue>& extra = {});

} // namespace npucc::cli

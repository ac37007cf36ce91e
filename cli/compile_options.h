#pragma once

#include "npucc/cache.h"
#include "npucc/compile.h"
#include "npucc/config.h"
#include "accuracy_options.h"
#include "precision_options.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <set>
#include <string>

namespace npucc::cli {

// The options that shape a compile's output, shared by `compile`, `cache explain` and
// `cache populate`, so all three compute the same cache key for the same command line.
struct CompileArgs {
  std::string input_shape;
  bool external_data = false;
  std::string passes;
  int64_t target_opset = 0;
  PrecisionArgs precision;
  AccuracyArgs accuracy;
  std::string options_file; // --options FILE (Ascend option names, JSON)
};

void add_compile_options(CLI::App& command, CompileArgs& args);
// Fills everything but model_path and output_dir.
CompileOptions make_compile_options(const CompileArgs& args);
// The same from settings already loaded (load_settings below).
CompileOptions make_compile_options(const CompileArgs& args, const Config& settings);

// --cache-dir (alias --graph-compiler-cache-dir, Ascend's name), --read-only,
// --cache-shared, --cache-key-file and, with MaxSizeOption::yes, --max-size.
struct CacheArgs {
  std::string dir;
  std::string max_size;
  bool read_only = false;   // --read-only
  std::string shared;       // --cache-shared
  std::string key_file;     // --cache-key-file
  std::string link_mode;    // --link-mode (add_link_mode_option)
  std::string digest_cache; // --digest-cache (add_digest_cache_option)
  std::string options_file; // --options FILE, shared with CompileArgs
  // add_remote_cache_options: --remote-cache and its options
  std::string remote;
  bool remote_read_only = false;
  std::string remote_connect_timeout;
  std::string remote_timeout;
  std::string remote_token_file; // paths of files that hold secrets (remote/credentials.h)
  std::string remote_credentials_file;
  std::string remote_ca_file;
  std::string remote_client_cert;
  std::string remote_client_key;
  std::set<std::string> empty_settings; // note_empty_value (config_options.h)
};
enum class MaxSizeOption { no, yes };
void add_cache_options(CLI::App& command, CacheArgs& args, MaxSizeOption max_size);
// --remote-cache URL, --remote-read-only, --remote-connect-timeout, --remote-timeout.
void add_remote_cache_options(CLI::App& command, CacheArgs& args);
// --link-mode: for the commands that deliver a cache entry into an output folder.
void add_link_mode_option(CLI::App& command, CacheArgs& args);
// --digest-cache: for the commands that compute keys of models in files.
void add_digest_cache_option(CLI::App& command, CacheArgs& args);
CacheConfig make_cache_config(const CacheArgs& args);

// Everything `npucc compile` takes: MODEL, -o, the compile and cache options, --no-cache,
// --json, --force, --max-memory. `cache explain` registers the very same set, so a failing
// compile command explains itself with the word `compile` changed to `cache explain`.
struct CompileCommandArgs {
  std::string model;
  std::string output;
  CompileArgs compile;
  CacheArgs cache;
  bool no_cache = false;
  bool json = false;
  bool force = false;
  std::string max_memory;
};
// compile: -o is required and --json prints the manifest; explain: -o is optional (it is
// never written) and --json prints the explanation.
enum class CompileCommand { compile, explain };
void add_compile_command_options(CLI::App& command, CompileCommandArgs& args, CompileCommand which);
// The options a compile of `args` runs with (model, output folder and limits included).
CompileOptions make_compile_options(const CompileCommandArgs& args, const Config& settings);

// The settings of a command from every source (npucc/config.h: the command line wins,
// then --options, NPUCC_* variables, config.toml and the defaults), with the values of
// the given flags; its warnings are printed here. A command that compiles through the
// cache loads them once, for both (a warning is then printed once).
Config load_settings(const CompileArgs* compile, const CacheArgs* cache);

} // namespace npucc::cli

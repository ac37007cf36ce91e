#pragma once

// The one table of npucc's options (issue 28): every option of `compile`, `cache explain`,
// `cache populate` and the other cache commands, and every setting (config.toml key,
// NPUCC_* variable, Ascend options-file key). Everything that names an option reads it
// from here: the CLI's CLI11 registration (cli/compile_options.cpp), settings_table(),
// the request builder both the CLI and Python go through (config/compile_request.h),
// the keys of `populate --models`, the Python keywords (compile_option_names()) and so
// completion. Adding a compile option is one row here, with its key declaration (below),
// and the code that reads its CompileOptions field (and canonical_options, when keyed).

#include "npucc/compile.h"
#include "npucc/config.h"

#include <string>
#include <utility>
#include <vector>

namespace npucc::config {

// How a value follows the option on a command line.
enum class OptionArity {
  text,           // --name VALUE
  integer,        // --name N
  flag,           // --name (true)
  negatable_flag, // --name / --no-name
  repeated,       // --name VALUE..., as often as wanted: every value counts, in order
};

// What a text option's value is, for the front doors that type it (Python's annotations
// and conversions, `populate --models` paths).
enum class OptionValueType {
  text,
  path,       // a file or folder: a relative one in --models is taken from its folder
  size,       // "10G", "512M" (Python also takes a number of bytes)
  seconds,    // "2", "0.5" (Python also takes a number)
  train_mode, // TYPE|TRIGGER[|RATIO] (Python also takes an AccelerateTrainMode)
  names,      // NAME,NAME,... (Python also takes a sequence)
  shapes,     // NAME:D0,D1;... (Python also takes {NAME: [D0, D1]})
  paths,      // a repeated option's files (Python also takes a sequence)
  samples,    // --sample-inputs: paths as `paths` (Python also takes arrays, {NAME: array})
};

// The sets of options a command registers (cli::add_table_options), each in table order.
enum class OptionGroup {
  global,       // a setting whose option is a global one (--color): registered by app.cpp
  compile,      // shapes a compile's output: compile, explain, populate and --models keys
  options_file, // --options FILE (Ascend names), every command that reads settings
  cache,        // every cache command: where the cache is and how it may be used
  max_size,     // the commands that store: compile, explain, populate
  link_mode,    // the commands that deliver an entry into an output folder
  digest_cache, // the commands that compute keys of models in files
  remote,       // the remote tier
  no_cache,     // compile and explain
  output,       // compile and explain: how the output folder is written, the memory limit
};

// How a row's value enters the cache key (issue 46): every row declares it, in the table
// itself (OptionRow has no constructor without one, so a row without it does not
// compile), and tests/unit/test_key_completeness.cpp holds the key to it: a keyed row
// varied changes the key, a row not keyed does not.
enum class KeyRole {
  value,       // its value, as canonical_options() writes it (key/canonical_options.cpp)
  file_digest, // the content of the files it names, not their paths
  not_keyed,   // no byte of a stored file depends on it: KeyDeclaration::reason says why
};
// The only reasons a row may stay out of the key.
enum class NotKeyedReason {
  none,          // keyed
  schedule_only, // when training switches graphs, not what either graph holds
  output_only,   // how the output folder or the terminal is written, not what is stored
  cache_only,    // where and how the cache is used, not what an entry holds
  limit_only,    // a resource limit: it refuses a compile or lets it run as it would
  settings_file, // a file of other rows' settings, each keyed as its own row declares
};
struct KeyDeclaration {
  KeyRole role;
  NotKeyedReason reason;
  std::string why; // for a row not keyed: what it changes instead
};
// The three declarations a row may make.
KeyDeclaration keyed_by_value();
KeyDeclaration keyed_by_file_digest();
KeyDeclaration not_keyed(NotKeyedReason reason, std::string why);
const char* not_keyed_reason_name(NotKeyedReason reason);

struct OptionRow;
// Puts a row's value (the text given, or its setting's effective value; never "" but for
// a repeated option, whose every value is put, in order) into `options`; throws
// usage_error naming the option, as the CLI always has.
using ApplyOption = void (*)(const OptionRow& row, const std::string& text,
                             CompileOptions& options);

struct OptionRow {
  explicit OptionRow(KeyDeclaration key_) : key(std::move(key_)) {}
  std::string name;  // "accelerate-train-mode": --NAME; Python keyword and --models key: '-' -> '_'
  std::string alias; // another spelling ("graph-compiler-cache-dir"); "" = none
  OptionGroup group = OptionGroup::compile;
  OptionArity arity = OptionArity::text;
  std::string help; // the --help line
  OptionValueType value = OptionValueType::text;
  std::string list_separator; // a list in one string (";"): a --models key also takes an array
  // The setting behind the option (config.toml key, NPUCC_* variable, Ascend key, check,
  // `config show` line); key "" = the option is not a setting.
  SettingInfo setting;
  ApplyOption apply = nullptr; // nullptr: read elsewhere (the cache settings: CacheConfig)
  KeyDeclaration key;          // how the value enters the cache key
};

const std::vector<OptionRow>& option_table();

// The row of --NAME; nullptr when there is none.
const OptionRow* find_option(const std::string& name);

bool is_setting(const OptionRow& row);
// "--accelerate-train-mode".
std::string option_spelling(const OptionRow& row);
// "accelerate_train_mode": the Python keyword and the `populate --models` key.
std::string option_key(const OptionRow& row);
// "flag", "integer", or the OptionValueType's name ("path", "shapes", ...).
std::string value_type_name(const OptionRow& row);

} // namespace npucc::config

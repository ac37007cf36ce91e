#pragma once

// npucc's settings and where each one comes from. Sources, highest precedence first:
//
//   1. the command line               (--cache-dir, --precision-mode, ...)
//   2. an Ascend options file         (--options FILE: JSON with Ascend's key names)
//   3. NPUCC_* environment variables  (NPUCC_CACHE_DIR, NPUCC_PRECISION_MODE, ...)
//   4. the config file                ($NPUCC_CONFIG, else
//                                      ${XDG_CONFIG_HOME:-~/.config}/npucc/config.toml)
//   5. built-in defaults
//
// Every value is validated where it is read, and an error names its source ("FILE:LINE",
// the variable, the options-file key or the option), so a bad default in a file read
// months ago is not reported as if the user had just typed it.

#include "npucc/cache_config.h"
#include "npucc/setting_source.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npucc {


// "default", "config file", "environment", "options file", "command line".
const char* setting_source_name(SettingSource source);

enum class SettingKind {
  text,           // any string
  path,           // a file or folder; "~/" expanded, relative ones taken from their file's folder
  size,           // "10G", "512MiB", "4096" bytes; "" or "0" = unbounded
  boolean,        // true / false (environment: 1/0, yes/no, true/false, on/off)
  choice,         // one of SettingInfo::choices
  train_mode,     // accelerate_train_mode: "TYPE|TRIGGER[|RATIO]"
  precision_mode, // Ascend precision_mode values (validated by npucc/train_mode.h)
  precision_mode_v2, // Ascend precision_mode_v2 values
  remote_url,        // http://host:port/path or redis://host:port/db
  seconds,           // a positive number of seconds ("2", "0.5")
};

// One row of the settings table: the one place a setting's names live.
struct SettingInfo {
  std::string key;         // config-file key: "cache.dir" is `dir` in the [cache] table
  std::string environment; // "NPUCC_CACHE_DIR"
  std::string option;      // "--cache-dir"
  std::string ascend_key;  // options-file key ("graph_compiler_cache_dir"); "" = none
  SettingKind kind = SettingKind::text;
  std::vector<std::string> choices; // SettingKind::choice ("" allowed = unset)
  std::string description;
};

const std::vector<SettingInfo>& settings_table();
// The row for `key`; throws npucc::Error on an unknown key (a programming error).
const SettingInfo& setting_info(std::string_view key);

struct Setting {
  std::string value; // canonical text; "" = not set
  SettingSource source = SettingSource::built_in;
  // Where exactly: "/home/u/.config/npucc/config.toml:3", "NPUCC_CACHE_DIR",
  // "opts.json: graph_compiler_cache_dir", "--cache-dir"; "" for built-in defaults.
  std::string origin;

  bool is_set() const { return !value.empty(); }
  // "command line (--cache-dir)", "default".
  std::string describe_source() const;
};

// A value typed on the command line for one setting.
struct CommandLineValue {
  std::string key;    // settings-table key, e.g. "cache.dir"
  std::string value;  // "" is ignored unless given_empty (the option was not given)
  std::string option; // as the user spelled it, e.g. "--graph-compiler-cache-dir"
  // The option was given an empty value (--accelerate-train-mode ''): the setting goes
  // back to its built-in default over every other source, so one command can turn off
  // what NPUCC_* or config.toml set. cache.dir refuses it (usage_error).
  bool given_empty = false;
};

using GetEnv = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment.
std::optional<std::string> process_getenv(const std::string& name);

struct ConfigSources {
  std::vector<CommandLineValue> command_line;
  std::filesystem::path options_file; // --options FILE; empty: none
  GetEnv getenv = process_getenv;     // tests pass their own environment
};

class Config {
public:
  const Setting& get(std::string_view key) const;
  const std::string& value(std::string_view key) const { return get(key).value; }
  void set(std::string_view key, Setting setting);

  // The config file consulted, and whether it existed.
  std::filesystem::path config_file;
  bool config_file_found = false;
  // Things worth telling the user that are not errors (Ascend keys npucc ignores, ...).
  std::vector<std::string> warnings;

  // Typed views of the common settings.
  std::filesystem::path cache_dir() const;
  bool cache_dir_is_default() const { return get("cache.dir").source == SettingSource::built_in; }
  std::optional<uint64_t> cache_max_size() const; // nullopt: unbounded
  bool cache_disabled() const;
  bool cache_read_only() const;
  // cache.remote and its options; an empty url when there is no remote tier.
  RemoteCacheConfig remote_cache() const;

private:
  std::map<std::string, Setting, std::less<>> m_settings;
};

// Reads every source (environment, config file, options file) and applies the command
// line. Throws npucc::Error (exit 1) for a broken file and npucc::usage_error (exit 2) for
// a bad value, naming the source.
Config load_config(const ConfigSources& sources);

// $NPUCC_CONFIG, else $XDG_CONFIG_HOME/npucc/config.toml, else ~/.config/npucc/config.toml.
std::filesystem::path config_file_path(const GetEnv& getenv);

// Parses "10G", "512M", "1.5GiB", "4096" (bytes): K/M/G/T and Ki/Mi/Gi/Ti are powers of
// 1024, KB/MB/GB/TB powers of 1000, the rule of every size npucc reads (src/util/size.h).
// Throws usage_error naming `where`.
uint64_t parse_size_setting(const std::string& text, const std::string& where);

// The cache settings of `config` (every source, npucc/config.h has the order), with the
// source of each kept for messages. Throws usage_error naming the source of a bad value.
CacheConfig resolve_cache_config(const Config& config);

} // namespace npucc

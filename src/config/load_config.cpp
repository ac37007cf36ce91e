// The layers of npucc's configuration, applied lowest precedence first so that each
// later layer simply overwrites (npucc/config.h has the order).
#include "config/options_file.h"
#include "config/toml_subset.h"
#include "config/value.h"
#include "npucc/config.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <charconv>
#include <system_error>

namespace npucc {

namespace fs = std::filesystem;

namespace {

// 2.0 as "2", 0.5 as "0.5": the shortest text that reads back as the same number.
std::string seconds_text(double seconds) {
  char text[32];
  auto result = std::to_chars(text, text + sizeof text, seconds);
  return std::string(text, result.ptr);
}

void apply_defaults(Config& config, const GetEnv& getenv) {
  // Every boolean is false unless set: `config show` says so rather than "(unset)".
  for (const auto& info : settings_table()) {
    config.set(info.key, info.kind == SettingKind::boolean
                             ? Setting{"false", SettingSource::built_in, ""}
                             : Setting{});
  }
  config.set("cache.shared", Setting{"auto", SettingSource::built_in, ""});
  config.set("cache.link_mode", Setting{"auto", SettingSource::built_in, ""}); // CacheConfig's
  config.set("cache.digest_cache", Setting{"auto", SettingSource::built_in, ""});
  config.set("color", Setting{"auto", SettingSource::built_in, ""});
  // The remote timeouts' defaults are RemoteCacheConfig's, shown by `config show` as such.
  const RemoteCacheConfig remote;
  config.set("cache.remote_connect_timeout",
             Setting{seconds_text(remote.connect_timeout), SettingSource::built_in, ""});
  config.set("cache.remote_timeout",
             Setting{seconds_text(remote.timeout), SettingSource::built_in, ""});
  // The XDG base directory rule: $XDG_CACHE_HOME only when absolute.
  auto xdg = getenv("XDG_CACHE_HOME");
  auto home = getenv("HOME");
  fs::path base;
  if (xdg && fs::path(*xdg).is_absolute()) {
    base = *xdg;
  } else if (home && !home->empty()) {
    base = fs::path(*home) / ".cache";
  }
  if (!base.empty()) {
    config.set("cache.dir",
               Setting{(base / "npucc").lexically_normal().string(), SettingSource::built_in, ""});
  }
}

std::string toml_type_wanted(SettingKind kind) {
  switch (kind) {
  case SettingKind::boolean:
    return "a boolean (true or false)";
  case SettingKind::size:
    return "a size (\"10G\") or a number of bytes";
  default:
    return "a string";
  }
}

void apply_config_file(Config& config, const GetEnv& getenv) {
  config.config_file = config_file_path(getenv);
  std::error_code error;
  bool explicit_path = getenv("NPUCC_CONFIG").has_value();
  if (!fs::exists(config.config_file, error)) {
    if (explicit_path) {
      throw Error("NPUCC_CONFIG names " + config.config_file.string() + ", which does not exist",
                  "create the file or unset NPUCC_CONFIG");
    }
    return;
  }
  config.config_file_found = true;
  const std::string name = config.config_file.string();
  std::vector<std::string> keys;
  for (const auto& info : settings_table()) {
    keys.push_back(info.key);
  }
  for (const auto& entry : config::parse_toml_subset(util::read_file(config.config_file), name)) {
    const std::string where = name + ":" + std::to_string(entry.line);
    const SettingInfo* info = nullptr;
    for (const auto& row : settings_table()) {
      if (row.key == entry.key) {
        info = &row;
      }
    }
    if (info == nullptr) {
      std::string match = util::closest_match(entry.key, keys);
      throw usage_error(where + ": unknown setting \"" + entry.key + "\"",
                        match.empty() ? "settings: " + util::join(keys, ", ")
                                      : "did you mean \"" + match + "\"?");
    }
    bool type_ok = entry.type == config::TomlType::string ||
                   (entry.type == config::TomlType::integer &&
                    (info->kind == SettingKind::size || info->kind == SettingKind::seconds));
    if (info->kind == SettingKind::boolean) {
      type_ok = entry.type == config::TomlType::boolean;
    }
    if (!type_ok) {
      throw usage_error(where + ": " + entry.key + " must be " + toml_type_wanted(info->kind) +
                        ", not " + config::toml_type_name(entry.type));
    }
    std::string value =
        config::check_value(*info, entry.value, where, config.config_file.parent_path(), getenv);
    config.set(info->key, Setting{value, SettingSource::config_file, where});
  }
}

void apply_environment(Config& config, const GetEnv& getenv) {
  // https://no-color.org: a non-empty NO_COLOR turns colour off unless asked for.
  auto no_color = getenv("NO_COLOR");
  if (no_color && !no_color->empty()) {
    config.set("color", Setting{"never", SettingSource::environment, "NO_COLOR"});
  }
  for (const auto& info : settings_table()) {
    auto raw = getenv(info.environment);
    if (!raw || raw->empty()) {
      continue; // an empty variable is how shells unset a value for one command
    }
    std::string value = config::check_value(info, *raw, info.environment, {}, getenv);
    config.set(info.key, Setting{value, SettingSource::environment, info.environment});
  }
}

// A file an options file names (modify_mixlist): inside the options file's folder once
// every link is resolved, a regular file of at most 1 MiB. An options file may come from a
// repository on CI: it must not make npucc read, and print, a file from elsewhere (a key),
// nor wait on a FIFO. The error names the option and the file, never the contents.
void check_named_file(const fs::path& options_file, const std::string& ascend_key,
                      const std::string& value) {
  const fs::path folder = options_file.parent_path().empty() ? fs::path(".")
                                                             : options_file.parent_path();
  auto refuse = [&](const std::string& why) {
    throw usage_error(options_file.string() + ": " + ascend_key + " \"" +
                          util::cut_for_message(value) + "\"" + why,
                      "keep the file in " + folder.string() + " and name it relative to it");
  };
  fs::path relative = fs::path(value).lexically_normal();
  if (relative.is_absolute() || relative.empty() || *relative.begin() == ".." || value[0] == '~') {
    refuse(" is not inside " + folder.string() + ", the options file's folder");
  }
  std::error_code ec;
  fs::path real = fs::canonical(folder / relative, ec);
  if (ec) {
    return; // missing: the compile says so, naming the option
  }
  fs::path within = real.lexically_relative(fs::canonical(folder, ec));
  if (ec || within.empty() || *within.begin() == "..") {
    refuse(" leads outside " + folder.string() + " (through a symlink)");
  }
  if (!fs::is_regular_file(real, ec) || fs::file_size(real, ec) > (uint64_t{1} << 20)) {
    refuse(": not a regular file of at most 1 MiB");
  }
}

void apply_options_file(Config& config, const fs::path& file, const GetEnv& getenv) {
  config::OptionsFile options = config::read_options_file(file);
  config.warnings.insert(config.warnings.end(), options.warnings.begin(), options.warnings.end());
  for (const auto& item : options.values) {
    if (util::trim(item.value).empty()) {
      continue; // Ascend's default for every option: not set
    }
    const std::string where = file.string() + ": " + item.ascend_key;
    // The cache folder decides what a compile trusts and where it writes. An options file
    // often comes with the checkout (a pull request's options.json), the environment with
    // the job: the environment's folder wins, as ccache's environment beats its files.
    if (item.key == "cache.dir" && config.get(item.key).source == SettingSource::environment) {
      config.warnings.push_back(where + " ignored: " + config.get(item.key).origin +
                                " is set, and the environment chooses the cache folder");
      continue;
    }
    if (item.key == "modify_mixlist") {
      check_named_file(file, item.ascend_key, item.value);
    }
    std::string value =
        config::check_value(setting_info(item.key), item.value, where, file.parent_path(), getenv);
    config.set(item.key, Setting{value, SettingSource::options_file, where});
  }
}

// An empty value on the command line: the built-in default, whatever the other sources
// say. An empty cache folder is refused: it would silently mean ~/.cache/npucc.
void reset_to_default(Config& config, const SettingInfo& info, const std::string& option,
                      const GetEnv& getenv) {
  if (info.key == "cache.dir") {
    throw usage_error(option + " '': the cache folder is empty",
                      "give a folder, or leave " + option + " out to use " + info.environment +
                          ", config.toml's cache.dir or ~/.cache/npucc");
  }
  Config defaults;
  apply_defaults(defaults, getenv);
  Setting setting = defaults.get(info.key);
  setting.source = SettingSource::command_line;
  setting.origin = option;
  config.set(info.key, setting);
}

void apply_command_line(Config& config, const std::vector<CommandLineValue>& values,
                        const GetEnv& getenv) {
  for (const auto& item : values) {
    const SettingInfo& info = setting_info(item.key);
    if (item.value.empty() && !item.given_empty) {
      continue;
    }
    std::string option = item.option.empty() ? info.option : item.option;
    std::string value = config::check_value(info, item.value, option, {}, getenv);
    if (value.empty()) {
      reset_to_default(config, info, option, getenv);
      continue;
    }
    config.set(item.key, Setting{value, SettingSource::command_line, option});
  }
}

} // namespace

fs::path config_file_path(const GetEnv& getenv) {
  auto explicit_path = getenv("NPUCC_CONFIG");
  if (explicit_path && !explicit_path->empty()) {
    return *explicit_path;
  }
  auto xdg = getenv("XDG_CONFIG_HOME");
  if (xdg && fs::path(*xdg).is_absolute()) {
    return fs::path(*xdg) / "npucc" / "config.toml";
  }
  auto home = getenv("HOME");
  return fs::path(home ? *home : std::string()) / ".config" / "npucc" / "config.toml";
}

Config load_config(const ConfigSources& sources) {
  const GetEnv& getenv = sources.getenv ? sources.getenv : GetEnv(process_getenv);
  Config config;
  apply_defaults(config, getenv);
  apply_config_file(config, getenv);
  apply_environment(config, getenv);
  if (!sources.options_file.empty()) {
    apply_options_file(config, sources.options_file, getenv);
  }
  apply_command_line(config, sources.command_line, getenv);
  return config;
}

} // namespace npucc

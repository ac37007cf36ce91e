#include "config/option_table.h"
#include "npucc/config.h"
#include "npucc/error.h"

#include <cstdlib>

namespace npucc {

const char* setting_source_name(SettingSource source) {
  switch (source) {
  case SettingSource::built_in:
    return "default";
  case SettingSource::config_file:
    return "config file";
  case SettingSource::environment:
    return "environment";
  case SettingSource::options_file:
    return "options file";
  case SettingSource::command_line:
    return "command line";
  }
  return "?";
}

std::string Setting::describe_source() const {
  std::string name = setting_source_name(source);
  return origin.empty() ? name : name + " (" + origin + ")";
}

// The rows of the option table (config/option_table.h) that are settings, in its order.
const std::vector<SettingInfo>& settings_table() {
  static const std::vector<SettingInfo> table = [] {
    std::vector<SettingInfo> settings;
    for (const auto& row : config::option_table()) {
      if (config::is_setting(row)) {
        settings.push_back(row.setting);
      }
    }
    return settings;
  }();
  return table;
}

const SettingInfo& setting_info(std::string_view key) {
  for (const auto& info : settings_table()) {
    if (info.key == key) {
      return info;
    }
  }
  throw Error("internal error: unknown setting \"" + std::string(key) + "\"");
}

std::optional<std::string> process_getenv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) {
    return std::nullopt;
  }
  return std::string(value);
}

const Setting& Config::get(std::string_view key) const {
  auto found = m_settings.find(key);
  if (found == m_settings.end()) {
    setting_info(key); // throws for a key that is not in the table
    static const Setting empty;
    return empty;
  }
  return found->second;
}

void Config::set(std::string_view key, Setting setting) {
  setting_info(key);
  m_settings[std::string(key)] = std::move(setting);
}

std::filesystem::path Config::cache_dir() const {
  return value("cache.dir");
}

std::optional<uint64_t> Config::cache_max_size() const {
  const Setting& setting = get("cache.max_size");
  if (!setting.is_set()) {
    return std::nullopt;
  }
  uint64_t bytes =
      parse_size_setting(setting.value, setting.origin.empty() ? "cache.max_size" : setting.origin);
  if (bytes == 0) {
    return std::nullopt;
  }
  return bytes;
}

bool Config::cache_disabled() const {
  return value("cache.disable") == "true";
}

bool Config::cache_read_only() const {
  return value("cache.read_only") == "true";
}

RemoteCacheConfig Config::remote_cache() const {
  RemoteCacheConfig remote;
  remote.url = value("cache.remote");
  remote.read_only = value("cache.remote_read_only") == "true";
  if (get("cache.remote_connect_timeout").is_set()) {
    remote.connect_timeout = std::stod(value("cache.remote_connect_timeout"));
  }
  if (get("cache.remote_timeout").is_set()) {
    remote.timeout = std::stod(value("cache.remote_timeout"));
  }
  remote.token_file = value("remote.token_file");
  remote.credentials_file = value("remote.credentials_file");
  remote.ca_file = value("remote.ca_file");
  remote.client_cert = value("remote.client_cert");
  remote.client_key = value("remote.client_key");
  return remote;
}

} // namespace npucc

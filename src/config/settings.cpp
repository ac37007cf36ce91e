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

const std::vector<SettingInfo>& settings_table() {
  static const std::vector<SettingInfo> table = {
      {"cache.dir",
       "NPUCC_CACHE_DIR",
       "--cache-dir",
       "graph_compiler_cache_dir",
       SettingKind::path,
       {},
       "the compile cache folder"},
      {"cache.max_size",
       "NPUCC_CACHE_MAX_SIZE",
       "--max-size",
       "",
       SettingKind::size,
       {},
       "evict least recently used entries past this size (10G, 512M: powers of 1024; 10GB: "
       "powers of 1000; empty or 0: unbounded)"},
      {"cache.disable",
       "NPUCC_CACHE_DISABLE",
       "--no-cache",
       "",
       SettingKind::boolean,
       {},
       "compile without reading or writing the cache"},
      {"cache.read_only",
       "NPUCC_CACHE_READ_ONLY",
       "--read-only",
       "",
       SettingKind::boolean,
       {},
       "use cache hits but write nothing to the cache (misses are compiled, not stored)"},
      {"cache.shared",
       "NPUCC_CACHE_SHARED",
       "--cache-shared",
       "",
       SettingKind::choice,
       {"auto", "no", "group", "world"},
       "who may use the entries written: no (private: folders 0700), group (folders 02770), "
       "world (readable by all: 0755), auto (group when the cache folder is setgid and "
       "group-writable, else no)"},
      {"cache.link_mode",
       "NPUCC_CACHE_LINK_MODE",
       "--link-mode",
       "",
       SettingKind::choice,
       {"auto", "copy", "hardlink"},
       "how a hit's outputs share the entry's files: copy (each output your own file), "
       "hardlink (fastest; an output edited in place edits the entry) or auto (copies, but "
       "hard links to entry files you cannot change: another user's)"},
      {"cache.digest_cache",
       "NPUCC_DIGEST_CACHE",
       "--digest-cache",
       "",
       SettingKind::choice,
       {"auto", "on", "off"},
       "whether a compile trusts the digests recorded beside its input files' inode, size "
       "and times, so an unchanged model is not read again: auto (on local disk file "
       "systems, not NFS, SMB, FUSE), on (everywhere) or off (hash every input each time)"},
      {"cache.key_file",
       "NPUCC_CACHE_KEY_FILE",
       "--cache-key-file",
       "",
       SettingKind::path,
       {},
       "sign entries with HMAC-SHA-256 under this key and reject entries without a valid "
       "signature"},
      {"cache.remote",
       "NPUCC_REMOTE_CACHE",
       "--remote-cache",
       "",
       SettingKind::remote_url,
       {},
       "a shared remote cache: http://host:port/path or redis://host:port/db"},
      {"cache.remote_read_only",
       "NPUCC_REMOTE_CACHE_READ_ONLY",
       "--remote-read-only",
       "",
       SettingKind::boolean,
       {},
       "read the remote cache but upload nothing to it"},
      {"cache.remote_connect_timeout",
       "NPUCC_REMOTE_CACHE_CONNECT_TIMEOUT",
       "--remote-connect-timeout",
       "",
       SettingKind::seconds,
       {},
       "seconds to wait for the remote cache to accept a connection (default 2)"},
      {"cache.remote_timeout",
       "NPUCC_REMOTE_CACHE_TIMEOUT",
       "--remote-timeout",
       "",
       SettingKind::seconds,
       {},
       "seconds without progress before a remote transfer is abandoned (default 5)"},
      {"remote.token_file",
       "NPUCC_REMOTE_TOKEN_FILE",
       "--remote-token-file",
       "",
       SettingKind::path,
       {},
       "a file whose first line is the remote cache's secret: an HTTP bearer token, or a Redis "
       "password"},
      {"remote.credentials_file",
       "NPUCC_REMOTE_CREDENTIALS_FILE",
       "--remote-credentials-file",
       "",
       SettingKind::path,
       {},
       "a file whose first line is USER:PASSWORD: HTTP basic authentication, or a Redis ACL user"},
      {"remote.ca_file",
       "NPUCC_REMOTE_CA_FILE",
       "--remote-ca-file",
       "",
       SettingKind::path,
       {},
       "PEM certificates to trust for an https:// remote cache (instead of the system's)"},
      {"remote.client_cert",
       "NPUCC_REMOTE_CLIENT_CERT",
       "--remote-client-cert",
       "",
       SettingKind::path,
       {},
       "a PEM client certificate for an https:// remote cache"},
      {"remote.client_key",
       "NPUCC_REMOTE_CLIENT_KEY",
       "--remote-client-key",
       "",
       SettingKind::path,
       {},
       "the PEM private key of --remote-client-cert"},
      {"accelerate_train_mode",
       "NPUCC_ACCELERATE_TRAIN_MODE",
       "--accelerate-train-mode",
       "accelerate_train_mode",
       SettingKind::train_mode,
       {},
       "emit paired high/low precision graphs: TYPE|TRIGGER[|RATIO]"},
      {"precision_mode",
       "NPUCC_PRECISION_MODE",
       "--precision-mode",
       "precision_mode",
       SettingKind::precision_mode,
       {},
       "Ascend precision_mode"},
      {"precision_mode_v2",
       "NPUCC_PRECISION_MODE_V2",
       "--precision-mode-v2",
       "precision_mode_v2",
       SettingKind::precision_mode_v2,
       {},
       "Ascend precision_mode_v2"},
      {"modify_mixlist",
       "NPUCC_MODIFY_MIXLIST",
       "--modify-mixlist",
       "modify_mixlist",
       SettingKind::path,
       {},
       "JSON file editing the mixed-precision op lists"},
      {"color",
       "NPUCC_COLOR",
       "--color",
       "",
       SettingKind::choice,
       {"never", "auto", "always"},
       "colour on a terminal (NO_COLOR in the environment means never)"},
  };
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

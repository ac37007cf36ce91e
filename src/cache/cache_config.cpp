#include "cache/file_ops.h"
#include "npucc/cache.h"
#include "npucc/config.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <cstdlib>

namespace npucc {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_cachedir_tag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by npucc.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n";

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// The layout folders and the tag; safe to run concurrently and on an existing cache.
void create_layout(const fs::path& dir) {
  for (const char* sub : {"entries", "tmp", "lock", "models"}) {
    cache::ensure_real_directory(dir / sub);
  }
  if (cache::path_kind(dir / "CACHEDIR.TAG") == cache::PathKind::missing) {
    util::write_file_atomic(dir / "CACHEDIR.TAG", k_cachedir_tag);
  }
}

} // namespace

const char* outcome_name(CacheOutcome outcome) {
  switch (outcome) {
  case CacheOutcome::hit:
    return "hit";
  case CacheOutcome::miss:
    return "miss";
  case CacheOutcome::bypass:
    return "bypass";
  case CacheOutcome::disabled:
    return "disabled";
  }
  return "disabled";
}

int64_t parse_age(const std::string& text) {
  std::string value(util::trim(text));
  int64_t amount = 0;
  int64_t unit = 0;
  if (!value.empty()) {
    switch (value.back()) {
    case 'd':
      unit = 86400;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'm':
      unit = 60;
      break;
    case 's':
      unit = 1;
      break;
    default:
      break;
    }
  }
  if (unit == 0 || !util::parse_int64(value.substr(0, value.size() - 1), amount) || amount < 0 ||
      amount > int64_t{1} << 40) {
    throw usage_error("invalid age \"" + text + "\"",
                      "write a number and a unit: 7d, 12h, 30m, 45s");
  }
  return amount * unit;
}

CacheConfig resolve_cache_config(const std::string& dir_option,
                                 const std::string& max_size_option) {
  CacheConfig config;
  if (!dir_option.empty()) {
    config.dir = dir_option;
    config.source = CacheDirSource::option;
  } else if (!environment("NPUCC_CACHE_DIR").empty()) {
    config.dir = environment("NPUCC_CACHE_DIR");
    config.source = CacheDirSource::environment;
  } else {
    std::string base = environment("XDG_CACHE_HOME");
    if (base.empty()) {
      std::string home = environment("HOME");
      if (home.empty()) {
        throw Error("cannot find a cache folder: neither XDG_CACHE_HOME nor HOME is set",
                    "pass --cache-dir DIR or set NPUCC_CACHE_DIR");
      }
      base = home + "/.cache";
    }
    config.dir = fs::path(base) / "npucc";
    config.source = CacheDirSource::default_location;
  }
  std::string max_size =
      max_size_option.empty() ? environment("NPUCC_CACHE_MAX_SIZE") : max_size_option;
  if (!max_size.empty()) {
    config.max_size = parse_size_setting(
        max_size, max_size_option.empty() ? "NPUCC_CACHE_MAX_SIZE" : "--max-size");
  }
  return config;
}

fs::path open_cache_dir(const CacheConfig& config) {
  std::error_code ec;
  fs::path dir = config.dir;
  if (config.source == CacheDirSource::default_location) {
    fs::create_directories(dir, ec);
    if (ec) {
      throw Error(dir.string() + ": cannot create the default cache folder: " + ec.message(),
                  "pass --cache-dir DIR, set NPUCC_CACHE_DIR, or --no-cache");
    }
  } else if (!fs::is_directory(dir, ec)) {
    std::string from = config.source == CacheDirSource::option ? "--cache-dir" : "NPUCC_CACHE_DIR";
    throw Error(dir.string() + ": the cache folder (" + from + ") " +
                    (fs::exists(dir, ec) ? "is not a folder" : "does not exist"),
                "create it with `npucc cache init " + dir.string() +
                    "` (or mkdir -p), or pass "
                    "--no-cache");
  }
  // The root itself may be a symlink the user chose; inside it, nothing is followed.
  dir = fs::canonical(dir, ec);
  if (ec) {
    throw Error(config.dir.string() + ": cannot open the cache folder: " + ec.message());
  }
  create_layout(dir);
  return dir;
}

void init_cache_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    throw Error(dir.string() + ": cannot create the cache folder" +
                (ec ? ": " + ec.message() : std::string()));
  }
  create_layout(fs::canonical(dir));
}

} // namespace npucc

#include "cache/file_ops.h"
#include "cache/local_storage.h"
#include "npucc/cache_config.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace npucc {

namespace fs = std::filesystem;

namespace {

void create_layout(const fs::path& dir, CacheSharing sharing) {
  cache::LocalStorage(dir, CacheAccess::read_write, sharing).create_layout();
}

} // namespace

const char* cache_sharing_name(CacheSharing sharing) {
  switch (sharing) {
  case CacheSharing::automatic:
    return "auto";
  case CacheSharing::none:
    return "no";
  case CacheSharing::group:
    return "group";
  case CacheSharing::world:
    return "world";
  }
  return "auto";
}

CacheSharing parse_cache_sharing(const std::string& text, const std::string& where) {
  for (CacheSharing sharing :
       {CacheSharing::automatic, CacheSharing::none, CacheSharing::group, CacheSharing::world}) {
    if (text == cache_sharing_name(sharing)) {
      return sharing;
    }
  }
  throw usage_error(where + ": \"" + text + "\" is not a cache sharing mode",
                    "use auto, no, group or world");
}

const char* link_mode_name(LinkMode mode) {
  switch (mode) {
  case LinkMode::automatic:
    return "auto";
  case LinkMode::copy:
    return "copy";
  case LinkMode::hardlink:
    return "hardlink";
  }
  return "auto";
}

LinkMode parse_link_mode(const std::string& text, const std::string& where) {
  for (LinkMode mode : {LinkMode::automatic, LinkMode::copy, LinkMode::hardlink}) {
    if (text == link_mode_name(mode)) {
      return mode;
    }
  }
  throw usage_error(where + ": \"" + text + "\" is not a link mode", "use auto, copy or hardlink");
}

const char* digest_cache_mode_name(DigestCacheMode mode) {
  switch (mode) {
  case DigestCacheMode::automatic:
    return "auto";
  case DigestCacheMode::on:
    return "on";
  case DigestCacheMode::off:
    return "off";
  }
  return "auto";
}

DigestCacheMode parse_digest_cache_mode(const std::string& text, const std::string& where) {
  for (DigestCacheMode mode :
       {DigestCacheMode::automatic, DigestCacheMode::on, DigestCacheMode::off}) {
    if (text == digest_cache_mode_name(mode)) {
      return mode;
    }
  }
  throw usage_error(where + ": \"" + text + "\" is not a digest cache mode", "use auto, on or off");
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

namespace {

// A folder with other contents: no hint leads to `cache init`, which refuses it too.
Error not_a_cache(const fs::path& dir, const std::string& source) {
  // The message carries the fix, and npucc writes nothing into such a folder.
  return Error("not an npucc cache: " + dir.string() + " (it is not empty and npucc did not " +
               "make it a cache; point " + source + " at a new or empty folder)");
}

bool is_empty_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec) && !ec;
}

// A folder npucc may make into a cache: missing, or an empty folder.
bool missing_or_empty(const fs::path& dir) {
  std::error_code ec;
  if (cache::path_kind(dir) == cache::PathKind::missing) {
    return true;
  }
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec) && !ec;
}

std::string source_name(const CacheConfig& config) {
  return config.dir_origin.empty() ? "default" : config.dir_origin;
}

// What names the cache folder, for "point SOURCE at ...".
std::string setting_name(const CacheConfig& config) {
  return config.dir_origin.empty() ? "--cache-dir" : config.dir_origin;
}

// A configured folder that does not exist (or is a file): an error naming it and a way on.
Error missing_cache_dir(const CacheConfig& config, CacheIntent intent) {
  std::error_code ec;
  const fs::path& dir = config.dir;
  bool exists = fs::exists(dir, ec);
  std::string hint = exists ? "point " + setting_name(config) + " at a folder"
                            : "create it: `npucc cache init " + dir.string() + "` or mkdir (an " +
                                  "empty folder becomes a cache on first use)";
  if (intent == CacheIntent::compile) {
    hint += ", or pass --no-cache";
  }
  return Error(dir.string() + ": the cache folder (" + source_name(config) + ") " +
                   (exists ? "is not a folder" : "does not exist"),
               hint);
}

} // namespace

bool is_npucc_cache(const fs::path& dir) {
  // The tag's first two lines: CACHEDIR's signature, then npucc's own line. Every npucc
  // since the first wrote exactly k_cachedir_tag, so older caches are recognised too.
  static const std::string k_own_lines =
      std::string(cache::k_cachedir_tag)
          .substr(0, std::string(cache::k_cachedir_tag).find("# For"));
  if (cache::path_kind(dir / "CACHEDIR.TAG") != cache::PathKind::file ||
      cache::path_kind(dir / "entries") != cache::PathKind::directory) {
    return false;
  }
  // An unreadable tag: not (known to be) one.
  util::Expected<std::string> tag = cache::read_small_file(dir / "CACHEDIR.TAG", 4096);
  return tag && util::starts_with(*tag, k_own_lines);
}

fs::path open_cache_dir(const CacheConfig& config, CacheIntent intent) {
  std::error_code ec;
  fs::path dir = config.dir;
  bool read_only = config.access == CacheAccess::read_only || intent == CacheIntent::read;
  // Only a compile creates the default per-user folder, and only where nothing is yet; an
  // empty folder, configured or not, becomes a cache at its first compile (as Ascend's
  // graph_compiler_cache_dir: create the folder, and it is used).
  bool may_create = !read_only && intent == CacheIntent::compile &&
                    (config.dir_source == SettingSource::built_in ? missing_or_empty(dir)
                                                                  : is_empty_folder(dir));
  if (may_create) {
    fs::create_directories(dir, ec);
    if (ec) {
      throw Error(dir.string() + ": cannot create the default cache folder: " + ec.message(),
                  "pass --cache-dir DIR, set NPUCC_CACHE_DIR, or --no-cache");
    }
  } else if (!fs::is_directory(dir, ec)) {
    throw missing_cache_dir(config, intent);
  }
  // The root itself may be a symlink the user chose; inside it, nothing is followed.
  fs::path root = fs::canonical(dir, ec);
  if (ec) {
    throw Error(config.dir.string() + ": cannot open the cache folder: " + ec.message());
  }
  if (may_create) {
    create_layout(root, config.sharing);
  } else if (is_empty_folder(root)) {
    throw Error("not an npucc cache yet: " + config.dir.string() + " (an empty folder: the " +
                "first compile or populate that uses it makes it one, as `npucc cache init " +
                config.dir.string() + "` does)");
  } else if (!is_npucc_cache(root)) {
    throw not_a_cache(config.dir, setting_name(config));
  } else if (!read_only) {
    create_layout(root, config.sharing); // parts an older npucc or a cleanup left out
  }
  return root;
}

void init_cache_dir(const fs::path& dir, CacheSharing sharing) {
  std::error_code ec;
  // Checked before anything is written: init never takes over a folder in use.
  if (!missing_or_empty(dir) && !(fs::is_directory(dir, ec) && is_npucc_cache(dir))) {
    throw Error("not an npucc cache: " + dir.string() +
                (fs::is_directory(dir, ec)
                     ? " (it is not empty: npucc cache init needs an empty or missing folder; "
                       "choose a new one)"
                     : " (it is not a folder)"));
  }
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    throw Error(dir.string() + ": cannot create the cache folder" +
                (ec ? ": " + ec.message() : std::string()));
  }
  fs::path root = fs::canonical(dir);
  if (sharing != CacheSharing::automatic) {
    // Group: the mark `auto` looks for, so later writers use group modes untold.
    // A folder already so (made by an administrator for a team) needs no chmod, which
    // only its owner may do.
    unsigned mode = cache::modes_for(sharing).dir;
    struct stat info {};
    bool already = ::stat(root.c_str(), &info) == 0 && (info.st_mode & 07777) == mode;
    if (!already && ::chmod(root.c_str(), mode) != 0) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "%o", mode);
      throw Error(root.string() + ": cannot set the cache folder's mode to " + octal + ": " +
                      std::strerror(errno),
                  std::string("run as the folder's owner, or have it run: chmod ") + octal +
                      " " + root.string());
    }
  }
  create_layout(root, sharing);
  if (sharing != CacheSharing::automatic) {
    // Re-running init with another mode converts the layout (entries already written
    // keep theirs: `npucc cache purge --all` starts afresh).
    for (const char* sub : {"entries", "tmp", "lock", "models", "stamps", "digests"}) {
      if (cache::path_kind(root / sub) == cache::PathKind::directory) {
        ::chmod((root / sub).c_str(), cache::modes_for(sharing).dir);
      }
    }
    if (cache::path_kind(root / "CACHEDIR.TAG") == cache::PathKind::file) {
      ::chmod((root / "CACHEDIR.TAG").c_str(), 0644); // an older npucc wrote it by the umask
    }
  }
}

} // namespace npucc

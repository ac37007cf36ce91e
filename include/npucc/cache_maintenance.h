#pragma once

// Listing and maintaining a cache folder from a program: what `npucc cache ls`, `stats`,
// `verify`, `purge` (`clean`) and `invalidate` do, without their printing. Compiling
// through the cache is compile_cached() in npucc/cache.h; both take the same CacheConfig.
//
//   npucc::CacheConfig config;
//   config.dir = "/srv/npucc-cache";
//   config.dir_source = npucc::SettingSource::command_line;
//   npucc::Cache cache(config);
//   for (const auto& entry : cache.entries()) { ... }
//
// Errors are npucc::Error with the same one-line messages as the CLI.

#include "npucc/cache_config.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npucc {

// One entry, as a row of `npucc cache ls`.
struct CacheEntry {
  std::string key;              // 64 hex digits
  std::string model;            // the .onnx file's stem
  std::string variants;         // "high:float32,low:mixed_float16"
  std::string compiler_version; // of the npucc that wrote it
  std::string options;          // canonical_options() of its compile (JSON text)
  std::string state;            // "ok", "other-version", "corrupt", "incomplete", "foreign"
  std::string problem;          // what is wrong, when corrupt, incomplete or foreign
  uint64_t bytes = 0;           // on disk
  int64_t created = 0;          // seconds since the epoch
  int64_t last_used = 0;
};

// The entry as `npucc cache ls --json` presents it, one object of its "entries" (JSON
// text): variants as [{"role", "precision"}], options as the object they are (null when
// the header holds none, as a damaged or forged one may). The one presentation of an
// entry: the CLI and the Python module both show this.
std::string cache_entry_json(const CacheEntry& entry);

// `npucc cache ls`: the folder as opened, and its entries in the folder's order.
struct CacheListing {
  std::filesystem::path dir;
  std::vector<CacheEntry> entries;
};

// `npucc cache stats`: the entries and the counters of the cache's statistics file.
struct CacheStatistics {
  std::filesystem::path dir;
  size_t entries = 0;
  uint64_t bytes = 0;
  std::map<std::string, uint64_t> states; // entry state ("ok", ...) -> entries
  // "hits", "misses", "misses.new", "misses.corrupt", "bypass.REASON", "stores",
  // "store_errors", "evictions", "invalidations", "evicted_bytes", "remote.hits", ...
  // (npucc-cache(1), STATISTICS); "last_cleanup" and "zeroed" are times.
  std::map<std::string, uint64_t> counters;

  // 0 for a counter that was never counted.
  uint64_t counter(const std::string& name) const;
};

// One problem `verify` found.
struct CacheProblem {
  // "corrupt", "truncated", "incomplete", "foreign-version", "stray", "unsigned",
  // "tampered" (the words of `npucc cache verify`).
  std::string kind;
  std::filesystem::path path;
  std::string detail;
  bool fixed = false;      // removed (verify with fix)
  bool left_alone = false; // not npucc's to remove: reported only
};

struct CacheVerifyResult {
  size_t entries = 0;
  uint64_t bytes = 0;
  std::vector<CacheProblem> problems;
  // Each refused removal (with fix): one line naming the path and the system's reason.
  std::vector<std::string> failures;
};

struct RemovedEntry {
  std::string key;
  std::string model;
  std::string compiler_version;
  uint64_t bytes = 0;
  std::string why;
};

struct CacheRemoval {
  std::vector<RemovedEntry> removed; // really removed (with dry_run: that would be)
  uint64_t freed = 0;                // purge: bytes of the removed entries
  size_t temporaries = 0;            // purge: stale staging folders and temporary files
  uint64_t temporary_bytes = 0;
  size_t unused_blobs = 0;           // purge: weight blobs no entry links any more
  uint64_t unused_blob_bytes = 0;
  std::vector<std::string> failures; // refused removals, one line each
};

// `npucc cache purge`: every condition given removes entries (least recently used first
// for max_size); with none, only stale temporary files go.
struct PurgeRequest {
  bool all = false;
  std::optional<int64_t> older_than; // seconds since last use (parse_age: "7d")
  std::optional<uint64_t> max_size;  // bytes (parse_size_setting: "10G")
  bool dry_run = false;
};

// `npucc cache invalidate`: entries for which every condition given holds; with none of
// the three, those of every compiler version but this one.
struct InvalidateRequest {
  std::optional<std::string> compiler_version;
  std::string model;      // the .onnx file's stem
  std::string key_prefix; // at least 4 hex digits
  bool dry_run = false;
};

// An existing cache folder. Each call opens it (open_cache_dir) with the intent of what
// it does, so a folder that is not an npucc cache is refused then, in one line. Listing
// writes nothing; maintenance honours config.access (a read-only cache refuses to change).
class Cache {
public:
  explicit Cache(CacheConfig config);

  std::vector<CacheEntry> entries() const; // in the folder's order
  CacheListing listing() const;
  CacheStatistics stats() const;
  // Resets every counter but last_cleanup (entries and size are kept).
  void zero_stats() const;
  // Re-hashes every entry; with `fix`, removes what is broken and stray. `progress`, when
  // given, is called with (entries done, entries in all) as the work goes.
  CacheVerifyResult verify(bool fix = false,
                           const std::function<void(size_t, size_t)>& progress = {}) const;
  CacheRemoval purge(const PurgeRequest& request) const;
  CacheRemoval invalidate(const InvalidateRequest& request) const;

  const CacheConfig& config() const { return m_config; }

private:
  CacheConfig m_config;
};

} // namespace npucc

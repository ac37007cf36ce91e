#pragma once

// Cache statistics: the text file CACHE_DIR/stats, rewritten atomically under an
// exclusive flock on CACHE_DIR/lock/stats, so concurrent processes never lose an update:
//
//   stats   = "npucc-cache-stats" SP "1" LF *counter
//   counter = name SP 1*DIGIT LF
//   name    = "hits" / "misses" / "misses.corrupt" / "stores" / "store_errors" /
//             "bypass." reason / "evictions" / "evicted_bytes" / "cleanups" /
//             "last_cleanup" / "zeroed"            ; times in seconds since the epoch
//
// Unknown names are kept, so an older npucc does not drop a newer one's counters.

#include "cache/file_ops.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace npucc::cache {

using Counters = std::map<std::string, uint64_t>;

class StatsFile {
public:
  // A read-only cache's statistics are never written: update() does nothing.
  StatsFile(std::filesystem::path root, Modes modes, CacheAccess access);

  // Adds `deltas`; `set` values replace (times). Best effort: a statistics failure must
  // never fail a compile, so errors are swallowed.
  void update(const Counters& deltas, const Counters& set = {}) const;
  Counters read() const;
  // Resets every counter except last_cleanup; records the time in "zeroed".
  void zero() const;

private:
  std::filesystem::path m_root;
  Modes m_modes;
  CacheAccess m_access;
};

// An exclusive flock on CACHE_DIR/lock/<name>, released by the destructor.
enum class Wait { yes, no };
class DirectoryLock {
public:
  // The lock folder and file are created with `modes` (group-writable in a shared cache:
  // every user must be able to open the lock file for writing).
  DirectoryLock(const std::filesystem::path& root, const std::string& name, Wait wait,
                const Modes& modes);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  bool acquired() const { return m_fd >= 0; }

private:
  int m_fd = -1;
};

} // namespace npucc::cache

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
  // never fail a compile, so errors are swallowed. False when the statistics lock was
  // held past its deadline (Wait::advisory) and nothing was counted: worth a note.
  bool update(const Counters& deltas, const Counters& set = {}) const;
  Counters read() const;
  // Resets every counter except last_cleanup; records the time in "zeroed".
  void zero() const;

private:
  std::filesystem::path m_root;
  Modes m_modes;
  CacheAccess m_access;
};

// An exclusive flock on CACHE_DIR/lock/<name>, released by the destructor. Any group
// member can take a lock file of a shared cache and keep it, so no lock is waited for
// without a bound:
// - no: tried once (a cleanup after a store: someone else is cleaning);
// - advisory: for k_advisory_lock_ms, then given up (statistics: the caller skips them);
// - removal: for removal_lock_timeout_ms() (purge, verify --fix), then the caller fails
//   in one line naming the lock.
enum class Wait { no, advisory, removal };
inline constexpr int64_t k_advisory_lock_ms = 1000;
inline constexpr int64_t k_default_removal_lock_seconds = 60;
// NPUCC_CACHE_LOCK_TIMEOUT (whole seconds, 0 to 86400), else the default, in ms; throws
// npucc::Error naming the variable for any other value.
int64_t removal_lock_timeout_ms();

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
  // Not acquired because another process held it until the deadline.
  bool timed_out() const { return m_timed_out; }
  // "lock/cleanup is held by another process (waited 60 s)": for the caller's error.
  std::string busy_text() const;

private:
  int m_fd = -1;
  bool m_timed_out = false;
  std::string m_name;
  int64_t m_waited_ms = 0;
};

} // namespace npucc::cache

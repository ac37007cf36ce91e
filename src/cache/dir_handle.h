#pragma once

#include "cache/file_ops.h"
#include "util/fd.h"

#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <vector>

// Folders of the cache held open, so that every sweep (purge, eviction, verify --fix, the
// temporaries, digests and models) names what it removes or renames relative to a folder
// it opened itself (openat / unlinkat / renameat / fstatat, O_DIRECTORY | O_NOFOLLOW).
// In a group cache any member may rename a folder away and plant a symlink in its place
// between a listing and a removal; a path would then lead wherever the link points, a
// handle stays on the folder that was listed. A sweep that finds its folder no longer
// at its place (still_at) stops with one line: see swapped_error.
namespace npucc::cache {

class DirHandle {
public:
  DirHandle() = default;
  // The cache's root (or another folder the user named): a link there is the user's own
  // and is followed, once; everything below is opened with child().
  static DirHandle open(const fs::path& path);

  // `name` in this folder when it is a real folder (not a link); else invalid.
  DirHandle child(const std::string& name) const;
  bool valid() const { return m_fd.get() >= 0; }
  int fd() const { return m_fd.get(); }
  // How the folder is named in messages.
  const fs::path& path() const { return m_path; }

  // Its names but "." and "..", sorted.
  std::vector<std::string> names() const;
  // lstat of `name` in it; false when it is missing.
  bool stat_of(const std::string& name, struct stat& info) const;
  // Whether `name` in `parent` is still this very folder: not renamed away, nor replaced
  // by a link or another folder.
  bool still_at(const DirHandle& parent, const std::string& name) const;

  // remove_flat (file_ops.h) of `name` in this folder: a file or link is unlinked (never
  // followed), a folder of them emptied and removed; a subfolder is left alone.
  Removed remove(const std::string& name) const;
  // Bytes of the regular files `name` is or holds, not following links (a dry run).
  uint64_t bytes_of(const std::string& name) const;

private:
  util::Fd m_fd{-1};
  fs::path m_path;
  dev_t m_device = 0;
  ino_t m_inode = 0;
};

// Removes `path`, which lies under `root`, opening each folder on the way from `root`
// without following a link: a link or a non-folder on the way is refused (named in
// the result's error), never followed.
Removed remove_within(const fs::path& root, const fs::path& path);

// The one line a sweep stops with when `dir` was swapped while it ran (`what`: "purge").
std::string swapped_error(const DirHandle& dir, const std::string& what);

// A documented debug hook for races (tests/e2e/test_cache_team.sh): when
// NPUCC_DEBUG_PAUSE names `point`, creates "$NPUCC_DEBUG_PAUSE_DIR/<point>.reached" and
// waits until "<point>.go" appears there (at most 120 s). Costs a getenv otherwise.
void debug_pause(const char* point);

} // namespace npucc::cache

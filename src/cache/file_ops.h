#pragma once

#include "npucc/cache_config.h"
#include "util/expected.h"
#include "util/sha256.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace npucc::util {
class BackgroundTask;
}

// File operations the cache needs beyond util/file_io.h. Everything inside the cache
// is opened without following symlinks: a planted link must never let npucc read,
// write or delete outside the cache directory.
namespace npucc::cache {

namespace fs = std::filesystem;

// How a file reached its destination.
enum class Transfer { reflink, hard_link, copy, move };
const char* transfer_name(Transfer transfer);

// Whether materialise_file may hard-link: never, always, or only to a file the user cannot
// change (owned by another user, no write bit, and the user not root), so that no edit of
// the linked copy can reach the original.
enum class AllowLink { no, yes, if_unchangeable };
enum class Sync { no, yes };

using util::FileDigest;

// What lstat says about a path, without following a final symlink.
enum class PathKind { missing, file, directory, symlink, other };
PathKind path_kind(const fs::path& path);

// SHA-256 and size of a regular file, opened with O_NOFOLLOW; the error (npucc::Error) for
// a symlink, a non-regular file or a read error: to a check of an entry it is a finding,
// not a failure.
util::Expected<FileDigest> digest_file(const fs::path& path);

// Makes `to` (which must not exist) hold the bytes of regular file `from`: a reflink
// when the filesystem can share blocks, else (as allow_link says) a hard link, else a copy.
// Never follows a symlink at `from`. Returns how it was done; throws npucc::Error
// (ENOSPC says to free space). Given `background` (and Sync::no), a copy is left running
// there once both files are open: `to` is whole when its finish() returns, which throws
// what the copy would have (the half-written copy removed).
Transfer materialise_file(const fs::path& from, const fs::path& to, AllowLink allow_link, Sync sync,
                          std::unique_ptr<util::BackgroundTask>* background = nullptr);

// Why the file at `path`, just hard-linked from a cache entry, must not stay a link: its
// mode is not 0444, or it is owned by neither this user nor the owner of `cache_root`
// (an owner may chmod it back and write). Empty when it may stay.
std::string why_not_linkable(const fs::path& path, const fs::path& cache_root);

// What LinkMode (npucc/cache.h) allows.
AllowLink link_allowed_by(LinkMode mode);

// Whether a file of this name may be delivered as a hard link to the cache's inode.
// Not external data (NAME.data): ONNX Runtime refuses to load a graph whose subgraph (an If
// branch) keeps a tensor in a data file with more than one link (ONNX's checker, "a
// potential hardlink attack"; seen with silero_vad), so those are copied (or reflinked).
AllowLink link_allowed_for(const std::string& file_name, AllowLink wanted);

// Whether an entry file holds a graph's external data (NAME.data): weights, which nothing
// reads before the graphs are delivered.
bool is_external_data_name(const std::string& file_name);

// fsync of a directory, so a rename inside it survives a crash.
void sync_directory(const fs::path& dir);

// Modes of what npucc creates in a cache, for one CacheSharing (npucc/cache.h).
struct Modes {
  unsigned dir = 0700;          // every folder: layout, shards, entries, staging
  unsigned mutable_file = 0600; // statistics, lock files, model indexes
};
inline constexpr unsigned k_entry_file_mode = 0444;

// CacheSharing::automatic becomes group when `root` is setgid and group-writable.
CacheSharing resolve_sharing(CacheSharing sharing, const fs::path& root);
Modes modes_for(CacheSharing resolved);

// Creates `dir` (one level) unless it exists as a real directory; refuses a symlink
// or other file in its place with an npucc::Error naming it. A folder it creates gets
// modes.dir exactly (chmod, so neither the umask nor mkdir's handling of setgid
// interferes). An existing folder is left as it is. Every folder npucc makes in a cache
// is made here, through LocalStorage::make_dir (its lock folder by the DirectoryLock it
// hands its modes to), so no writer's umask can lock the others out.
void make_cache_dir(const fs::path& dir, const Modes& modes);
// The same, the error returned: for a folder that holds only what is advisory (stamps,
// digests, locks of statistics).
util::Outcome try_make_cache_dir(const fs::path& dir, const Modes& modes);

// Sets a path's modification time to now without following symlinks.
void touch(const fs::path& path);

// Modification time in seconds since the epoch, without following symlinks; 0 if missing.
int64_t mtime_of(const fs::path& path);

// What a removal did: the bytes of regular files removed, and the first refusal
// ("PATH: cannot remove: Permission denied"); empty when everything went.
struct Removed {
  uint64_t bytes = 0;
  std::string error;
  bool ok() const { return error.empty(); }
};

// Removes a file or symlink (the link, never its target), or a folder of them: what an
// entry, a staging folder or a model shard holds. Never enters a subfolder: npucc writes
// none there, so one is not npucc's to delete; it is left whole, the folder kept, and
// named in the error.
Removed remove_flat(const fs::path& path);

// remove_flat for npucc's own scratch, when a leftover is only untidy: the bytes removed.
uint64_t remove_tree(const fs::path& path);

// Total size of regular files under `dir`, not following symlinks.
uint64_t tree_bytes(const fs::path& dir);

// "<dir>/<stem>.<pid>.<random>": a unique name for staging or trash.
fs::path unique_name(const fs::path& dir, const std::string& stem);

} // namespace npucc::cache

namespace npucc::cache {
// Reads a small regular file (a header, a stamp, a tag) without following a symlink; the
// error when it is missing, a link, larger than `limit` or unreadable: most callers then
// take the file as absent or damaged.
util::Expected<std::string> read_small_file(const fs::path& path,
                                            uint64_t limit = uint64_t{16} << 20);

} // namespace npucc::cache

#include "cache/blob_store.h"

#include "cache/dir_handle.h"
#include "model/graph_files.h"
#include "util/disk.h"
#include "util/fd.h"
#include "util/safe_open.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <optional>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

bool is_blob_file(const std::string& name) {
  return util::ends_with(name, k_external_data_suffix);
}

namespace {

// A temporary name in blobs/<kk>/ ("<sha>.tmp.<pid>.<random>") older than this belongs to a
// dead process (as in tmp/: local_storage.h).
constexpr int64_t k_stale_blob_temporary_seconds = 3600;

enum class BlobStep { done, again };

// The blob as fstat (or lstat) sees it: a regular read-only file of the entry file's size.
bool blob_looks_whole(const struct stat& st, const EntryFile& file) {
  return S_ISREG(st.st_mode) && (st.st_mode & 07777) == k_entry_file_mode &&
         static_cast<uint64_t>(st.st_size) == file.bytes;
}

// A blob that may be linked into a new entry: owned by this user or the cache's owner, 0444, of
// the entry file's size, its bytes hashing to its name, all seen on one descriptor opened
// without following links (a name stat'ed, then opened, can be two files). Its inode, for the
// link to be checked against; nullopt when it may not be linked (replaced instead).
// Owned by anyone else (a group member), it is theirs to chmod back to writable, rewrite and
// set its times back (issue 42, finding 7).
std::optional<std::pair<dev_t, ino_t>> trusted_blob(const DirHandle& shard, const EntryFile& file,
                                                     uid_t cache_owner) {
  util::OpenRule rule = util::OpenRule::in_cache();
  rule.owners = {::geteuid(), cache_owner};
  rule.exact_mode = 0444;
  util::Expected<util::OpenedFile> blob =
      util::open_regular_file_at(shard.fd(), file.sha256.c_str(), shard.path() / file.sha256, rule);
  if (!blob || !blob_looks_whole(blob->info, file)) {
    return std::nullopt;
  }
  util::Expected<util::FileDigest> digest =
      util::try_sha256_of_fd(blob->fd.get(), shard.path() / file.sha256);
  if (!digest || digest->sha256 != file.sha256) {
    return std::nullopt;
  }
  return std::make_pair(blob->info.st_dev, blob->info.st_ino);
}

// Replaces the staged file by a link to the blob hashed as `inode`. `again` when the name no
// longer holds that inode (the blob went or was swapped meanwhile): the caller looks again.
BlobStep link_staged_to_blob(const DirHandle& shard, const EntryFile& file,
                             const fs::path& staged, std::pair<dev_t, ino_t> inode) {
  const fs::path link = staged.parent_path() / ("." + file.name + ".blob");
  if (::linkat(shard.fd(), file.sha256.c_str(), AT_FDCWD, link.c_str(), 0) != 0) {
    return errno == ENOENT ? BlobStep::again : BlobStep::done;
  }
  // What got linked is the inode hashed (a trusted owner's 0444 file: no one else can have
  // changed its bytes since), not whatever was swapped in under its name since.
  struct stat st {};
  bool same = ::lstat(link.c_str(), &st) == 0 && st.st_dev == inode.first &&
              st.st_ino == inode.second && blob_looks_whole(st, file);
  if (!same || util::disk().rename(link, staged) != 0) {
    util::disk().unlink(link);
    return same ? BlobStep::done : BlobStep::again;
  }
  return BlobStep::done;
}

// The staged file becomes the blob, in place of a damaged one or whatever else is there (a
// planted link is replaced itself, never followed).
void replace_blob(const DirHandle& shard, const EntryFile& file, const fs::path& staged) {
  const std::string temporary = unique_name(shard.path(), file.sha256 + ".tmp").filename().string();
  if (::linkat(AT_FDCWD, staged.c_str(), shard.fd(), temporary.c_str(), 0) != 0) {
    return;
  }
  if (util::disk().renameat(shard.fd(), temporary.c_str(), shard.fd(), file.sha256.c_str(),
                            shard.path() / file.sha256) != 0) {
    util::disk().unlinkat(shard.fd(), temporary.c_str(), 0, shard.path() / temporary);
  }
}

BlobStep share_one(const DirHandle& shard, const EntryFile& file, const fs::path& staged,
                   uid_t cache_owner) {
  struct stat st {};
  if (!shard.stat_of(file.sha256, st)) {
    bool added = ::linkat(AT_FDCWD, staged.c_str(), shard.fd(), file.sha256.c_str(), 0) == 0;
    return !added && errno == EEXIST ? BlobStep::again : BlobStep::done;
  }
  if (S_ISDIR(st.st_mode)) {
    return BlobStep::done; // a folder there is not npucc's: verify names it
  }
  if (auto inode = trusted_blob(shard, file, cache_owner)) {
    return link_staged_to_blob(shard, file, staged, *inode);
  }
  // Damaged, another member's, not 0444, a link, a FIFO: this writer's own copy takes its name.
  replace_blob(shard, file, staged);
  return BlobStep::done;
}

} // namespace

void share_blobs(const fs::path& root, const Modes& modes, const fs::path& stage,
                 const std::vector<EntryFile>& files) {
  for (const auto& file : files) {
    if (!is_blob_file(file.name) || !is_key(file.sha256)) {
      continue;
    }
    const std::string shard_name = file.sha256.substr(0, 2);
    if (!try_make_cache_dir(root / "blobs", modes) ||
        !try_make_cache_dir(root / "blobs" / shard_name, modes)) {
      return; // the entry keeps its own copies
    }
    DirHandle cache = DirHandle::open(root);
    struct stat root_info {};
    if (!cache.valid() || ::fstat(cache.fd(), &root_info) != 0) {
      return;
    }
    DirHandle shard = cache.child("blobs").child(shard_name);
    for (int attempt = 0; shard.valid() && attempt < 3; ++attempt) {
      if (share_one(shard, file, stage / file.name, root_info.st_uid) == BlobStep::done) {
        break;
      }
    }
  }
}

size_t SharedDiskUse::add(const fs::path& dir, const EntryHeader& header, uint64_t bytes) {
  Entry entry;
  entry.own = bytes;
  for (const auto& file : header.files) {
    struct stat st {};
    if (!is_blob_file(file.name) || ::lstat((dir / file.name).c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_nlink < 2) {
      continue; // its own copy
    }
    auto id = std::make_pair(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
    uint64_t size = static_cast<uint64_t>(st.st_size);
    entry.own -= std::min(entry.own, size);
    entry.blobs.push_back(id);
    Blob& blob = m_blobs[id];
    if (blob.users++ == 0) {
      blob.bytes = size;
      m_total += size;
    }
  }
  m_total += entry.own;
  m_entries.push_back(std::move(entry));
  return m_entries.size() - 1;
}

uint64_t SharedDiskUse::remove(size_t index) {
  Entry& entry = m_entries.at(index);
  uint64_t freed = entry.own;
  for (const auto& id : entry.blobs) {
    Blob& blob = m_blobs[id];
    if (--blob.users == 0) {
      freed += blob.bytes;
    }
  }
  entry = Entry{};
  m_total -= std::min(m_total, freed);
  return freed;
}

namespace {

bool hex_pair(const std::string& name) {
  return name.size() == 2 && is_key(name + std::string(62, '0'));
}

// What a sweep removes from a shard: a blob no entry links, a link, a stale temporary.
bool blob_unused(const std::string& shard_name, const std::string& name, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    return true;
  }
  if (!S_ISREG(st.st_mode)) {
    return false; // a folder is not npucc's: verify names it
  }
  if (is_key(name) && name.substr(0, 2) == shard_name) {
    return st.st_nlink == 1;
  }
  return st.st_mtime < std::time(nullptr) - k_stale_blob_temporary_seconds;
}

void sweep_shard(const DirHandle& blobs, const std::string& shard_name, bool dry_run,
                 BlobSweep& out) {
  DirHandle shard = blobs.child(shard_name);
  for (const auto& name : shard.names()) {
    struct stat st {};
    if (!shard.stat_of(name, st) || !blob_unused(shard_name, name, st)) {
      continue;
    }
    if (!shard.still_at(blobs, shard_name)) {
      out.failures.push_back(swapped_error(shard, "purge"));
      return;
    }
    Removed removed;
    removed.bytes = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
    if (!dry_run) {
      removed = shard.remove(name);
    }
    if (!removed.ok()) {
      out.failures.push_back(removed.error);
      continue;
    }
    ++out.removed;
    out.bytes += removed.bytes;
  }
}

} // namespace

BlobSweep sweep_blobs(const fs::path& root, bool dry_run) {
  BlobSweep out;
  DirHandle blobs = DirHandle::open(root).child("blobs");
  if (!blobs.valid()) {
    return out;
  }
  for (const auto& name : blobs.names()) {
    struct stat st {};
    if (!blobs.stat_of(name, st)) {
      continue;
    }
    if (S_ISDIR(st.st_mode) && hex_pair(name)) {
      sweep_shard(blobs, name, dry_run, out);
    } else if (S_ISLNK(st.st_mode)) { // planted: removed itself, never followed
      Removed removed = dry_run ? Removed{} : blobs.remove(name);
      if (!removed.ok()) {
        out.failures.push_back(removed.error);
      }
    }
  }
  return out;
}

} // namespace npucc::cache

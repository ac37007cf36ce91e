#include "cache/file_ops.h"

#include "cache/dir_handle.h"
#include "model/graph_files.h"
#include "npucc/error.h"
#include "util/disk.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/parallel.h"
#include "util/safe_open.h"
#include "util/sha256.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/fs.h>
#include <random>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace npucc::cache {

namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

using util::Fd;

Error io_error(const fs::path& path, const std::string& what, int error) {
  return Error(path.string() + ": " + what + ": " + errno_text(error),
               error == ENOSPC || error == EDQUOT ? "free some disk space, or lower the cache's "
                                                    "size with npucc cache purge --max-size"
                                                  : "");
}

// Every file of a cache is opened here, through util::open_regular_file: never through a
// link, never blocking on a FIFO a member swapped in, checked on the descriptor read.
util::Expected<util::OpenedFile> open_regular(const fs::path& path,
                                              const util::OpenRule& rule = util::OpenRule::in_cache()) {
  return util::open_regular_file(path, rule);
}

Fd create_exclusive(const fs::path& path) {
  Fd fd(util::disk().open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (fd.get() < 0) {
    throw io_error(path, "cannot create", errno);
  }
  return fd;
}

void copy_bytes(int from, const fs::path& from_path, int to, const fs::path& to_path) {
  // In the kernel first, as cp does (no round trip of the bytes through user space); a
  // file system or kernel that cannot falls back to read and write from where it stopped.
  while (true) {
    ssize_t n = util::retry_on_eintr(
        [&] { return util::disk().copy_range(from, to, size_t{1} << 30, to_path); });
    if (n > 0) {
      continue;
    }
    if (n == 0) {
      return;
    }
    if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP &&
        errno != EBADF && errno != EPERM) {
      throw io_error(to_path, "copy failed", errno);
    }
    break;
  }
  std::vector<char> buffer(1 << 20);
  while (true) {
    ssize_t n = util::retry_on_eintr(
        [&] { return util::disk().read(from, buffer.data(), buffer.size(), from_path); });
    if (n < 0) {
      throw io_error(from_path, "read failed while copying to " + to_path.string(), errno);
    }
    if (n == 0) {
      return;
    }
    util::write_all(to, buffer.data(), static_cast<size_t>(n), to_path);
  }
}

} // namespace

const char* transfer_name(Transfer transfer) {
  switch (transfer) {
  case Transfer::reflink:
    return "reflink";
  case Transfer::hard_link:
    return "hard link";
  case Transfer::copy:
    return "copy";
  case Transfer::move:
    return "move";
  }
  return "copy";
}

PathKind path_kind(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return PathKind::missing;
  }
  if (S_ISLNK(info.st_mode)) {
    return PathKind::symlink;
  }
  if (S_ISDIR(info.st_mode)) {
    return PathKind::directory;
  }
  if (S_ISREG(info.st_mode)) {
    return PathKind::file;
  }
  return PathKind::other;
}

util::Expected<FileDigest> digest_file(const fs::path& path) {
  util::Expected<util::OpenedFile> file = open_regular(path);
  if (!file) {
    return file.error();
  }
  return util::try_sha256_of_fd(file->fd.get(), path);
}

bool is_external_data_name(const std::string& file_name) {
  const std::string suffix = k_external_data_suffix;
  return file_name.size() > suffix.size() &&
         file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

AllowLink link_allowed_for(const std::string& file_name, AllowLink wanted) {
  return is_external_data_name(file_name) ? AllowLink::no : wanted;
}

std::string why_not_linkable(const fs::path& path, const fs::path& cache_root) {
  struct stat linked {};
  struct stat root {};
  if (::lstat(path.c_str(), &linked) != 0 || ::stat(cache_root.c_str(), &root) != 0) {
    return "cannot be checked";
  }
  if ((linked.st_mode & 07777) != k_entry_file_mode) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(linked.st_mode & 07777));
    return std::string("has mode ") + mode + ", not 0444";
  }
  if (linked.st_uid != ::geteuid() && linked.st_uid != root.st_uid) {
    return "is owned by user " + std::to_string(linked.st_uid) +
           ", neither this user nor the cache's owner";
  }
  return "";
}

AllowLink link_allowed_by(LinkMode mode) {
  switch (mode) {
  case LinkMode::copy:
    return AllowLink::no;
  case LinkMode::hardlink:
    return AllowLink::yes;
  case LinkMode::automatic:
    return AllowLink::if_unchangeable;
  }
  return AllowLink::no;
}

namespace {

// Whether this user could change the open file: write it, or (its owner) chmod it and then
// write it. Root can do both. A file with no write bit has no write permission through an
// ACL either: chmod set the ACL's mask from the group bits.
bool user_can_change(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return true; // unknown: assume the worst
  }
  uid_t user = ::geteuid();
  return user == 0 || info.st_uid == user || (info.st_mode & 0222) != 0;
}

bool may_link(int source, AllowLink allow_link) {
  switch (allow_link) {
  case AllowLink::no:
    return false;
  case AllowLink::yes:
    return true;
  case AllowLink::if_unchangeable:
    return !user_can_change(source);
  }
  return false;
}

// Whether the link just made at `linked` is the file that was opened and checked (`opened`,
// its fstat): link() takes a path, which another user may have swapped meanwhile.
bool links_the_same_file(const fs::path& linked, const struct stat& opened) {
  struct stat now {};
  return ::lstat(linked.c_str(), &now) == 0 && now.st_dev == opened.st_dev &&
         now.st_ino == opened.st_ino;
}

// The bytes of open `source` into the new file `target`, closed; a half-written copy is
// removed.
void copy_file(const Fd& source, const fs::path& from, Fd& target, const fs::path& to, Sync sync) {
  try {
    copy_bytes(source.get(), from, target.get(), to);
    if (sync == Sync::yes && util::disk().fsync(target.get(), to) != 0) {
      throw io_error(to, "fsync failed", errno);
    }
    if (::close(target.release()) != 0) {
      throw io_error(to, "close failed", errno);
    }
  } catch (...) {
    // Rethrown: only the half-written copy is undone here.
    util::disk().unlink(to);
    throw;
  }
}

} // namespace

Transfer materialise_file(const fs::path& from, const fs::path& to, AllowLink allow_link, Sync sync,
                          std::unique_ptr<util::BackgroundTask>* background) {
  util::OpenedFile opened = open_regular(from).value();
  Fd source = std::move(opened.fd);
  Fd target = create_exclusive(to);
  if (::ioctl(target.get(), FICLONE, source.get()) == 0) {
    return Transfer::reflink;
  }
  if (may_link(source.get(), allow_link)) {
    ::close(target.release());
    util::disk().unlink(to);
    if (::link(from.c_str(), to.c_str()) == 0) {
      if (links_the_same_file(to, opened.info)) {
        return Transfer::hard_link;
      }
      util::disk().unlink(to); // `from` was swapped since it was opened: copy what was checked
    }
    target = create_exclusive(to);
  }
  if (background != nullptr && sync == Sync::no) {
    *background = std::make_unique<util::BackgroundTask>(
        [source = std::move(source), target = std::move(target), from, to]() mutable {
          copy_file(source, from, target, to, Sync::no);
        });
  } else {
    copy_file(source, from, target, to, sync);
  }
  return Transfer::copy;
}

void sync_directory(const fs::path& dir) {
  Fd fd(util::disk().open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, 0));
  if (fd.get() >= 0) {
    util::disk().fsync(fd.get(), dir);
  }
}

util::Outcome try_make_cache_dir(const fs::path& dir, const Modes& modes) {
  const unsigned mode = modes.dir;
  for (int attempt = 0; attempt < 2; ++attempt) {
    switch (path_kind(dir)) {
    case PathKind::directory:
      return util::success();
    case PathKind::missing:
      if (::mkdir(dir.c_str(), mode & 0777) == 0) {
        if (::chmod(dir.c_str(), mode) != 0) {
          return io_error(dir, "cannot set the cache folder's mode", errno);
        }
        continue;
      }
      if (errno == EEXIST) {
        continue; // re-check: another process may have made something else
      }
      return io_error(dir, "cannot create the cache folder", errno);
    case PathKind::symlink:
      return Error(dir.string() + ": is a symlink inside the cache; refusing to follow it",
                   "remove it, or run npucc cache verify --fix");
    default:
      return Error(dir.string() + ": is not a folder; the cache layout is damaged",
                   "remove it, or run npucc cache verify --fix");
    }
  }
  if (path_kind(dir) != PathKind::directory) {
    return Error(dir.string() + ": is not a folder; the cache layout is damaged");
  }
  return util::success();
}

void make_cache_dir(const fs::path& dir, const Modes& modes) {
  try_make_cache_dir(dir, modes).value();
}

void touch(const fs::path& path) {
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

int64_t mtime_of(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return 0;
  }
  return static_cast<int64_t>(info.st_mtime);
}

Removed remove_flat(const fs::path& path) {
  // Relative to its folder, opened once: nothing below it is reached through a link.
  fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return DirHandle::open(parent).remove(path.filename().string());
}

uint64_t remove_tree(const fs::path& path) {
  return remove_flat(path).bytes;
}

uint64_t tree_bytes(const fs::path& dir) {
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) {
    return 0;
  }
  if (S_ISREG(info.st_mode)) {
    return static_cast<uint64_t>(info.st_size);
  }
  if (!S_ISDIR(info.st_mode)) {
    return 0;
  }
  uint64_t bytes = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    bytes += tree_bytes(it->path());
  }
  return bytes;
}

fs::path unique_name(const fs::path& dir, const std::string& stem) {
  static thread_local std::mt19937_64 random(std::random_device{}() ^
                                             static_cast<uint64_t>(::getpid()));
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".%d.%012llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(random() & 0xffffffffffffULL));
  return dir / (stem + suffix);
}

} // namespace npucc::cache

namespace npucc::cache {

util::Expected<std::string> read_small_file(const fs::path& path, uint64_t limit) {
  util::OpenRule rule = util::OpenRule::in_cache();
  rule.max_bytes = limit;
  util::Expected<util::OpenedFile> file = open_regular(path, rule);
  if (!file) {
    return file.error();
  }
  return util::read_up_to(file->fd.get(), static_cast<size_t>(file->info.st_size), path);
}

} // namespace npucc::cache

namespace npucc::cache {

CacheSharing resolve_sharing(CacheSharing sharing, const fs::path& root) {
  if (sharing != CacheSharing::automatic) {
    return sharing;
  }
  struct stat info {};
  if (::stat(root.c_str(), &info) == 0 && (info.st_mode & S_ISGID) != 0 &&
      (info.st_mode & S_IWGRP) != 0) {
    return CacheSharing::group;
  }
  return CacheSharing::none;
}

Modes modes_for(CacheSharing resolved) {
  if (resolved == CacheSharing::group) {
    return {02770, 0660};
  }
  if (resolved == CacheSharing::world) {
    return {0755, 0644};
  }
  return {0700, 0600};
}

} // namespace npucc::cache

#include "cache/dir_handle.h"

#include "util/disk.h"
#include "util/eintr.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

namespace npucc::cache {

namespace {

constexpr int k_dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string cannot_remove(const fs::path& path, int error) {
  return path.string() + ": cannot remove: " + std::strerror(error);
}

} // namespace

DirHandle DirHandle::open(const fs::path& path) {
  DirHandle out;
  out.m_fd = util::Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  out.m_path = path;
  struct stat info {};
  if (out.valid() && ::fstat(out.fd(), &info) == 0) {
    out.m_device = info.st_dev;
    out.m_inode = info.st_ino;
  }
  return out;
}

DirHandle DirHandle::child(const std::string& name) const {
  DirHandle out;
  out.m_path = m_path / name;
  if (!valid()) {
    return out;
  }
  out.m_fd = util::Fd(::openat(fd(), name.c_str(), k_dir_flags));
  struct stat info {};
  if (out.valid() && ::fstat(out.fd(), &info) == 0) {
    out.m_device = info.st_dev;
    out.m_inode = info.st_ino;
  }
  return out;
}

std::vector<std::string> DirHandle::names() const {
  std::vector<std::string> out;
  if (!valid()) {
    return out;
  }
  // A DIR stream of its own: a duplicate, so this handle's offset stays as it is.
  int copy = ::openat(fd(), ".", k_dir_flags);
  DIR* stream = copy >= 0 ? ::fdopendir(copy) : nullptr;
  if (stream == nullptr) {
    if (copy >= 0) {
      ::close(copy);
    }
    return out;
  }
  while (const struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") {
      out.push_back(std::move(name));
    }
  }
  ::closedir(stream);
  std::sort(out.begin(), out.end());
  return out;
}

bool DirHandle::stat_of(const std::string& name, struct stat& info) const {
  return valid() && ::fstatat(fd(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
}

bool DirHandle::still_at(const DirHandle& parent, const std::string& name) const {
  struct stat info {};
  return valid() && parent.stat_of(name, info) && S_ISDIR(info.st_mode) &&
         info.st_dev == m_device && info.st_ino == m_inode;
}

Removed DirHandle::remove(const std::string& name) const {
  Removed out;
  struct stat info {};
  if (!stat_of(name, info)) {
    return out; // already gone
  }
  if (!S_ISDIR(info.st_mode)) {
    if (util::disk().unlinkat(fd(), name.c_str(), 0, m_path / name) != 0 && errno != ENOENT) {
      out.error = cannot_remove(m_path / name, errno);
      return out;
    }
    out.bytes = S_ISREG(info.st_mode) ? static_cast<uint64_t>(info.st_size) : 0;
    return out;
  }
  DirHandle folder = child(name);
  if (!folder.still_at(*this, name)) {
    out.error = (m_path / name).string() + ": replaced while it was removed; left alone";
    return out;
  }
  for (const auto& item : folder.names()) {
    struct stat child_info {};
    if (folder.stat_of(item, child_info) && S_ISDIR(child_info.st_mode)) {
      // npucc never writes a folder inside an entry or a staging folder: not ours.
      if (out.error.empty()) {
        out.error = (folder.path() / item).string() + ": a folder npucc did not write; left alone";
      }
      continue;
    }
    Removed one = folder.remove(item);
    out.bytes += one.bytes;
    if (out.error.empty()) {
      out.error = one.error;
    }
  }
  if (out.error.empty() &&
      util::disk().unlinkat(fd(), name.c_str(), AT_REMOVEDIR, m_path / name) != 0 &&
      errno != ENOENT) {
    out.error = cannot_remove(m_path / name, errno);
  }
  return out;
}

uint64_t DirHandle::bytes_of(const std::string& name) const {
  struct stat info {};
  if (!stat_of(name, info)) {
    return 0;
  }
  if (S_ISREG(info.st_mode)) {
    return static_cast<uint64_t>(info.st_size);
  }
  if (!S_ISDIR(info.st_mode)) {
    return 0;
  }
  DirHandle folder = child(name);
  uint64_t bytes = 0;
  for (const auto& item : folder.names()) {
    bytes += folder.bytes_of(item);
  }
  return bytes;
}

Removed remove_within(const fs::path& root, const fs::path& path) {
  fs::path relative = path.lexically_relative(root);
  Removed out;
  if (relative.empty() || *relative.begin() == ".." || relative == ".") {
    out.error = path.string() + ": not inside the cache " + root.string() + "; left alone";
    return out;
  }
  DirHandle dir = DirHandle::open(root);
  std::vector<std::string> parts;
  for (const auto& part : relative) {
    parts.push_back(part.string());
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    DirHandle next = dir.child(parts[i]);
    if (!next.valid()) {
      struct stat info {};
      if (!dir.stat_of(parts[i], info)) {
        return out; // gone: so is what it held
      }
      out.error = next.path().string() + ": not a folder (a link?); " + path.string() +
                  " left alone";
      return out;
    }
    dir = std::move(next);
  }
  return dir.remove(parts.back());
}

std::string swapped_error(const DirHandle& dir, const std::string& what) {
  return "cache " + what + ": " + dir.path().string() +
         " was renamed or replaced while it was swept (a link or another folder in its "
         "place); stopped, nothing outside the cache touched";
}

void debug_pause(const char* point) {
  const char* wanted = std::getenv("NPUCC_DEBUG_PAUSE");
  const char* dir = std::getenv("NPUCC_DEBUG_PAUSE_DIR");
  if (wanted == nullptr || dir == nullptr || std::strcmp(wanted, point) != 0) {
    return;
  }
  fs::path reached = fs::path(dir) / (std::string(point) + ".reached");
  fs::path go = fs::path(dir) / (std::string(point) + ".go");
  int fd = ::open(reached.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    ::close(fd);
  }
  for (int i = 0; i < 12000 && ::access(go.c_str(), F_OK) != 0; ++i) {
    struct timespec pause {0, 10 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
  }
}

} // namespace npucc::cache

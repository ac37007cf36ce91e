#include "util/file_io.h"

#include <cstdlib>

#include "npucc/error.h"
#include "util/disk.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/safe_open.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::util {

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Through util/safe_open.h, whatever the rule: a FIFO or device in a file's place is
// refused on the descriptor instead of blocking the open.
Expected<Fd> open_for_reading(const fs::path& path, const OpenRule& rule) {
  Expected<OpenedFile> file = open_regular_file(path, rule);
  if (!file) {
    return file.error();
  }
  return std::move(file->fd);
}

uint64_t size_of(int fd) {
  struct stat info {};
  ::fstat(fd, &info);
  return static_cast<uint64_t>(info.st_size);
}

// read_exactly's work, the error returned.
Outcome read_at(int fd, uint64_t offset, char* out, size_t size, const fs::path& path,
                const char* when_short) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = retry_on_eintr([&] {
      return disk().pread(fd, out + done, std::min<size_t>(size - done, 1u << 30),
                          static_cast<off_t>(offset + done), path);
    });
    if (n < 0) {
      return Error(path.string() + ": read failed: " + errno_text());
    }
    if (n == 0) {
      return Error(path.string() + ": " + when_short);
    }
    done += static_cast<size_t>(n);
  }
  return success();
}

} // namespace

void read_exactly(int fd, uint64_t offset, char* out, size_t size, const fs::path& path,
                  const char* when_short) {
  read_at(fd, offset, out, size, path, when_short).value();
}

Expected<std::string> try_read_file(const fs::path& path) {
  return try_read_file(path, OpenRule::named_by_user());
}

Expected<std::string> try_read_file(const fs::path& path, const OpenRule& rule) {
  Expected<Fd> fd = open_for_reading(path, rule);
  if (!fd) {
    return fd.error();
  }
  std::string data(static_cast<size_t>(size_of(fd->get())), '\0');
  Outcome read = read_at(fd->get(), 0, data.data(), data.size(), path,
                         "file is shorter than expected (truncated?)");
  if (!read) {
    return read.error();
  }
  return data;
}

std::string read_file(const fs::path& path) {
  return try_read_file(path).value();
}

std::string read_file_range(const fs::path& path, uint64_t offset, uint64_t length) {
  Fd fd = open_for_reading(path, OpenRule::named_by_user()).value();
  uint64_t size = size_of(fd.get());
  if (offset > size || length > size - offset) {
    throw Error(path.string() + ": wants bytes " + std::to_string(offset) + ".." +
                std::to_string(offset + length) + " but the file has " + std::to_string(size));
  }
  std::string data(static_cast<size_t>(length), '\0');
  read_exactly(fd.get(), offset, data.data(), data.size(), path);
  return data;
}

Expected<std::string> read_up_to(int fd, size_t size, const fs::path& path) {
  std::string data(size, '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        retry_on_eintr([&] { return disk().read(fd, data.data() + done, size - done, path); });
    if (n < 0) {
      return Error(path.string() + ": read failed: " + errno_text());
    }
    if (n == 0) {
      break; // what was read is kept: the caller's parse finds it truncated
    }
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

Outcome try_write_all(int fd, const char* data, size_t size, const fs::path& path_for_errors) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = retry_on_eintr([&] {
      return disk().write(fd, data + done, std::min<size_t>(size - done, 1u << 30),
                          path_for_errors);
    });
    if (n < 0) {
      return Error(path_for_errors.string() + ": write failed: " + errno_text(),
                   errno == ENOSPC ? "free some disk space and try again" : "");
    }
    done += static_cast<size_t>(n);
  }
  return success();
}

void write_all(int fd, const char* data, size_t size, const fs::path& path_for_errors) {
  try_write_all(fd, data, size, path_for_errors).value();
}

fs::path temporary_sibling(const fs::path& path) {
  static thread_local std::mt19937_64 random(std::random_device{}() ^
                                             static_cast<uint64_t>(::getpid()));
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, ".tmp.%d.%08llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(random() & 0xffffffffULL));
  return fs::path(path.string() + suffix);
}

FileIdentity identity_of(const struct stat& st) {
  FileIdentity out;
  out.device = static_cast<uint64_t>(st.st_dev);
  out.inode = static_cast<uint64_t>(st.st_ino);
  out.size = static_cast<uint64_t>(st.st_size);
  out.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return out;
}

std::optional<FileIdentity> identify(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  return identity_of(st);
}

std::optional<FileIdentity> identify(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  return identity_of(st);
}

AtomicFile::AtomicFile(fs::path target, Durability durability, FileMode mode)
    : AtomicFile(Deferred{}, std::move(target), durability) {
  create(mode).value();
}

AtomicFile::AtomicFile(Deferred, fs::path target, Durability durability)
    : m_target(std::move(target)), m_tmp_path(temporary_sibling(m_target)),
      m_durability(durability) {}

Outcome AtomicFile::create(FileMode mode) {
  m_fd = disk().open(m_tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                     mode.exact ? *mode.exact & 07777 : 0644);
  if (m_fd < 0) {
    return Error(m_target.string() + ": cannot create: " + errno_text());
  }
  m_created = true; // from here on the destructor removes it unless committed
  // The umask must not take a group's write bit, nor mkdir's rules a setgid folder's.
  if (mode.exact && ::fchmod(m_fd, *mode.exact & 07777) != 0) {
    return Error(m_target.string() + ": cannot set its mode: " + errno_text());
  }
  return success();
}

AtomicFile::~AtomicFile() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  if (m_created && !m_committed) {
    disk().unlink(m_tmp_path);
  }
}

void AtomicFile::write(const char* data, size_t size) {
  write_all(m_fd, data, size, m_target);
}

void AtomicFile::commit() {
  try_commit().value();
}

Outcome AtomicFile::try_commit() {
  if (m_durability == Durability::synced && disk().fsync(m_fd, m_tmp_path) != 0) {
    return Error(m_target.string() + ": fsync failed: " + errno_text());
  }
  struct stat st {};
  if (::fstat(m_fd, &st) != 0) {
    return Error(m_target.string() + ": fstat failed: " + errno_text());
  }
  m_identity = identity_of(st);
  int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) {
    return Error(m_target.string() + ": close failed: " + errno_text());
  }
  if (disk().rename(m_tmp_path, m_target) != 0) {
    return Error(m_target.string() + ": rename failed: " + errno_text());
  }
  m_committed = true;
  return success();
}

Outcome try_write_file_atomic(const fs::path& path, const std::string& data, Durability durability,
                              FileMode mode) {
  AtomicFile file(AtomicFile::Deferred{}, path, durability);
  Outcome made = file.create(mode);
  if (made) {
    made = try_write_all(file.m_fd, data.data(), data.size(), path);
  }
  return made ? file.try_commit() : made;
}

void write_file_atomic(const fs::path& path, const std::string& data, Durability durability,
                       FileMode mode) {
  try_write_file_atomic(path, data, durability, mode).value();
}

fs::path temporary_folder() {
  const char* chosen = std::getenv("TMPDIR");
  return chosen != nullptr && *chosen != '\0' ? fs::path(chosen) : fs::path("/tmp");
}

} // namespace npucc::util

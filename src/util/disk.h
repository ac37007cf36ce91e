#pragma once

// Where npucc's file system calls on its outputs meet the file system, behind a narrow
// interface (as ninja's DiskInterface) so that a test can fake a full disk, a failing
// rename, read or fsync and prove what the callers do then. Through disk() go:
// - a compile's outputs: util::AtomicFile and write_all, output/output_folder.cpp's
//   publication of the staged folder;
// - the cache's stores and reads: cache/file_ops.h's copies and digests, the reads of
//   small files (headers, stamps, model indexes, statistics), the rename that publishes an
//   entry, the renames and unlinks that remove one (dir_handle.h), their fsyncs.
//
// Process-wide rather than passed down: the calls happen deep below compile() and
// LocalStorage::store, and on helper threads (output/hashed_file.h's write-behind).
// Only tests replace it, with a ScopedDisk, while nothing else runs.
//
// Every call returns what the system call returns (-1 with errno set on failure) and is
// not retried on EINTR (the callers do that where it matters). The path arguments that
// the system call does not need name the file for a fake to decide by.

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <sys/types.h>

namespace npucc::util {

class Disk {
public:
  virtual ~Disk() = default;
  // open(2).
  virtual int open(const std::filesystem::path& path, int flags, mode_t mode) = 0;
  // read(2) from `fd`, an open file at `path`.
  virtual ssize_t read(int fd, void* data, size_t size, const std::filesystem::path& path) = 0;
  // pread(2) from `fd`, an open file at `path`.
  virtual ssize_t pread(int fd, void* data, size_t size, off_t offset,
                        const std::filesystem::path& path) = 0;
  // write(2) of up to `size` bytes to `fd`, an open file at `path`.
  virtual ssize_t write(int fd, const void* data, size_t size,
                        const std::filesystem::path& path) = 0;
  // copy_file_range(2) of up to `size` bytes from `from` to `to`, an open file at
  // `to_path`: the count copied, 0 at the end of `from`.
  virtual ssize_t copy_range(int from, int to, size_t size,
                             const std::filesystem::path& to_path) = 0;
  // fsync(2) of `fd`, an open file (or folder) at `path`.
  virtual int fsync(int fd, const std::filesystem::path& path) = 0;
  // rename(2).
  virtual int rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // renameat(2) of `from` in the open folder `from_dir` to `to` in `to_dir`; `to_path`
  // names the destination.
  virtual int renameat(int from_dir, const char* from, int to_dir, const char* to,
                       const std::filesystem::path& to_path) = 0;
  // unlink(2).
  virtual int unlink(const std::filesystem::path& path) = 0;
  // unlinkat(2) of `name` in the open folder `dir` (AT_REMOVEDIR in `flags`: a folder),
  // which is `path`.
  virtual int unlinkat(int dir, const char* name, int flags, const std::filesystem::path& path) = 0;
};

// The system calls themselves. A fake derives from it and overrides the one call it fails.
class RealDisk : public Disk {
public:
  int open(const std::filesystem::path& path, int flags, mode_t mode) override;
  ssize_t read(int fd, void* data, size_t size, const std::filesystem::path& path) override;
  ssize_t pread(int fd, void* data, size_t size, off_t offset,
                const std::filesystem::path& path) override;
  ssize_t write(int fd, const void* data, size_t size, const std::filesystem::path& path) override;
  ssize_t copy_range(int from, int to, size_t size, const std::filesystem::path& to_path) override;
  int fsync(int fd, const std::filesystem::path& path) override;
  int rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  int renameat(int from_dir, const char* from, int to_dir, const char* to,
               const std::filesystem::path& to_path) override;
  int unlink(const std::filesystem::path& path) override;
  int unlinkat(int dir, const char* name, int flags, const std::filesystem::path& path) override;
};

// The disk in use: a RealDisk unless a ScopedDisk has put another in its place.
Disk& disk();

// For tests: `fake` serves every call while this object lives.
class ScopedDisk {
public:
  explicit ScopedDisk(Disk& fake);
  ~ScopedDisk();
  ScopedDisk(const ScopedDisk&) = delete;
  ScopedDisk& operator=(const ScopedDisk&) = delete;

private:
  Disk* m_previous;
};

} // namespace npucc::util

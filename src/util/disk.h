#pragma once

// Where npucc's writes of file contents meet the file system, behind a narrow interface
// (as ninja's DiskInterface) so that a test can fake a full disk or a failing write and
// prove what the callers do then: a compile's outputs (util::AtomicFile, write_all) and
// the cache's stores (cache/file_ops.h copies) write through disk().
//
// Process-wide rather than passed down: the writes happen deep below compile() and
// LocalStorage::store, and on helper threads (compiler/hashed_file.h's write-behind).
// Only tests replace it, with a ScopedDisk, while nothing else runs.

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <sys/types.h>

namespace npucc::util {

class Disk {
public:
  virtual ~Disk() = default;
  // write(2) of up to `size` bytes to `fd`, an open file at `path`: the count written,
  // or -1 with errno set (not retried on EINTR: write_all does that).
  virtual ssize_t write(int fd, const void* data, size_t size,
                        const std::filesystem::path& path) = 0;
  // copy_file_range(2) of up to `size` bytes from `from` to `to`, an open file at
  // `to_path`: the count copied, 0 at the end of `from`, or -1 with errno set.
  virtual ssize_t copy_range(int from, int to, size_t size,
                             const std::filesystem::path& to_path) = 0;
};

// The system calls themselves.
class RealDisk : public Disk {
public:
  ssize_t write(int fd, const void* data, size_t size, const std::filesystem::path& path) override;
  ssize_t copy_range(int from, int to, size_t size, const std::filesystem::path& to_path) override;
};

// The disk in use: a RealDisk unless a ScopedDisk has put another in its place.
Disk& disk();

// For tests: `fake` serves every write while this object lives.
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

#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace npucc::util {

namespace fs = std::filesystem;

// Reads a whole regular file; throws npucc::Error naming the path on failure.
std::string read_file(const fs::path& path);

// Reads `length` bytes at `offset`; throws npucc::Error if the file is shorter.
std::string read_file_range(const fs::path& path, uint64_t offset, uint64_t length);

// Writes `data` to an open descriptor, retrying short writes; throws on failure.
void write_all(int fd, const char* data, size_t size, const fs::path& path_for_errors);

// Whether commit() waits for the disk (fsync) before the rename: unsynced is for files
// that are only an optimisation, whose loss or staleness after a crash costs a re-check.
enum class Durability { synced, unsynced };

// A file written beside its target and renamed into place by commit(); if commit()
// is never reached (an error, an exception) the destructor removes the temporary,
// so a reader never sees a partial file.
class AtomicFile {
public:
  explicit AtomicFile(fs::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const char* data, size_t size);
  void write(const std::string& data) { write(data.data(), data.size()); }
  // fsyncs (unless unsynced), closes and renames over the target.
  void commit(Durability durability = Durability::synced);
  const fs::path& temporary_path() const { return m_tmp_path; }

private:
  fs::path m_target;
  fs::path m_tmp_path;
  int m_fd = -1;
  bool m_committed = false;
};

// Convenience: atomically replace `path` with `data`.
void write_file_atomic(const fs::path& path, const std::string& data,
                       Durability durability = Durability::synced);

// A unique name for a temporary sibling of `path`: "<path>.tmp.<pid>.<random>".
fs::path temporary_sibling(const fs::path& path);

} // namespace npucc::util

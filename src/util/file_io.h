#pragma once

#include "npucc/file_identity.h"
#include "util/expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

struct stat;

namespace npucc::util {

namespace fs = std::filesystem;
using npucc::FileIdentity;

struct OpenRule;

// Reads a whole regular file; throws npucc::Error naming the path on failure. Opened as
// util/safe_open.h opens a file the user named (OpenRule::named_by_user: a link is
// followed, a FIFO or folder refused without waiting for a writer).
std::string read_file(const fs::path& path);
// The same, the error returned: for a caller to whom an unreadable file is no error (an
// advisory file, a cache's own bookkeeping) but a default.
Expected<std::string> try_read_file(const fs::path& path);
// The same under the caller's rule (a file in a cache: OpenRule::in_cache, no link).
Expected<std::string> try_read_file(const fs::path& path, const OpenRule& rule);

// Reads `length` bytes at `offset`; throws npucc::Error if the file is shorter.
std::string read_file_range(const fs::path& path, uint64_t offset, uint64_t length);

// Reads `size` bytes at `offset` of `fd` (named `path` in errors), retrying short reads
// and EINTR; throws npucc::Error on a read error, and "PATH: `when_short`" when the file
// ends first.
void read_exactly(int fd, uint64_t offset, char* out, size_t size, const fs::path& path,
                  const char* when_short = "file is shorter than expected (truncated?)");

// Up to `size` bytes from `fd`, the open file at `path`, fewer when the file ends first
// (it shrank since it was stat'ed: the caller's parse then finds it truncated); the
// error "PATH: read failed: REASON" when a read fails.
Expected<std::string> read_up_to(int fd, size_t size, const fs::path& path);

// Writes `data` to an open descriptor, retrying short writes and EINTR; throws on failure.
void write_all(int fd, const char* data, size_t size, const fs::path& path_for_errors);
// The same, the error returned.
Outcome try_write_all(int fd, const char* data, size_t size, const fs::path& path_for_errors);

// lstat of `path`; nullopt when it is missing or not a regular file.
std::optional<FileIdentity> identify(const fs::path& path);
// The same of an open file (fstat).
std::optional<FileIdentity> identify(int fd);
// The identity a stat result describes.
FileIdentity identity_of(const struct stat& st);

// Whether commit() fsyncs. Small state files (settings, statistics, signatures) are
// synced; bulk outputs are not: like a compiler's or ccache's outputs, a crash may lose
// them, and whatever reads them back checks their digests (the cache re-hashes entries
// written before the last boot, see cache/local_storage.cpp).
enum class Durability { synced, unsynced };

// The mode of a file AtomicFile creates: 0644 less the umask (what a plain open gives), or
// exactly `mode` whatever the umask (a cache shared by a group needs its group bits).
struct FileMode {
  static FileMode from_umask() { return FileMode{}; }
  static FileMode exactly(unsigned mode) { return FileMode{mode}; }
  std::optional<unsigned> exact;
};

// A file written beside its target and renamed into place by commit(); if commit()
// is never reached (an error, an exception) the destructor removes the temporary,
// so a reader never sees a partial file. The temporary is opened with O_NOFOLLOW and
// O_EXCL: a planted symlink or file of its name is refused, never written through.
class AtomicFile {
public:
  explicit AtomicFile(fs::path target, Durability durability = Durability::synced,
                      FileMode mode = FileMode::from_umask());
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const char* data, size_t size);
  void write(const std::string& data) { write(data.data(), data.size()); }
  // fsyncs (Durability::synced), closes and renames over the target.
  void commit();
  const fs::path& temporary_path() const { return m_tmp_path; }
  // After commit(): the target as it was written.
  const FileIdentity& identity() const { return m_identity; }

private:
  // try_write_file_atomic's way in: nothing created until create().
  struct Deferred {};
  AtomicFile(Deferred, fs::path target, Durability durability);
  Outcome create(FileMode mode);
  Outcome try_commit();
  friend Outcome try_write_file_atomic(const fs::path&, const std::string&, Durability, FileMode);

  fs::path m_target;
  fs::path m_tmp_path;
  Durability m_durability;
  int m_fd = -1;
  bool m_created = false;
  bool m_committed = false;
  FileIdentity m_identity;
};

// Convenience: atomically replace `path` with `data`.
void write_file_atomic(const fs::path& path, const std::string& data,
                       Durability durability = Durability::synced,
                       FileMode mode = FileMode::from_umask());
// The same, the error returned: for a file that is only an optimisation (a stamp, a
// recorded digest, statistics), whose loss costs a re-hash, never a failed command.
Outcome try_write_file_atomic(const fs::path& path, const std::string& data,
                              Durability durability = Durability::synced,
                              FileMode mode = FileMode::from_umask());

// A unique name for a temporary sibling of `path`: "<path>.tmp.<pid>.<random>".
fs::path temporary_sibling(const fs::path& path);

// The folder for temporary files: $TMPDIR, else /tmp.
fs::path temporary_folder();

} // namespace npucc::util

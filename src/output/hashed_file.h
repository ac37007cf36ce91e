#pragma once

#include "output/write_control.h"
#include "model/weight_store.h"
#include "npucc/compile.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <atomic>
#include <exception>
#include <filesystem>
#include <memory>
#include <string_view>

namespace npucc::output {

// Thrown by a write once its control's `stop` flag is set (GraphWriting: a cache hit, an error in
// another writer).
struct WriteStopped : std::exception {
  const char* what() const noexcept override { return "graph write stopped"; }
};

// An output file (util::AtomicFile, unsynced: a compiler's outputs, see util::Durability)
// written through 1 MiB buffers and hashed (SHA-256) as it goes.
//
// With a second core (util::thread_budget), a helper thread hashes and writes each full
// buffer while the caller fills the next (reading a weight, or decoding a typed one, which
// costs as much as the hash). mirror_to() sends every byte to a second
// file as well, hashed once: two graphs that begin with the same weights share that
// work, and split_mirror() then hands the second file on with a copy of the hash state.
class HashedFile {
public:
  // `control` (may be null): stops the write, and counts the bytes as they leave.
  HashedFile(const std::filesystem::path& path, WriteControl* control);
  ~HashedFile();
  HashedFile(const HashedFile&) = delete;
  HashedFile& operator=(const HashedFile&) = delete;

  void write(std::string_view data);
  // A slice of a mapped input file (a weight), read with pread() rather than copied from
  // the mapping, whose pages would each be faulted in (util::MappedFile::read_fd).
  void write(const model::MappedSlice& slice);

  // Before the first write: every byte goes to `path` too.
  void mirror_to(const std::filesystem::path& path);
  // Ends the mirroring: the second file, as written so far, with the same hash state.
  std::unique_ptr<HashedFile> split_mirror();

  uint64_t bytes() const { return m_bytes; }
  // Renames the file into place; `written_as` is then the file as it was left.
  WrittenFile commit(const std::string& name, FileIdentity& written_as);

private:
  class WriteBehind;
  HashedFile(std::unique_ptr<util::AtomicFile> file, const util::Sha256& hash, uint64_t bytes,
             WriteControl* control);
  void start_buffers();
  void flush_if_full();
  void flush();
  void drain();

  std::unique_ptr<util::AtomicFile> m_file;
  std::unique_ptr<util::AtomicFile> m_mirror;
  util::Sha256 m_hash;
  WriteControl* m_control;
  std::unique_ptr<WriteBehind> m_behind; // null with one core
  std::unique_ptr<char[]> m_own_buffer;  // the buffer without a helper thread
  char* m_buffer = nullptr;
  size_t m_fill = 0;
  uint64_t m_bytes = 0;
};

} // namespace npucc::output

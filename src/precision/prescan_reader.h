#pragma once

#include "precision/overflow_prescan.h"
#include "util/fd.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

// A compile with no cache key to hash (--no-cache) still wants its overflow counts from a
// read() of each weights file rather than from the mapping (overflow_prescan.h): this
// reads the files an OverflowPrescan covers, on a second thread, and feeds it. With a key,
// pipeline::KeyHashing does the same reading while it hashes.
namespace npucc::precision {

// Feeds every chunk of `fd`, read through `buffer` of `size` bytes, to file `file` of
// `prescan`; false on a read error. No allocation, no lock: safe on a thread while the
// process forks.
bool feed_file(OverflowPrescan& prescan, int file, int fd, char* buffer, size_t size);

// The prescan's files, opened, with their index, but for those in `skip` (read elsewhere).
// A file that cannot be opened is left out: the rewrite counts what the prescan lacks.
std::vector<std::pair<util::Fd, int>>
open_prescan_files(const OverflowPrescan& prescan,
                   const std::vector<std::filesystem::path>& skip = {});

class PrescanReader {
public:
  // Opens the files and starts reading them (in the constructor when `second_thread` is
  // false). A file that cannot be opened is left to the rewrite, which counts what the
  // prescan lacks.
  PrescanReader(OverflowPrescan& prescan, bool second_thread);
  ~PrescanReader();
  PrescanReader(const PrescanReader&) = delete;
  PrescanReader& operator=(const PrescanReader&) = delete;

private:
  void read_all();

  OverflowPrescan& m_prescan;
  std::vector<std::pair<util::Fd, int>> m_files;
  std::unique_ptr<char[]> m_buffer;
  std::thread m_thread;
};

} // namespace npucc::precision

#pragma once

#include "util/input_file.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

namespace npucc::util {

// A whole file mapped read-only. Weights are read through the mapping rather than
// copied: the page cache holds them once, and a file of any size (past 2 GiB) fits.
class MappedFile {
public:
  // Maps the open input file, which stays open while the mapping lives. Throws
  // npucc::Error naming the path when it cannot be mapped.
  static std::shared_ptr<const MappedFile> map(std::shared_ptr<const InputFile> file);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {m_data, m_file->stamp().size}; }
  const std::filesystem::path& path() const { return m_file->path(); }
  const std::shared_ptr<const InputFile>& input() const { return m_file; }

  // The mapped file's descriptor, for pread(). Streaming a whole file through read()
  // costs far less than touching every page of its mapping once the pages must be
  // faulted in one by one (a virtual machine's shadow page tables: measured 0.3 s against
  // 0.12 s for 500 MB), so passes over all the weights read rather than map.
  int read_fd() const { return m_file->fd(); }

private:
  MappedFile(std::shared_ptr<const InputFile> file, const char* data)
      : m_file(std::move(file)), m_data(data) {}

  std::shared_ptr<const InputFile> m_file;
  const char* m_data = nullptr;
};

} // namespace npucc::util

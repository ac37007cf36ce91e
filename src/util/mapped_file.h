#pragma once

#include "npucc/file_identity.h"
#include "util/fd.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

namespace npucc::util {

// A whole file mapped read-only. Weights are read through the mapping rather than
// copied: the page cache holds them once, and a file of any size (past 2 GiB) fits.
class MappedFile {
public:
  // Throws npucc::Error naming the path when the file cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {m_data, m_identity.size}; }
  const std::filesystem::path& path() const { return m_path; }
  // The file as it was when mapped.
  const FileIdentity& identity() const { return m_identity; }

  // The mapped file opened again for pread(), or an invalid Fd when the path now names
  // another file. Streaming a whole file through read() costs far less than touching
  // every page of its mapping once the pages must be faulted in one by one (a virtual
  // machine's shadow page tables: measured 0.3 s against 0.12 s for 500 MB), so
  // passes over all the weights read rather than map.
  Fd reopen() const;

private:
  MappedFile(std::filesystem::path path, const char* data, const FileIdentity& identity)
      : m_path(std::move(path)), m_data(data), m_identity(identity) {}

  std::filesystem::path m_path;
  const char* m_data = nullptr;
  FileIdentity m_identity;
};

} // namespace npucc::util

#pragma once

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

  std::string_view bytes() const { return {m_data, m_size}; }
  const std::filesystem::path& path() const { return m_path; }

private:
  MappedFile(std::filesystem::path path, const char* data, uint64_t size)
      : m_path(std::move(path)), m_data(data), m_size(size) {}

  std::filesystem::path m_path;
  const char* m_data = nullptr;
  uint64_t m_size = 0;
};

} // namespace npucc::util

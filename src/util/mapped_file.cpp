#include "util/mapped_file.h"

#include "npucc/error.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>

namespace npucc::util {

std::shared_ptr<const MappedFile> MappedFile::map(std::shared_ptr<const InputFile> file) {
  uint64_t size = file->stamp().size;
  const char* data = nullptr;
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file->fd(), 0);
    if (map == MAP_FAILED) {
      throw Error(file->path().string() + ": cannot map the file: " + std::strerror(errno));
    }
    // Weights are read front to back.
    ::madvise(map, size, MADV_SEQUENTIAL);
    data = static_cast<const char*>(map);
  }
  return std::shared_ptr<const MappedFile>(new MappedFile(std::move(file), data));
}

MappedFile::~MappedFile() {
  if (m_data != nullptr) {
    ::munmap(const_cast<char*>(m_data), m_file->stamp().size);
  }
}

} // namespace npucc::util

#include "util/mapped_file.h"

#include "npucc/error.h"
#include "util/file_io.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::util {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error(path.string() + ": not a regular file");
  }
  auto size = static_cast<uint64_t>(info.st_size);
  const char* data = nullptr;
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      throw Error(path.string() + ": cannot map the file: " + std::strerror(error));
    }
    // Weights are read front to back.
    ::madvise(map, size, MADV_SEQUENTIAL);
    data = static_cast<const char*>(map);
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(new MappedFile(path, data, identity_of(info)));
}

Fd MappedFile::reopen() const {
  Fd fd(::open(m_path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0 ||
      static_cast<uint64_t>(info.st_dev) != m_identity.device ||
      static_cast<uint64_t>(info.st_ino) != m_identity.inode ||
      static_cast<uint64_t>(info.st_size) != m_identity.size) {
    return Fd(-1);
  }
  return fd;
}

MappedFile::~MappedFile() {
  if (m_data != nullptr) {
    ::munmap(const_cast<char*>(m_data), m_identity.size);
  }
}

} // namespace npucc::util

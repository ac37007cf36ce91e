#include "util/eintr.h"

#include <unistd.h>

namespace npucc::util {

ssize_t read_some(int fd, void* buffer, size_t size) {
  return retry_on_eintr([&] { return ::read(fd, buffer, size); });
}

ssize_t read_full(int fd, void* buffer, size_t size) {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < size) {
    ssize_t n = read_some(fd, out + done, size - done);
    if (n < 0) {
      return -1;
    }
    if (n == 0) {
      break;
    }
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

ssize_t pread_full(int fd, void* buffer, size_t size, uint64_t offset) {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < size) {
    ssize_t n = retry_on_eintr(
        [&] { return ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done)); });
    if (n < 0) {
      return -1;
    }
    if (n == 0) {
      break;
    }
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

} // namespace npucc::util

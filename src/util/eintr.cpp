#include "util/eintr.h"

#include <unistd.h>

namespace npucc::util {

ssize_t read_some(int fd, void* buffer, size_t size) {
  return retry_on_eintr([&] { return ::read(fd, buffer, size); });
}

namespace {

// Calls read_at(out, want, done) until `size` bytes or end of file: how many were read, or
// -1 (errno set) on an error.
template <typename ReadAt> ssize_t read_until_full(void* buffer, size_t size, ReadAt read_at) {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < size) {
    ssize_t n = read_at(out + done, size - done, done);
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

} // namespace

ssize_t read_full(int fd, void* buffer, size_t size) {
  return read_until_full(buffer, size,
                         [&](char* out, size_t want, size_t) { return read_some(fd, out, want); });
}

ssize_t pread_full(int fd, void* buffer, size_t size, uint64_t offset) {
  return read_until_full(buffer, size, [&](char* out, size_t want, size_t done) {
    return retry_on_eintr(
        [&] { return ::pread(fd, out, want, static_cast<off_t>(offset + done)); });
  });
}

} // namespace npucc::util

#pragma once

// System calls retried when a signal interrupts them (EINTR), so that no caller writes
// the loop again. npucc installs SIGINT/SIGTERM handlers without SA_RESTART
// (util/interrupt.h), so any blocking call can be interrupted.

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace npucc::util {

// Calls `call` until it returns anything but -1 with errno EINTR: e.g.
// retry_on_eintr([&] { return ::waitpid(pid, &status, 0); }).
template <typename Call> auto retry_on_eintr(Call call) -> decltype(call()) {
  decltype(call()) result;
  do {
    result = call();
  } while (result == -1 && errno == EINTR);
  return result;
}

// One read(2): the count, 0 at end of file, -1 (errno set) on an error.
ssize_t read_some(int fd, void* buffer, size_t size);

// read(2) until `size` bytes or end of file: how many were read, or -1 (errno set) on an
// error.
ssize_t read_full(int fd, void* buffer, size_t size);
// The same with pread(2) from `offset` (the file position is left alone).
ssize_t pread_full(int fd, void* buffer, size_t size, uint64_t offset);

} // namespace npucc::util

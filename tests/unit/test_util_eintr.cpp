#include "util/eintr.h"
#include "util/file_io.h"

#include <cerrno>
#include <doctest/doctest.h>
#include <string>
#include <unistd.h>

namespace {

// A pipe holding `text`, its writing end closed: reads see `text`, then end of file.
struct FilledPipe {
  int fds[2] = {-1, -1};
  explicit FilledPipe(const std::string& text) {
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fds[1]);
  }
  ~FilledPipe() { ::close(fds[0]); }
  int fd() const { return fds[0]; }
};

} // namespace

TEST_SUITE("npucc::util::eintr") {
  TEST_CASE("a call interrupted by a signal is made again; other errors are returned") {
    int calls = 0;
    auto interrupted_twice = [&] {
      ++calls;
      errno = calls <= 2 ? EINTR : 0;
      return calls <= 2 ? -1 : 7;
    };
    CHECK(npucc::util::retry_on_eintr(interrupted_twice) == 7);
    CHECK(calls == 3);

    calls = 0;
    auto failing = [&] {
      ++calls;
      errno = EIO;
      return -1;
    };
    CHECK(npucc::util::retry_on_eintr(failing) == -1);
    CHECK(errno == EIO);
    CHECK(calls == 1);
  }

  TEST_CASE("read_full reads up to the size or the end of the file") {
    FilledPipe pipe("abcdef");
    char buffer[4];
    CHECK(npucc::util::read_full(pipe.fd(), buffer, sizeof buffer) == 4);
    CHECK(std::string(buffer, 4) == "abcd");
    CHECK(npucc::util::read_full(pipe.fd(), buffer, sizeof buffer) == 2);
    CHECK(npucc::util::read_some(pipe.fd(), buffer, sizeof buffer) == 0);
    CHECK(npucc::util::read_full(-1, buffer, sizeof buffer) == -1);
    CHECK(errno == EBADF);
  }

  TEST_CASE("read_up_to keeps what a file that shrank still had, and says when a read fails") {
    FilledPipe pipe("abc");
    CHECK(npucc::util::read_up_to(pipe.fd(), 10, "pipe").value() == "abc");
    auto failed = npucc::util::read_up_to(-1, 10, "nowhere");
    REQUIRE_FALSE(failed.has_value());
    CHECK(std::string(failed.error().what()) == "nowhere: read failed: Bad file descriptor");
  }
}

#include "test_support.h"
#include "util/file_io.h"
#include "util/interrupt.h"
#include "util/test_point.h"

#include <csignal>
#include <cstdlib>
#include <doctest/doctest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// Runs `child` in a forked process (the handlers and the test point's rule are per
// process) and returns its wait status. The child ends with _exit: no doctest teardown.
template <typename Child> int in_child(Child child) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    npucc::util::forget_children_after_fork(); // the test binary's ONNX worker is not ours
    child();
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

} // namespace

TEST_SUITE("npucc::util::interrupt") {
  TEST_CASE("a signal inside DeferInterrupts waits for its end, then stops the process") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    int status = in_child([&] {
      npucc::util::install_interrupt_handlers();
      {
        npucc::util::DeferInterrupts whole;
        ::raise(SIGTERM);
        // Still here: the handler noted the signal and returned.
        if (!npucc::util::interrupt_pending() || ::write(fds[1], "x", 1) != 1) {
          ::_exit(3);
        }
      }
      ::_exit(4); // not reached: the end of the deferral acts on the signal
    });
    ::close(fds[1]);
    char byte = 0;
    CHECK(::read(fds[0], &byte, 1) == 1);
    ::close(fds[0]);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  }

  TEST_CASE("without a deferral a signal stops the process at once") {
    int status = in_child([] {
      npucc::util::install_interrupt_handlers();
      ::raise(SIGINT);
      ::_exit(4);
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGINT);
  }
}

TEST_SUITE("npucc::util::test_point") {
  TEST_CASE("NPUCC_TEST_STOP_AT stops at the named point, writes the note, waits for a signal") {
    fs::path dir = npucc::test::temp_dir("test-point");
    fs::path note = dir / "stopped";
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      npucc::util::forget_children_after_fork();
      ::setenv("NPUCC_TEST_STOP_AT", "write:*", 1);
      ::setenv("NPUCC_TEST_STOP_NOTE", note.c_str(), 1);
      npucc::util::reread_test_point_rule();
      npucc::util::install_interrupt_handlers();
      npucc::util::test_point("pass:first");   // no match: goes on
      npucc::util::test_point("write:buffer"); // stops here until the signal
      ::_exit(4);
    }
    // The note is the observable state: the child stopped at the point. A child that ends
    // without writing it (a point that does not stop) fails the case instead of hanging it.
    std::string text;
    int early_status = 0;
    pid_t ended = 0;
    while ((text.empty() || text.back() != '\n') && ended == 0) {
      ::usleep(2000);
      if (fs::exists(note)) {
        text = npucc::util::read_file(note);
      }
      ended = ::waitpid(pid, &early_status, WNOHANG);
    }
    REQUIRE_MESSAGE(ended == 0, "the child ended (status " << early_status
                                                           << ") without stopping at write:buffer");
    CHECK(text == "write:buffer " + std::to_string(pid) + "\n");
    REQUIRE(::kill(pid, SIGINT) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGINT);
  }

  TEST_CASE("a number stops at that many points; a note already there means no stop") {
    fs::path dir = npucc::test::temp_dir("test-point-n");
    fs::path note = dir / "stopped";
    npucc::util::write_file_atomic(note, "taken 1\n");
    int status = in_child([&] {
      ::setenv("NPUCC_TEST_STOP_AT", "2", 1);
      ::setenv("NPUCC_TEST_STOP_NOTE", note.c_str(), 1);
      npucc::util::reread_test_point_rule();
      npucc::util::test_point("a");
      npucc::util::test_point("b"); // the second point, but another process stopped first
      ::_exit(5);
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 5);
    CHECK(npucc::util::read_file(note) == "taken 1\n");
  }
}

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

// The pipes of "a second signal during the cleanup": the watched child is ready, it got
// its SIGTERM, it may end.
struct SecondSignalPipes {
  int ready[2], stopping[2], release[2];
  SecondSignalPipes() {
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(stopping) == 0);
    REQUIRE(::pipe(release) == 0);
  }
  ~SecondSignalPipes() {
    for (int fd : {ready[0], ready[1], stopping[0], stopping[1], release[0], release[1]}) {
      ::close(fd);
    }
  }
};

// The watched child: tells it is ready, waits for SIGTERM (held, taken by sigwait), tells
// it got it, and ends when released.
[[noreturn]] void watched_child(const SecondSignalPipes& pipes) {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, nullptr);
  int got = 0;
  char byte = 'x';
  bool told = ::write(pipes.ready[1], &byte, 1) == 1 && ::sigwait(&term, &got) == 0 &&
              ::write(pipes.stopping[1], &byte, 1) == 1 && ::read(pipes.release[0], &byte, 1) == 1;
  ::_exit(told ? 0 : 5);
}

// The process interrupted: forks and watches the child (deferred, as npucc's forks are),
// and gets SIGINT, acted on at the deferral's end.
[[noreturn]] void interrupted_with_a_child(const SecondSignalPipes& pipes) {
  npucc::util::forget_children_after_fork();
  npucc::util::install_interrupt_handlers();
  {
    npucc::util::DeferInterrupts forking;
    pid_t child = ::fork();
    if (child == 0) {
      watched_child(pipes);
    }
    npucc::util::watch_child(child);
    char byte = 0;
    if (::read(pipes.ready[0], &byte, 1) != 1) {
      ::_exit(6);
    }
    ::raise(SIGINT);
  }
  ::_exit(7); // not reached: the end of the deferral acts on the signal
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

  TEST_CASE("SIGHUP is an interrupt too: exit 129") {
    int status = in_child([] {
      npucc::util::install_interrupt_handlers();
      ::raise(SIGHUP);
      ::_exit(4);
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGHUP);
  }

  TEST_CASE("a second signal during the cleanup waits for it (timeout signals twice)") {
    // The process interrupted stops a watched child first; the child says when it got
    // its SIGTERM (the cleanup has begun: an observable state), the test sends the second
    // SIGINT then, and only then lets the child end.
    SecondSignalPipes pipes;
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      interrupted_with_a_child(pipes);
    }
    char byte = 0;
    REQUIRE(::read(pipes.stopping[0], &byte, 1) == 1);
    REQUIRE(::kill(pid, SIGINT) == 0); // as timeout's second, to the process group
    REQUIRE(::write(pipes.release[1], "x", 1) == 1);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status)); // not killed by the second signal
    CHECK(WEXITSTATUS(status) == 128 + SIGINT);
  }

  TEST_CASE("a quiet child has a process group of its own and ignores SIGINT and SIGHUP") {
    int status = in_child([] {
      npucc::util::install_interrupt_handlers();
      npucc::util::become_quiet_child();
      if (::getpgrp() != ::getpid()) {
        ::_exit(5);
      }
      ::raise(SIGINT);
      ::raise(SIGHUP);
      ::_exit(6); // still here: neither ended it
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 6);
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

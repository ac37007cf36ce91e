#include "cache/stats.h"
#include "npucc/error.h"
#include "test_support.h"

#include <cstdlib>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;
using npucc::cache::DirectoryLock;
using npucc::cache::Wait;

namespace {

// Holds CACHE/lock/NAME as another process would: its own open file description.
struct Holder {
  int fd;
  Holder(const fs::path& root, const char* name) {
    fs::create_directories(root / "lock");
    fd = ::open((root / "lock" / name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  }
  ~Holder() { ::close(fd); }
};

} // namespace

TEST_SUITE("npucc::cache::DirectoryLock") {
  TEST_CASE("a held lock is given up at its deadline, and said to be held") {
    fs::path root = npucc::test::temp_dir("locks");
    npucc::cache::Modes modes;
    {
      Holder holder(root, "stats");
      DirectoryLock advisory(root, "stats", Wait::advisory, modes);
      CHECK_FALSE(advisory.acquired());
      CHECK(advisory.timed_out());
      ::setenv("NPUCC_CACHE_LOCK_TIMEOUT", "0", 1);
      DirectoryLock removal(root, "stats", Wait::removal, modes);
      ::unsetenv("NPUCC_CACHE_LOCK_TIMEOUT");
      CHECK(removal.timed_out());
      CHECK(removal.busy_text().find("lock/stats is held by another process") == 0);
      npucc::cache::StatsFile stats(root, modes, npucc::CacheAccess::read_write);
      CHECK_FALSE(stats.update({{"hits", 1}})); // skipped, said so
    }
    DirectoryLock free_lock(root, "stats", Wait::no, modes);
    CHECK(free_lock.acquired());
    CHECK_FALSE(free_lock.timed_out());
  }

  TEST_CASE("NPUCC_CACHE_LOCK_TIMEOUT takes whole seconds; anything else is refused, cut") {
    ::setenv("NPUCC_CACHE_LOCK_TIMEOUT", "7", 1);
    CHECK(npucc::cache::removal_lock_timeout_ms() == 7000);
    ::setenv("NPUCC_CACHE_LOCK_TIMEOUT", std::string(5000, '9').c_str(), 1);
    try {
      npucc::cache::removal_lock_timeout_ms();
      FAIL("no error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).size() < 300);
      CHECK(std::string(e.what()).find("NPUCC_CACHE_LOCK_TIMEOUT") == 0);
    }
    ::unsetenv("NPUCC_CACHE_LOCK_TIMEOUT");
    CHECK(npucc::cache::removal_lock_timeout_ms() ==
          npucc::cache::k_default_removal_lock_seconds * 1000);
  }
}

#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/interrupt.h"
#include "util/private_temp_folder.h"

#include <csignal>
#include <cstdlib>
#include <doctest/doctest.h>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// TMPDIR set to `dir` while this lives (the folder's parent), and the umask to `mask`: the
// most permissive one shows that the modes do not come from it.
class TemporaryFolderIs {
public:
  TemporaryFolderIs(const fs::path& dir, mode_t mask) : m_mask(::umask(mask)) {
    const char* before = std::getenv("TMPDIR");
    m_before = before != nullptr ? before : "";
    m_had = before != nullptr;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TemporaryFolderIs() {
    ::umask(m_mask);
    if (m_had) {
      ::setenv("TMPDIR", m_before.c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }

private:
  mode_t m_mask;
  std::string m_before;
  bool m_had = false;
};

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void write_private(const fs::path& path) {
  npucc::util::write_file_atomic(
      path, "weights", npucc::util::Durability::unsynced,
      npucc::util::FileMode::exactly(npucc::util::PrivateTempFolder::k_file_mode));
}

} // namespace

TEST_SUITE("npucc::util::PrivateTempFolder") {
  TEST_CASE("a 0700 folder of this process's in TMPDIR whatever the umask, its files 0600") {
    fs::path tmp = npucc::test::temp_dir("private-modes");
    TemporaryFolderIs setting(tmp, 0);
    fs::path made;
    {
      npucc::util::PrivateTempFolder folder("npucc-graph");
      made = folder.path();
      CHECK(made.parent_path() == tmp);
      const std::string prefix = "npucc-graph.tmp." + std::to_string(::getpid()) + ".";
      CHECK(made.filename().string().rfind(prefix, 0) == 0); // the sweep's name
      CHECK(mode_of(made) == 0700);
      write_private(made / "graph.onnx");
      CHECK(mode_of(made / "graph.onnx") == 0600);
      CHECK(fs::is_empty(made) == false);
    }
    CHECK_FALSE(fs::exists(made)); // gone with its files
    CHECK(fs::is_empty(tmp));
  }

  TEST_CASE("an exception on the way removes it too") {
    fs::path tmp = npucc::test::temp_dir("private-exception");
    TemporaryFolderIs setting(tmp, 022);
    try {
      npucc::util::PrivateTempFolder folder("npucc-inputs");
      write_private(folder.path() / "inputs");
      throw std::runtime_error("the check failed");
    } catch (const std::runtime_error&) {
    }
    CHECK(fs::is_empty(tmp));
  }

  TEST_CASE("a TMPDIR that cannot hold it is one error naming it") {
    fs::path missing = npucc::test::temp_dir("private-missing") / "none";
    TemporaryFolderIs setting(missing, 022);
    CHECK_THROWS_WITH_AS(npucc::util::PrivateTempFolder("npucc-graph"),
                         doctest::Contains(missing.c_str()), npucc::Error);
  }

  TEST_CASE("an interrupt sweeps it with its files") {
    fs::path tmp = npucc::test::temp_dir("private-interrupt");
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      npucc::util::forget_children_after_fork();
      ::setenv("TMPDIR", tmp.c_str(), 1);
      npucc::util::install_interrupt_handlers();
      npucc::util::PrivateTempFolder folder("npucc-graph");
      write_private(folder.path() / "graph.onnx");
      ::raise(SIGHUP); // the handler sweeps and exits: the destructor never runs
      ::_exit(4);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + SIGHUP);
    CHECK(fs::is_empty(tmp));
  }
}

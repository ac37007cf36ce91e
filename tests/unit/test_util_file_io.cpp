#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

namespace fs = std::filesystem;
using npucc::util::AtomicFile;
using npucc::util::Durability;
using npucc::util::FileMode;

namespace {

unsigned mode_of(const fs::path& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

// Sets the umask for one scope.
struct Umask {
  explicit Umask(mode_t mask) : m_old(::umask(mask)) {}
  ~Umask() { ::umask(m_old); }
  mode_t m_old;
};

} // namespace

TEST_SUITE("npucc::util::AtomicFile") {
  TEST_CASE("an exact mode holds whatever the umask; by default the umask applies") {
    fs::path dir = npucc::test::temp_dir("atomic-mode");
    Umask narrow(077);
    npucc::util::write_file_atomic(dir / "shared", "x", Durability::unsynced,
                                   FileMode::exactly(0660));
    CHECK(mode_of(dir / "shared") == 0660);
    npucc::util::write_file_atomic(dir / "plain", "x", Durability::unsynced);
    CHECK(mode_of(dir / "plain") == 0600);
    CHECK(npucc::util::read_file(dir / "shared") == "x");
  }

  TEST_CASE("the temporary goes unless committed, and replaces the target when it is") {
    fs::path dir = npucc::test::temp_dir("atomic-commit");
    npucc::util::write_file_atomic(dir / "target", "old");
    fs::path temporary;
    {
      AtomicFile file(dir / "target", Durability::unsynced, FileMode::exactly(0640));
      temporary = file.temporary_path();
      file.write("new");
      CHECK(fs::exists(temporary));
    }
    CHECK_FALSE(fs::exists(temporary));
    CHECK(npucc::util::read_file(dir / "target") == "old");
    AtomicFile file(dir / "target", Durability::unsynced, FileMode::exactly(0640));
    file.write("new");
    file.commit();
    CHECK(npucc::util::read_file(dir / "target") == "new");
    CHECK(mode_of(dir / "target") == 0640);
  }
}

#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/safe_open.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using npucc::util::OpenRule;
using npucc::util::open_regular_file;
using npucc::util::open_regular_file_at;

namespace {

std::string error_of(const fs::path& path, const OpenRule& rule = OpenRule{}) {
  auto opened = open_regular_file(path, rule);
  REQUIRE_FALSE(opened);
  return opened.error().what();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_SUITE("npucc::util::safe_open") {
  TEST_CASE("a regular file opens, its fstat kept, the descriptor blocking again") {
    fs::path dir = npucc::test::temp_dir("safe-open-file");
    npucc::util::write_file_atomic(dir / "f", "12345");
    auto opened = open_regular_file(dir / "f");
    REQUIRE(opened);
    CHECK(opened->info.st_size == 5);
    CHECK((::fcntl(opened->fd.get(), F_GETFL) & O_NONBLOCK) == 0);
    CHECK((::fcntl(opened->fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
  }

  TEST_CASE("a FIFO is refused at once, never waited on for a writer") {
    // Without O_NONBLOCK this test would hang in open(): nobody ever writes the FIFO.
    fs::path dir = npucc::test::temp_dir("safe-open-fifo");
    REQUIRE(::mkfifo((dir / "pipe").c_str(), 0600) == 0);
    CHECK(contains(error_of(dir / "pipe"), "is a FIFO, not a regular file"));
    CHECK(contains(error_of(dir / "pipe", OpenRule::named_by_user()), "is a FIFO"));
    // Through a link a user named, too.
    fs::create_symlink(dir / "pipe", dir / "to-pipe");
    CHECK(contains(error_of(dir / "to-pipe", OpenRule::named_by_user()), "is a FIFO"));
    // And util::read_file, which every user-named file goes through.
    CHECK_THROWS_WITH_AS(npucc::util::read_file(dir / "pipe"),
                         doctest::Contains("not a regular file"), npucc::Error);
    // For writing as well (no reader: ENXIO instead of a wait).
    OpenRule write;
    write.access = O_WRONLY;
    CHECK(contains(error_of(dir / "pipe", write), "cannot open"));
  }

  TEST_CASE("a folder is refused") {
    fs::path dir = npucc::test::temp_dir("safe-open-dir");
    CHECK(contains(error_of(dir), "is a folder, not a regular file"));
  }

  TEST_CASE("a symlink is refused in a cache, followed where the user named it") {
    fs::path dir = npucc::test::temp_dir("safe-open-link");
    npucc::util::write_file_atomic(dir / "target", "x");
    fs::create_symlink(dir / "target", dir / "link");
    CHECK(contains(error_of(dir / "link", OpenRule::in_cache()), "is a symlink"));
    CHECK(open_regular_file(dir / "link", OpenRule::named_by_user()));
  }

  TEST_CASE("the owner, the mode and the size are the caller's rule") {
    fs::path dir = npucc::test::temp_dir("safe-open-rule");
    npucc::util::write_file_atomic(dir / "f", "123456", npucc::util::Durability::unsynced,
                                   npucc::util::FileMode::exactly(0664));
    OpenRule owners;
    owners.owners = {::geteuid() + 1};
    CHECK(contains(error_of(dir / "f", owners), "is owned by user"));
    owners.owners.push_back(::geteuid());
    CHECK(open_regular_file(dir / "f", owners));

    OpenRule exact;
    exact.exact_mode = 0444;
    CHECK(contains(error_of(dir / "f", exact), "has mode 0664, not 0444"));
    exact.exact_mode = 0664;
    CHECK(open_regular_file(dir / "f", exact));

    OpenRule closed;
    closed.forbidden_bits = S_IWGRP | S_IWOTH;
    CHECK(contains(error_of(dir / "f", closed), "open to others"));

    OpenRule small;
    small.max_bytes = 5;
    CHECK(contains(error_of(dir / "f", small), "unexpectedly large (6 bytes, at most 5)"));
    small.max_bytes = 6;
    CHECK(open_regular_file(dir / "f", small));
  }

  TEST_CASE("relative to an open folder, the same checks") {
    fs::path dir = npucc::test::temp_dir("safe-open-at");
    npucc::util::write_file_atomic(dir / "f", "x");
    REQUIRE(::mkfifo((dir / "pipe").c_str(), 0600) == 0);
    int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(dir_fd >= 0);
    CHECK(open_regular_file_at(dir_fd, "f", dir / "f"));
    auto pipe = open_regular_file_at(dir_fd, "pipe", dir / "pipe");
    REQUIRE_FALSE(pipe);
    CHECK(contains(pipe.error().what(), (dir / "pipe").string() + ": is a FIFO"));
    ::close(dir_fd);
  }
}

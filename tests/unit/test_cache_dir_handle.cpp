#include "cache/dir_handle.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using npucc::cache::DirHandle;
using npucc::cache::remove_within;

TEST_SUITE("npucc::cache::DirHandle") {
  TEST_CASE("a folder swapped for a link after it was opened is noticed, never followed") {
    fs::path root = npucc::test::temp_dir("handle");
    fs::path outside = npucc::test::temp_dir("handle-outside");
    fs::create_directories(root / "tmp");
    npucc::util::write_file_atomic(root / "tmp" / "old", "stale");
    npucc::util::write_file_atomic(outside / "old", "precious");
    DirHandle top = DirHandle::open(root);
    DirHandle tmp = top.child("tmp");
    REQUIRE(tmp.valid());
    CHECK(tmp.names() == std::vector<std::string>{"old"});
    CHECK(tmp.still_at(top, "tmp"));
    fs::rename(root / "tmp", root / "away");
    fs::create_directory_symlink(outside, root / "tmp");
    CHECK_FALSE(tmp.still_at(top, "tmp"));
    // What the handle removes is in the folder it opened, wherever that went.
    CHECK(tmp.remove("old").ok());
    CHECK_FALSE(fs::exists(root / "away" / "old"));
    CHECK(npucc::util::read_file(outside / "old") == "precious");
    CHECK_FALSE(top.child("tmp").valid()); // a link is not opened as a folder
  }

  TEST_CASE("remove_within refuses a link on the way, and a path outside the root") {
    fs::path root = npucc::test::temp_dir("within");
    fs::path outside = npucc::test::temp_dir("within-outside");
    fs::create_directories(root / "models");
    npucc::util::write_file_atomic(outside / "f", "precious");
    fs::create_directory_symlink(outside, root / "models" / "aa");
    auto removed = remove_within(root, root / "models" / "aa" / "f");
    CHECK_FALSE(removed.ok());
    CHECK(removed.error.find("not a folder (a link?)") != std::string::npos);
    CHECK(npucc::util::read_file(outside / "f") == "precious");
    CHECK_FALSE(remove_within(root, outside / "f").ok());
    CHECK(npucc::util::read_file(outside / "f") == "precious");
    // The link itself, at the end of the path, is removed (never its target).
    CHECK(remove_within(root, root / "models" / "aa").ok());
    CHECK(fs::symlink_status(root / "models" / "aa").type() == fs::file_type::not_found);
    CHECK(npucc::util::read_file(outside / "f") == "precious");
  }

  TEST_CASE("bytes_of counts regular files without following links") {
    fs::path root = npucc::test::temp_dir("bytes");
    fs::create_directories(root / "d");
    npucc::util::write_file_atomic(root / "d" / "a", "12345");
    fs::create_symlink("/etc/passwd", root / "d" / "l");
    CHECK(DirHandle::open(root).bytes_of("d") == 5);
  }
}

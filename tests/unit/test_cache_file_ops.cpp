#include "cache/file_ops.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using npucc::cache::remove_flat;

TEST_SUITE("npucc::cache::file_ops") {
  TEST_CASE("remove_flat removes a folder of files and links, never what a link points to") {
    fs::path dir = npucc::test::temp_dir("flat") / "entry";
    fs::path outside = npucc::test::temp_dir("outside");
    npucc::util::write_file_atomic(outside / "precious", "keep");
    fs::create_directories(dir);
    npucc::util::write_file_atomic(dir / "a", "12345");
    fs::create_symlink(outside / "precious", dir / "link");
    auto removed = remove_flat(dir);
    CHECK(removed.ok());
    CHECK(removed.bytes == 5);
    CHECK_FALSE(fs::exists(dir));
    CHECK(npucc::util::read_file(outside / "precious") == "keep");
  }

  TEST_CASE("remove_flat never enters a subfolder: the folder stays, named in the error") {
    fs::path dir = npucc::test::temp_dir("flat") / "entry";
    fs::create_directories(dir / "sub");
    npucc::util::write_file_atomic(dir / "sub" / "f", "keep");
    npucc::util::write_file_atomic(dir / "a", "x");
    auto removed = remove_flat(dir);
    CHECK_FALSE(removed.ok());
    CHECK(removed.error.find("sub: a folder npucc did not write") != std::string::npos);
    CHECK(npucc::util::read_file(dir / "sub" / "f") == "keep");
    CHECK(remove_flat(dir / "missing").ok()); // already gone is not a failure
  }
}

#include "cache/file_ops.h"
#include "cache/storage.h"
#include "npucc/cache.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

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

TEST_SUITE("npucc::cache::materialise_file link modes") {
  using npucc::cache::AllowLink;
  using npucc::cache::materialise_file;
  using npucc::cache::Sync;
  using npucc::cache::Transfer;

  // The link count of `path`: 1 for a copy (or reflink), 2 for a hard link to `from`.
  nlink_t links_of(const fs::path& path) {
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    return info.st_nlink;
  }

  TEST_CASE("AllowLink::yes links; AllowLink::no never does") {
    fs::path dir = npucc::test::temp_dir("materialise");
    npucc::util::write_file_atomic(dir / "entry.onnx", "graph bytes");
    Transfer linked =
        materialise_file(dir / "entry.onnx", dir / "a.onnx", AllowLink::yes, Sync::no);
    Transfer copied = materialise_file(dir / "entry.onnx", dir / "b.onnx", AllowLink::no, Sync::no);
    CHECK(copied != Transfer::hard_link);
    CHECK(links_of(dir / "b.onnx") == 1);
    CHECK(npucc::util::read_file(dir / "b.onnx") == "graph bytes");
    if (linked == Transfer::hard_link) {    // a filesystem that reflinks copies instead
      CHECK(links_of(dir / "a.onnx") == 2); // the entry and a; b is a copy
    }
  }

  TEST_CASE("AllowLink::if_unchangeable copies a file this user owns, even a read-only one") {
    fs::path dir = npucc::test::temp_dir("materialise");
    npucc::util::write_file_atomic(dir / "entry.onnx", "graph bytes");
    fs::permissions(dir / "entry.onnx",
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    Transfer how = materialise_file(dir / "entry.onnx", dir / "out.onnx",
                                    AllowLink::if_unchangeable, Sync::no);
    CHECK(how != Transfer::hard_link); // the owner could chmod it and write
    CHECK(links_of(dir / "entry.onnx") == 1);
  }

  TEST_CASE("link modes map to what they allow") {
    using npucc::LinkMode;
    CHECK(npucc::cache::link_allowed_by(LinkMode::copy) == AllowLink::no);
    CHECK(npucc::cache::link_allowed_by(LinkMode::hardlink) == AllowLink::yes);
    CHECK(npucc::cache::link_allowed_by(LinkMode::automatic) == AllowLink::if_unchangeable);
    CHECK(npucc::parse_link_mode("hardlink", "--link-mode") == LinkMode::hardlink);
    CHECK(npucc::link_mode_name(npucc::parse_link_mode("auto", "x")) == std::string("auto"));
    CHECK_THROWS_WITH(npucc::parse_link_mode("symlink", "--link-mode"),
                      doctest::Contains("--link-mode: \"symlink\" is not a link mode"));
  }

  TEST_CASE("describe_transfers names one way, or counts each way") {
    using npucc::cache::describe_transfers;
    CHECK(describe_transfers({Transfer::copy, Transfer::copy}) == "copy");
    CHECK(describe_transfers({Transfer::hard_link, Transfer::copy, Transfer::hard_link}) ==
          "hard link (2 files), copy (1 file)");
  }
}

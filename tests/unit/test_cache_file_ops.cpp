#include "cache/file_ops.h"
#include "cache/storage.h"
#include "npucc/cache.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/disk.h"
#include "util/file_io.h"
#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
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

  // Copies fail with EIO once `after` bytes are through (a bad block, a vanished device).
  class CopyFails : public npucc::util::RealDisk {
  public:
    ssize_t copy_range(int from, int to, size_t size, const fs::path& to_path) override {
      if (m_copied >= (1 << 20)) {
        errno = EIO;
        return -1;
      }
      ssize_t n = RealDisk::copy_range(from, to, std::min<size_t>(size, 1 << 20), to_path);
      m_copied += n > 0 ? n : 0;
      return n;
    }

  private:
    std::atomic<int64_t> m_copied{0};
  };

  TEST_CASE("a copy left running in the background is whole once finish() returns") {
    fs::path dir = npucc::test::temp_dir("materialise");
    std::string bytes(3 << 20, 'b');
    bytes.back() = 'e';
    npucc::util::write_file_atomic(dir / "weights.data", bytes);
    std::unique_ptr<npucc::util::BackgroundTask> copying;
    Transfer how =
        materialise_file(dir / "weights.data", dir / "out.data", AllowLink::no, Sync::no, &copying);
    if (how == Transfer::reflink) { // nothing left to copy on a filesystem that shares blocks
      CHECK(copying == nullptr);
    } else {
      CHECK(how == Transfer::copy);
      REQUIRE(copying != nullptr);
      copying->finish();
    }
    CHECK(npucc::util::read_file(dir / "out.data") == bytes);
  }

  TEST_CASE("a background copy that fails is removed, and finish() throws what it met") {
    fs::path dir = npucc::test::temp_dir("materialise");
    npucc::util::write_file_atomic(dir / "weights.data", std::string(3 << 20, 'b'));
    CopyFails failing;
    npucc::util::ScopedDisk use(failing);
    std::unique_ptr<npucc::util::BackgroundTask> copying;
    Transfer how =
        materialise_file(dir / "weights.data", dir / "out.data", AllowLink::no, Sync::no, &copying);
    if (how == Transfer::reflink) {
      return; // the disk is never asked to copy
    }
    REQUIRE(copying != nullptr);
    CHECK_THROWS_WITH_AS(copying->finish(), doctest::Contains("out.data: copy failed"),
                         npucc::Error);
    CHECK_FALSE(fs::exists(dir / "out.data"));
    CHECK_NOTHROW(copying->finish()); // the error is reported once
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

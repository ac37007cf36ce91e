#include "cache/entry_format.h"
#include "cache/entry_signature.h"
#include "cache/local_storage.h"
#include "npucc/cache.h"
#include "npucc/error.h"
#include "test_cache_support.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <doctest/doctest.h>
#include <map>
#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace npucc::cache;

namespace {

struct Fixture {
  fs::path root = npucc::test::temp_dir("staging");
  LocalStorage storage{(npucc::init_cache_dir(root), fs::canonical(root))};

  // An entry folder as a remote bundle unpacks it: the header and its one file.
  TempPath staged_entry(const std::string& key, const std::string& bytes) {
    TempPath stage = storage.temp_folder("remote-" + key.substr(0, 16));
    npucc::util::write_file_atomic(stage.path() / "high.onnx", bytes);
    fs::permissions(stage.path() / "high.onnx", fs::perms::owner_read | fs::perms::group_read |
                                                    fs::perms::others_read); // as imports are
    EntryHeader header = npucc::test::entry_header(key);
    header.files.push_back({"high.onnx", npucc::util::sha256_hex(bytes), bytes.size()});
    npucc::util::write_file_atomic(stage.path() / k_header_file, serialize_header(header));
    return stage;
  }
};

unsigned mode_of(const fs::path& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

} // namespace

TEST_SUITE("npucc::cache::LocalStaging") {
  TEST_CASE("a temporary in tmp/ goes when dropped, unless released") {
    Fixture f;
    fs::path kept;
    {
      TempPath folder = f.storage.temp_folder("check");
      CHECK(folder.path().parent_path() == f.storage.root() / "tmp");
      CHECK(mode_of(folder.path()) == f.storage.modes().dir);
      TempPath moved = std::move(folder);
      CHECK(folder.path().empty());
      npucc::util::write_file_atomic(moved.path() / "x", "x");
      TempPath name = f.storage.temp_name("upload");
      CHECK_FALSE(fs::exists(name.path()));
      TempPath released = f.storage.temp_folder("kept");
      kept = released.path();
      released.release();
      CHECK(fs::exists(moved.path()));
    }
    CHECK(fs::exists(kept));
    size_t left = 0;
    for (const auto& entry : fs::directory_iterator(f.storage.root() / "tmp")) {
      left += entry.path() == kept ? 0 : 1;
    }
    CHECK(left == 0);
  }

  TEST_CASE("a staged entry is published as it came, and a damaged one replaced") {
    Fixture f;
    const std::string key(64, 'e');
    TempPath first = f.staged_entry(key, "graph bytes");
    fs::path staged = first.path();
    CHECK(f.storage.publish_staged(first, key, Replace::no, {}));
    CHECK(first.path().empty());
    CHECK_FALSE(fs::exists(staged));
    fs::path out = npucc::test::temp_dir("staging-out");
    CHECK(f.storage.fetch(key, out).status == FetchStatus::hit);

    SUBCASE("a second import finds the first published and leaves it") {
      TempPath second = f.staged_entry(key, "other bytes");
      CHECK(f.storage.publish_staged(second, key, Replace::no, {}));
      CHECK_FALSE(second.path().empty()); // not published: dropped with the TempPath
      CHECK(npucc::util::read_file(f.storage.entry_dir(key) / "high.onnx") == "graph bytes");
    }
    SUBCASE("Replace::yes removes the entry there first") {
      TempPath second = f.staged_entry(key, "other bytes");
      CHECK(f.storage.publish_staged(second, key, Replace::yes, {}));
      CHECK(npucc::util::read_file(f.storage.entry_dir(key) / "high.onnx") == "other bytes");
    }
  }

  // Issue 42, finding 8: an extra file stayed in the entry, and as a blob.
  TEST_CASE("a staged entry holding a file its header does not list is refused whole") {
    Fixture f;
    const std::string key(64, 'd');
    TempPath stage = f.staged_entry(key, "graph bytes");
    const std::string extra = "extra weights";
    npucc::util::write_file_atomic(stage.path() / "zz.data", extra);
    CHECK(f.storage.staged_problem(stage.path(), key) ==
          "it holds zz.data, which its header does not list");
    std::map<std::string, std::string> sha256 = {
        {"high.onnx", npucc::util::sha256_hex("graph bytes")},
        {"zz.data", npucc::util::sha256_hex(extra)}};
    SUBCASE("nothing of it is published or shared") {
      CHECK_FALSE(f.storage.publish_staged(stage, key, Replace::no, sha256));
      CHECK_FALSE(fs::exists(f.storage.entry_dir(key)));
      CHECK_FALSE(fs::exists(f.storage.root() / "blobs"));
    }
    SUBCASE("a damaged entry it would replace stays until a good one does") {
      TempPath good = f.staged_entry(key, "graph bytes");
      REQUIRE(f.storage.publish_staged(good, key, Replace::no, {}));
      CHECK_FALSE(f.storage.publish_staged(stage, key, Replace::yes, sha256));
      CHECK(fs::exists(f.storage.entry_dir(key) / "high.onnx"));
      CHECK_FALSE(fs::exists(f.storage.entry_dir(key) / "zz.data"));
    }
    SUBCASE("the signature file is listed by the format, not by the header") {
      fs::remove(stage.path() / "zz.data");
      npucc::util::write_file_atomic(stage.path() / k_signature_file, "sig");
      CHECK(f.storage.staged_problem(stage.path(), key).empty());
    }
    SUBCASE("a header for another key is refused too") {
      CHECK_FALSE(f.storage.staged_problem(stage.path(), std::string(64, 'c')).empty());
    }
  }

  TEST_CASE("a read-only cache publishes nothing") {
    Fixture f;
    const std::string key(64, 'f');
    TempPath stage = f.staged_entry(key, "bytes");
    LocalStorage read_only(f.storage.root(), npucc::CacheAccess::read_only);
    CHECK_THROWS_AS(read_only.publish_staged(stage, key, Replace::no, {}), npucc::Error);
    CHECK_FALSE(fs::exists(f.storage.entry_dir(key)));
  }
}

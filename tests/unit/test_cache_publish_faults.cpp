// What a failing rename, read or fsync (util/disk.h's fakes) does to the cache's
// publication of an entry, to its reading back, and to the publication of a compile's
// output folder: a clear error or a clean miss, never a half-written entry, a temporary
// left behind, a cache that no longer verifies, or an output folder changed.
#include "cache/local_storage.h"
#include "output/output_folder.h"
#include "npucc/cache.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "test_cache_support.h"
#include "test_support.h"
#include "util/disk.h"
#include "util/file_io.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <doctest/doctest.h>

namespace fs = std::filesystem;
using namespace npucc::cache;

namespace {

bool lies_below(const fs::path& path, const fs::path& root) {
  auto relative = path.lexically_normal().lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

// What the fakes below share: the count of calls they refused, with EIO (a disk error).
class RefusingDisk : public npucc::util::RealDisk {
public:
  int refused() const { return m_refused.load(); }

protected:
  int refuse() {
    ++m_refused;
    errno = EIO;
    return -1;
  }

private:
  std::atomic<int> m_refused{0};
};

// Every rename onto a path below `root` fails.
class RenameFails : public RefusingDisk {
public:
  explicit RenameFails(fs::path root) : m_root(std::move(root)) {}
  int rename(const fs::path& from, const fs::path& to) override {
    return lies_below(to, m_root) ? refuse() : RealDisk::rename(from, to);
  }

private:
  fs::path m_root;
};

// A kernel without copy_file_range (every copy falls back to read and write) whose reads
// of files below `root` fail once a copy has begun: hashing an entry reads it fine,
// copying it out does not.
class CopyReadFails : public RefusingDisk {
public:
  explicit CopyReadFails(fs::path root) : m_root(std::move(root)) {}
  ssize_t copy_range(int, int, size_t, const fs::path&) override {
    m_copying = true;
    errno = ENOSYS;
    return -1;
  }
  ssize_t read(int fd, void* data, size_t size, const fs::path& path) override {
    return m_copying && lies_below(path, m_root) ? refuse() : RealDisk::read(fd, data, size, path);
  }
  bool copied() const { return m_copying.load(); }

private:
  fs::path m_root;
  std::atomic<bool> m_copying{false};
};

// Every read of a file below `root` fails: a bad block under an entry.
class ReadFails : public RefusingDisk {
public:
  explicit ReadFails(fs::path root) : m_root(std::move(root)) {}
  ssize_t read(int fd, void* data, size_t size, const fs::path& path) override {
    return lies_below(path, m_root) ? refuse() : RealDisk::read(fd, data, size, path);
  }
  ssize_t pread(int fd, void* data, size_t size, off_t offset, const fs::path& path) override {
    return lies_below(path, m_root) ? refuse() : RealDisk::pread(fd, data, size, offset, path);
  }

private:
  fs::path m_root;
};

// Every fsync fails.
class FsyncFails : public RefusingDisk {
public:
  int fsync(int, const fs::path&) override { return refuse(); }
};

std::string key_of(char c) {
  return std::string(64, c);
}

// No file anywhere below `dir` (folders may be there: an entry's shard folder).
bool holds_no_file(const fs::path& dir) {
  for (const auto& item : fs::recursive_directory_iterator(dir)) {
    if (!item.is_directory()) {
      return false;
    }
  }
  return true;
}

bool is_empty_folder(const fs::path& dir) {
  return fs::is_directory(dir) && fs::is_empty(dir);
}

// The names in `dir`, sorted: what a failed publication must leave as it was.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& item : fs::directory_iterator(dir)) {
    names.push_back(item.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A cache and a compile of a small model into `out`.
struct CachedCompileFixture {
  fs::path dir = npucc::test::temp_dir("publish-faults");
  npucc::CacheConfig config;
  npucc::CompileOptions options;

  CachedCompileFixture() {
    config.dir = dir / "cache";
    config.dir_source = npucc::SettingSource::command_line;
    npucc::init_cache_dir(config.dir);
    options.model_path = npucc::test::write_text_model(dir / "m.onnx", R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1,4] x) => (float[1,4] y) {
        a = Relu(x)
        y = Neg(a)
      }
    )");
    options.output_dir = dir / "out";
  }

  npucc::CachedCompile run() {
    return npucc::compile_cached(options, config, npucc::CacheUse::enabled);
  }
  LocalStorage storage() const { return open_local_storage(config, npucc::CacheIntent::read); }
  bool verifies() const {
    VerifyReport report = storage().verify(Fix::no);
    return report.findings.empty() && report.failures.empty();
  }
};

} // namespace

TEST_SUITE("npucc::cache::publish_faults") {
  TEST_CASE("a failing rename while an entry is published: an error, no entry, no temporary") {
    fs::path root = npucc::test::temp_dir("rename-store");
    fs::path source = npucc::test::temp_dir("rename-source");
    npucc::init_cache_dir(root);
    LocalStorage storage(fs::canonical(root));
    npucc::util::write_file_atomic(source / "high.onnx", std::string(1000, 'g'));
    npucc::util::write_file_atomic(source / "manifest.json", "{}\n");
    auto store = [&] {
      return storage.store(npucc::test::entry_header(key_of('a')), source,
                           {"high.onnx", "manifest.json"}, SourceFiles::copy, Replace::no, {});
    };
    {
      RenameFails fails(storage.root() / "entries");
      npucc::util::ScopedDisk use(fails);
      CHECK_THROWS_WITH_AS(store(),
                           doctest::Contains("cannot publish the cache entry: Input/output error"),
                           npucc::Error);
      CHECK(fails.refused() == 1);
    }
    CHECK(holds_no_file(storage.root() / "entries"));
    CHECK(is_empty_folder(storage.root() / "tmp"));
    CHECK(storage.fetch(key_of('a'), {}).status == FetchStatus::absent);
    VerifyReport report = storage.verify(Fix::no);
    CHECK(report.entries == 0);
    CHECK(report.findings.empty());
    // The sources are the caller's: a failed store leaves them.
    CHECK(npucc::util::read_file(source / "high.onnx") == std::string(1000, 'g'));
    CHECK(store().status == StoreStatus::stored); // the disk well again
  }

  TEST_CASE("a failing rename while a compile's entry is published: the output kept, a warning") {
    CachedCompileFixture f;
    npucc::CachedCompile result;
    {
      RenameFails fails(f.config.dir / "entries");
      npucc::util::ScopedDisk use(fails);
      result = f.run();
      CHECK(fails.refused() == 1);
    }
    CHECK(result.outcome == npucc::CacheOutcome::miss);
    CHECK(result.warning.find("not stored in the cache") != std::string::npos);
    CHECK(result.warning.find("cannot publish the cache entry: Input/output error") !=
          std::string::npos);
    CHECK(fs::exists(f.options.output_dir / "manifest.json"));
    CHECK(fs::exists(f.options.output_dir / "high.onnx"));
    CHECK(holds_no_file(f.config.dir / "entries"));
    CHECK(is_empty_folder(f.config.dir / "tmp"));
    CHECK(f.verifies());
    CHECK(f.storage().stats().read()["store_errors"] == 1);
    CHECK(f.run().warning.empty());
    CHECK(f.run().outcome == npucc::CacheOutcome::hit);
  }

  TEST_CASE("a failing read while a hit is copied out: an error, the earlier output untouched") {
    CachedCompileFixture f;
    REQUIRE(f.run().warning.empty()); // stored
    npucc::util::write_file_atomic(f.options.output_dir / "notes.txt", "mine");
    const std::vector<std::string> before = names_in(f.options.output_dir);
    const std::string manifest = npucc::util::read_file(f.options.output_dir / "manifest.json");
    CopyReadFails fails(f.config.dir / "entries");
    {
      npucc::util::ScopedDisk use(fails);
      try {
        f.run();
        // A file system that shares blocks (reflink) copies nothing: nothing to read.
        CHECK_FALSE(fails.copied());
      } catch (const npucc::Error& e) {
        CHECK(fails.refused() == 1);
        CHECK(std::string(e.what()).find("read failed while copying to ") != std::string::npos);
        CHECK(std::string(e.what()).find(": Input/output error") != std::string::npos);
      }
    }
    CHECK(names_in(f.options.output_dir) == before);
    CHECK(npucc::util::read_file(f.options.output_dir / "manifest.json") == manifest);
    CHECK(names_in(f.dir) == std::vector<std::string>{"cache", "m.onnx", "out"}); // no staging
    CHECK(is_empty_folder(f.config.dir / "tmp"));
    CHECK(f.verifies());
    CHECK(f.run().outcome == npucc::CacheOutcome::hit); // the disk well again
  }

  TEST_CASE("a failing read while an entry is hashed: a corrupt entry, replaced") {
    fs::path root = npucc::test::temp_dir("read-hash");
    fs::path source = npucc::test::temp_dir("read-source");
    npucc::init_cache_dir(root);
    LocalStorage storage(fs::canonical(root));
    npucc::util::write_file_atomic(source / "high.onnx", std::string(1000, 'g'));
    REQUIRE(storage
                .store(npucc::test::entry_header(key_of('b')), source, {"high.onnx"},
                       SourceFiles::copy, Replace::no, {})
                .status == StoreStatus::stored);
    {
      ReadFails fails(storage.entry_dir(key_of('b')) / "high.onnx");
      npucc::util::ScopedDisk use(fails);
      VerifyReport report = storage.verify(Fix::no);
      REQUIRE(report.findings.size() == 1);
      CHECK(report.findings[0].kind == Finding::Kind::corrupt);
      CHECK(report.findings[0].detail.find("high.onnx: read failed: Input/output error") !=
            std::string::npos);
      CHECK(fails.refused() > 0);
    }
    CHECK(storage.verify(Fix::no).findings.empty()); // the disk well again: nothing changed
  }

  TEST_CASE("a failing fsync: the earlier file kept, no temporary left") {
    fs::path dir = npucc::test::temp_dir("fsync");
    npucc::util::write_file_atomic(dir / "settings", "old");
    const std::string expected = (dir / "settings").string() + ": fsync failed: Input/output error";
    FsyncFails fails;
    {
      npucc::util::ScopedDisk use(fails);
      CHECK_THROWS_WITH_AS(npucc::util::write_file_atomic(dir / "settings", "new"),
                           expected.c_str(), npucc::Error);
    }
    CHECK(fails.refused() == 1);
    CHECK(names_in(dir) == std::vector<std::string>{"settings"});
    CHECK(npucc::util::read_file(dir / "settings") == "old");
  }

  TEST_CASE("a failing fsync while a compile is cached: an error, no output, no entry") {
    CachedCompileFixture f;
    FsyncFails fails;
    {
      npucc::util::ScopedDisk use(fails);
      // The manifest is the one output written synced: the compile stops there.
      CHECK_THROWS_WITH_AS(f.run(),
                           doctest::Contains("manifest.json: fsync failed: Input/output error"),
                           npucc::Error);
    }
    CHECK(fails.refused() > 0);
    CHECK(names_in(f.dir) == std::vector<std::string>{"cache", "m.onnx"}); // no out, no staging
    CHECK(holds_no_file(f.config.dir / "entries"));
    CHECK(is_empty_folder(f.config.dir / "tmp"));
    CHECK(f.verifies());
    CHECK(f.run().warning.empty()); // the disk well again
    CHECK(f.run().outcome == npucc::CacheOutcome::hit);
  }

  TEST_CASE("a failing rename of a compile's output folder: an error, no folder, no staging") {
    fs::path dir = npucc::test::temp_dir("output-rename");
    npucc::CompileOptions options;
    options.output_dir = dir / "out";
    const std::string expected =
        (dir / "out").string() + ": cannot move the output into place: Input/output error";
    RenameFails fails(dir);
    {
      npucc::output::OutputFolder output(options);
      npucc::util::write_file_atomic(output.staging() / "high.onnx", "graph");
      npucc::util::ScopedDisk use(fails);
      CHECK_THROWS_WITH_AS(output.publish(), expected.c_str(), npucc::Error);
    }
    CHECK(fails.refused() == 1);
    CHECK(is_empty_folder(dir)); // the staging folder went with the OutputFolder
  }
}

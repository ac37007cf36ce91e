// The fake disk (util/disk.h) and what a full disk does to a compile and to a cache store:
// the e2e test of test_cache_damage.sh needs a tmpfs it can mount, this one runs anywhere.
#include "cache/local_storage.h"
#include "npucc/cache.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/disk.h"
#include "util/file_io.h"

#include <atomic>
#include <cerrno>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// A disk that is full below `root`: every write of bytes into a file there fails with
// ENOSPC; elsewhere the real disk serves.
class FullDisk : public npucc::util::RealDisk {
public:
  explicit FullDisk(fs::path root) : m_root(std::move(root)) {}

  ssize_t write(int fd, const void* data, size_t size, const fs::path& path) override {
    if (full(path)) {
      return refuse();
    }
    return RealDisk::write(fd, data, size, path);
  }

  ssize_t copy_range(int from, int to, size_t size, const fs::path& to_path) override {
    if (full(to_path)) {
      return refuse();
    }
    return RealDisk::copy_range(from, to, size, to_path);
  }

  int refused() const { return m_refused.load(); }

private:
  bool full(const fs::path& path) const {
    auto relative = path.lexically_normal().lexically_relative(m_root);
    return !relative.empty() && *relative.begin() != "..";
  }
  ssize_t refuse() {
    ++m_refused;
    errno = ENOSPC;
    return -1;
  }

  fs::path m_root;
  std::atomic<int> m_refused{0};
};

fs::path write_model(const fs::path& dir) {
  return npucc::test::write_text_model(dir / "m.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) {
      a = Relu(x)
      y = Neg(a)
    }
  )");
}

bool empty_folder(const fs::path& dir) {
  return fs::is_directory(dir) && fs::is_empty(dir);
}

// No file anywhere below `dir` (folders may be there: an entry's shard folder).
bool no_files_below(const fs::path& dir) {
  for (const auto& item : fs::recursive_directory_iterator(dir)) {
    if (!item.is_directory()) {
      return false;
    }
  }
  return true;
}

} // namespace

TEST_SUITE("npucc::util::disk") {
  TEST_CASE("a write the fake refuses fails with the system's message and leaves no file") {
    fs::path dir = npucc::test::temp_dir("disk");
    FullDisk full(dir / "full");
    npucc::util::ScopedDisk use(full);
    fs::create_directories(dir / "full");
    npucc::util::write_file_atomic(dir / "room", "fits"); // outside: the real disk
    CHECK(npucc::util::read_file(dir / "room") == "fits");
    try {
      npucc::util::write_file_atomic(dir / "full" / "f", "does not fit");
      FAIL("expected an error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()) ==
            (dir / "full" / "f").string() + ": write failed: No space left on device");
      CHECK(e.hint() == "free some disk space and try again");
    }
    CHECK(empty_folder(dir / "full")); // the temporary is gone too
    CHECK(full.refused() == 1);
  }

  TEST_CASE("the real disk is back when the fake goes") {
    fs::path dir = npucc::test::temp_dir("disk-back");
    {
      FullDisk full(dir);
      npucc::util::ScopedDisk use(full);
      CHECK(&npucc::util::disk() == &full);
    }
    npucc::util::write_file_atomic(dir / "f", "x");
    CHECK(npucc::util::read_file(dir / "f") == "x");
  }

  TEST_CASE("a compile onto a full disk fails clearly and leaves no partial output") {
    fs::path dir = npucc::test::temp_dir("full-compile");
    npucc::CompileOptions options;
    options.model_path = write_model(dir);
    options.output_dir = dir / "full" / "out";
    fs::create_directories(dir / "full");
    FullDisk full(dir / "full");
    npucc::util::ScopedDisk use(full);
    CHECK_THROWS_WITH_AS(npucc::compile(options), doctest::Contains("No space left on device"),
                         npucc::Error);
    CHECK(full.refused() > 0);
    CHECK(empty_folder(dir / "full"));
  }

  TEST_CASE("a store onto a full cache disk keeps the compile and leaves no partial entry") {
    fs::path dir = npucc::test::temp_dir("full-store");
    npucc::CacheConfig config;
    config.dir = dir / "cache";
    config.dir_source = npucc::SettingSource::command_line;
    npucc::init_cache_dir(config.dir);
    npucc::CompileOptions options;
    options.model_path = write_model(dir);
    options.output_dir = dir / "out";
    npucc::CachedCompile result;
    {
      // Entries are staged in tmp/ and renamed into entries/: no byte fits there.
      FullDisk full(config.dir / "tmp");
      npucc::util::ScopedDisk use(full);
      result = npucc::compile_cached(options, config, npucc::CacheUse::enabled);
      CHECK(full.refused() > 0);
    }
    CHECK(result.outcome == npucc::CacheOutcome::miss);
    CHECK(result.warning.find("not stored in the cache") != std::string::npos);
    CHECK(result.warning.find("No space left on device") != std::string::npos);
    CHECK(fs::exists(dir / "out" / "manifest.json"));
    CHECK(fs::exists(dir / "out" / "high.onnx"));
    CHECK(no_files_below(config.dir / "entries"));
    CHECK(empty_folder(config.dir / "tmp"));
    auto storage = npucc::cache::open_local_storage(config, npucc::CacheIntent::read);
    CHECK(storage.stats().read()["store_errors"] == 1);
    // With room again, the next compile stores the entry.
    CHECK(npucc::compile_cached(options, config, npucc::CacheUse::enabled).warning.empty());
    CHECK(npucc::compile_cached(options, config, npucc::CacheUse::enabled).outcome ==
          npucc::CacheOutcome::hit);
  }
}

#include "cache/local_storage.h"
#include "npucc/cache_maintenance.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "test_cache_support.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

// A cache holding entries stored through LocalStorage, read back through the public Cache.
struct Fixture {
  fs::path root = npucc::test::temp_dir("cache");
  fs::path source = npucc::test::temp_dir("source");
  npucc::CacheConfig config;

  Fixture() {
    npucc::init_cache_dir(root);
    config.dir = root;
    config.dir_source = npucc::SettingSource::command_line;
    npucc::util::write_file_atomic(source / "high.onnx", std::string(1000, 'g'));
    npucc::util::write_file_atomic(source / "manifest.json", "{}\n");
  }

  void put(char key, const std::string& version = npucc::k_version,
           const std::string& model = "m") {
    npucc::cache::LocalStorage storage(fs::canonical(root));
    storage.store(npucc::test::entry_header(std::string(64, key), version, model), source,
                  {"high.onnx", "manifest.json"}, npucc::cache::SourceFiles::copy,
                  npucc::cache::Replace::no, {});
  }
};

} // namespace

TEST_SUITE("npucc::cache_entry_json") {
  TEST_CASE("variants as role and precision, options as their object") {
    npucc::CacheEntry entry;
    entry.key = "k";
    entry.variants = "high:float32,low:mixed_float16,odd";
    entry.options = "{\"passes\":[]}";
    nlohmann::json shown = nlohmann::json::parse(npucc::cache_entry_json(entry));
    CHECK(shown["variants"] ==
          nlohmann::json::parse(R"([{"role":"high","precision":"float32"},)"
                                R"({"role":"low","precision":"mixed_float16"},)"
                                R"({"role":"odd","precision":""}])"));
    CHECK(shown["options"] == nlohmann::json::parse(R"({"passes":[]})"));
    CHECK(shown["key"] == "k");
  }

  TEST_CASE("a header without an options object shows null; bytes that are not UTF-8 pass") {
    npucc::CacheEntry entry;
    entry.options = "[1]";
    entry.model = "bad\xff";
    nlohmann::json shown = nlohmann::json::parse(npucc::cache_entry_json(entry));
    CHECK(shown["options"].is_null());
    CHECK(shown["variants"] == nlohmann::json::array());
    CHECK(shown["model"].get<std::string>().rfind("bad", 0) == 0);
    entry.options = "{not json";
    CHECK(nlohmann::json::parse(npucc::cache_entry_json(entry))["options"].is_null());
  }
}

TEST_SUITE("npucc::Cache") {
  TEST_CASE("lists entries and their states as `cache ls` does") {
    Fixture f;
    f.put('a');
    f.put('b', "0.0.1", "old");
    npucc::Cache cache(f.config);
    auto entries = cache.entries();
    REQUIRE(entries.size() == 2);
    std::sort(entries.begin(), entries.end(),
              [](const auto& x, const auto& y) { return x.key < y.key; });
    CHECK(entries[0].key == std::string(64, 'a'));
    CHECK(entries[0].model == "m");
    CHECK(entries[0].variants == "high:float32");
    CHECK(entries[0].state == "ok");
    CHECK(entries[0].compiler_version == npucc::k_version);
    CHECK(entries[0].bytes >= 1004);
    CHECK(entries[1].state == "other-version");
  }

  TEST_CASE("listing names the folder as opened") {
    Fixture f;
    f.put('a');
    npucc::CacheListing listing = npucc::Cache(f.config).listing();
    CHECK(listing.dir == fs::canonical(f.root));
    REQUIRE(listing.entries.size() == 1);
    CHECK(listing.entries[0].key == std::string(64, 'a'));
  }

  TEST_CASE("verify reports its progress") {
    Fixture f;
    f.put('a');
    f.put('b');
    size_t last_done = 0;
    size_t last_total = 0;
    npucc::Cache(f.config).verify(false, [&](size_t done, size_t total) {
      last_done = done;
      last_total = total;
    });
    CHECK(last_done == 2);
    CHECK(last_total == 2);
  }

  TEST_CASE("stats count entries, states and counters; zero_stats resets the counters") {
    Fixture f;
    f.put('a');
    npucc::cache::LocalStorage(fs::canonical(f.root)).stats().update({{"hits", 3}});
    npucc::Cache cache(f.config);
    auto stats = cache.stats();
    CHECK(stats.entries == 1);
    CHECK(stats.states.at("ok") == 1);
    CHECK(stats.counter("hits") == 3);
    CHECK(stats.counter("never.counted") == 0);
    CHECK(stats.dir == fs::canonical(f.root));
    cache.zero_stats();
    CHECK(cache.stats().counter("hits") == 0);
    CHECK(cache.stats().entries == 1);
  }

  TEST_CASE("verify finds a damaged entry and fix removes it") {
    Fixture f;
    f.put('a');
    f.put('b');
    npucc::cache::LocalStorage storage(fs::canonical(f.root));
    fs::path damaged = storage.entry_dir(std::string(64, 'b')) / "high.onnx";
    fs::permissions(damaged, fs::perms::owner_write, fs::perm_options::add);
    npucc::util::write_file_atomic(damaged, std::string(1000, 'x'));
    npucc::Cache cache(f.config);
    auto found = cache.verify();
    CHECK(found.entries == 2);
    REQUIRE(found.problems.size() == 1);
    CHECK(found.problems[0].kind == "corrupt");
    CHECK_FALSE(found.problems[0].fixed);
    auto fixed = cache.verify(true);
    REQUIRE(fixed.problems.size() == 1);
    CHECK(fixed.problems[0].fixed);
    CHECK(cache.verify().problems.empty());
    CHECK(cache.entries().size() == 1);
  }

  TEST_CASE("purge and invalidate remove what they are asked to, dry runs nothing") {
    Fixture f;
    f.put('a');
    f.put('b', "0.0.1", "old");
    npucc::Cache cache(f.config);
    npucc::InvalidateRequest others;
    others.dry_run = true;
    auto would = cache.invalidate(others);
    REQUIRE(would.removed.size() == 1);
    CHECK(would.removed[0].compiler_version == "0.0.1");
    CHECK(would.removed[0].model == "old");
    CHECK(cache.entries().size() == 2);
    others.dry_run = false;
    CHECK(cache.invalidate(others).removed.size() == 1);
    CHECK(cache.entries().size() == 1);

    npucc::PurgeRequest all;
    all.all = true;
    auto purged = cache.purge(all);
    REQUIRE(purged.removed.size() == 1);
    CHECK(purged.freed == purged.removed[0].bytes);
    CHECK(cache.entries().empty());
  }

  TEST_CASE("errors are the CLI's one-line errors") {
    Fixture f;
    npucc::InvalidateRequest short_key;
    short_key.key_prefix = "ab";
    CHECK_THROWS_WITH_AS(npucc::Cache(f.config).invalidate(short_key), "key prefix ab: too short",
                         npucc::Error);
    npucc::CacheConfig elsewhere = f.config;
    elsewhere.dir = npucc::test::temp_dir("not-a-cache");
    npucc::util::write_file_atomic(elsewhere.dir / "notes.txt", "mine\n");
    try {
      npucc::Cache(elsewhere).entries();
      FAIL("a folder that is not a cache was listed");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).find("not an npucc cache") != std::string::npos);
    }
    CHECK(fs::exists(elsewhere.dir / "notes.txt"));
    CHECK_FALSE(fs::exists(elsewhere.dir / "entries"));
  }
}

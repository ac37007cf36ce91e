#include "cache/entry_scan.h"
#include "npucc/cache.h"
#include "npucc/version.h"
#include "test_cache_support.h"
#include "test_support.h"
#include "util/fd.h"
#include "util/file_io.h"

#include <algorithm>
#include <cstdio>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <utime.h>

namespace fs = std::filesystem;
using namespace npucc::cache;

namespace {

// A key of the form <shard><62 times fill>.
std::string key_in(const std::string& shard, char fill) {
  return shard + std::string(62, fill);
}

// A cache with one stored entry, and a way to clone it under other keys (header rewritten,
// files hard-linked), as the `cache ls` benchmark fills its cache.
struct Fixture {
  fs::path root = npucc::test::temp_dir("scan-cache");
  fs::path source = npucc::test::temp_dir("scan-source");
  LocalStorage storage{(npucc::init_cache_dir(root), fs::canonical(root))};
  std::string original = key_in("00", '0');

  Fixture() {
    npucc::util::write_file_atomic(source / "high.onnx", std::string(1000, 'g'));
    npucc::util::write_file_atomic(source / "manifest.json", "{}\n");
    storage.store(npucc::test::entry_header(original), source, {"high.onnx", "manifest.json"},
                  SourceFiles::copy, Replace::no, {});
  }

  fs::path dir(const std::string& key) const { return storage.entry_dir(key); }

  void clone(const std::string& key, const std::string& version = npucc::k_version) {
    ParsedHeader parsed = parse_header(npucc::util::read_file(dir(original) / k_header_file));
    REQUIRE(parsed.problem == HeaderProblem::none);
    parsed.header.key = key;
    parsed.header.compiler_version = version;
    fs::create_directories(dir(key).parent_path());
    fs::create_directory(dir(key));
    for (const auto& file : parsed.header.files) {
      fs::create_hard_link(dir(original) / file.name, dir(key) / file.name);
    }
    npucc::util::write_file_atomic(dir(key) / k_header_file, serialize_header(parsed.header));
  }

  // The header of `key` rewritten by `edit` (a raw text edit: the checksum is not redone).
  template <typename Edit> void edit_header(const std::string& key, Edit edit) {
    fs::path path = dir(key) / k_header_file;
    std::string text = npucc::util::read_file(path);
    edit(text);
    fs::remove(path);
    npucc::util::write_file_atomic(path, text);
  }
};

const EntryInfo& find(const std::vector<EntryInfo>& entries, const std::string& key) {
  for (const auto& info : entries) {
    if (info.key == key) {
      return info;
    }
  }
  FAIL("no entry " << key);
  throw;
}

} // namespace

TEST_SUITE("npucc::cache::EntryScan") {
  TEST_CASE("finds keys under their own shard, sorted, never through a link") {
    fs::path entries = npucc::test::temp_dir("scan-entries");
    for (const char* key : {"abff", "ab00", "cd11"}) {
      fs::create_directories(entries / std::string(key, 2) / (key + std::string(60, '7')));
    }
    fs::create_directories(entries / "ab" / key_in("cd", '1')); // under the wrong shard
    fs::create_directories(entries / "ab" / "not-a-key");
    fs::create_directories(entries / "ab" / key_in("AB", '1')); // upper case: not a key
    fs::create_directories(entries / "zz" / key_in("zz", '1'));
    fs::create_directories(entries / "ee");                       // an empty shard
    fs::create_directory_symlink(entries / "ab", entries / "ef"); // never listed through
    npucc::util::write_file_atomic(entries / "ab" / key_in("ab", 'e'), "a file: examined");

    std::vector<EntryShard> shards = find_entry_shards(entries);
    REQUIRE(shards.size() == 2);
    CHECK(shards[0].name == "ab");
    CHECK(shards[0].keys == std::vector<std::string>{"ab00" + std::string(60, '7'),
                                                     key_in("ab", 'e'),
                                                     "abff" + std::string(60, '7')});
    CHECK(shards[1].name == "cd");
    CHECK(shards[1].keys.size() == 1);
    CHECK(find_entry_shards(entries / "missing").empty());
    CHECK(find_entry_shards(entries / "ef").empty()); // a link to a folder is not followed
  }

  TEST_CASE("an intact entry: sizes, bytes, last use and header") {
    Fixture f;
    struct utimbuf times {};
    times.actime = times.modtime = 1700000000;
    ::utime(f.dir(f.original).c_str(), &times);
    std::string header_text;
    EntryInfo info =
        scan_entry(AT_FDCWD, f.dir(f.original).c_str(), f.dir(f.original), f.original, header_text);
    CHECK(info.state == EntryState::ok);
    CHECK(info.problem.empty());
    CHECK(info.last_used() == 1700000000);
    CHECK(info.header.model == "m");
    CHECK(info.header.files.size() == 2);
    CHECK(header_text == npucc::util::read_file(f.dir(f.original) / k_header_file));
    CHECK(info.bytes == 1003 + header_text.size());
    CHECK(info.strays.empty());
  }

  TEST_CASE("each kind of damage is found, with the state and problem `cache ls` shows") {
    Fixture f;
    std::string key = key_in("5a", '1');
    f.clone(key);
    fs::path dir = f.dir(key);
    EntryState state = EntryState::corrupt;
    std::string problem;
    bool truncated = false;
    std::vector<std::string> strays;
    SUBCASE("a file shorter than recorded") {
      fs::remove(dir / "high.onnx");
      npucc::util::write_file_atomic(dir / "high.onnx", std::string(10, 'g'));
      problem = "high.onnx has 10 bytes, the header records 1000 (truncated)";
      truncated = true;
    }
    SUBCASE("a file longer than recorded") {
      fs::remove(dir / "manifest.json");
      npucc::util::write_file_atomic(dir / "manifest.json", "{}\n\n");
      problem = "manifest.json has 4 bytes, the header records 3";
    }
    SUBCASE("a file missing") {
      fs::remove(dir / "manifest.json");
      state = EntryState::incomplete;
      problem = "manifest.json is missing";
    }
    SUBCASE("a listed file that is a symlink") {
      fs::remove(dir / "high.onnx");
      fs::create_symlink(f.dir(f.original) / "high.onnx", dir / "high.onnx");
      problem = "high.onnx is not a regular file";
    }
    SUBCASE("the header missing") {
      fs::remove(dir / k_header_file);
      state = EntryState::incomplete;
      problem = "entry.npucc is missing";
    }
    SUBCASE("the header a symlink") {
      fs::remove(dir / k_header_file);
      fs::create_symlink(f.dir(f.original) / k_header_file, dir / k_header_file);
      problem = (dir / k_header_file).string() + ": is a symlink; the cache never follows links";
    }
    SUBCASE("the header a folder") {
      fs::remove(dir / k_header_file);
      fs::create_directory(dir / k_header_file);
      problem = (dir / k_header_file).string() + ": not a regular file";
    }
    SUBCASE("the header a FIFO: no wait for a writer") {
      fs::remove(dir / k_header_file);
      REQUIRE(::mkfifo((dir / k_header_file).c_str(), 0600) == 0);
      problem = (dir / k_header_file).string() + ": not a regular file";
    }
    SUBCASE("the header edited") {
      f.edit_header(key, [](std::string& text) { text[text.find("model m") + 6] = 'n'; });
      problem = "header checksum mismatch";
    }
    SUBCASE("the header empty") {
      f.edit_header(key, [](std::string& text) { text.clear(); });
      problem = "header is empty";
    }
    SUBCASE("the header of another entry format") {
      f.edit_header(key, [](std::string& text) { text[text.find(" 1\n") + 1] = '7'; });
      state = EntryState::foreign;
      problem = "entry format version 7 (this npucc reads version 1)";
    }
    SUBCASE("the header of another key") {
      f.clone(key_in("5a", '2'));
      fs::remove(dir / k_header_file);
      fs::copy_file(f.dir(key_in("5a", '2')) / k_header_file, dir / k_header_file);
      problem = "the header's key does not match the entry's folder";
    }
    SUBCASE("stray names, counted in the bytes") {
      npucc::util::write_file_atomic(dir / "stray.txt", "12345");
      fs::create_directory(dir / "sub");
      npucc::util::write_file_atomic(dir / "sub" / "inner", "1234567");
      state = EntryState::ok;
      strays = {"stray.txt", "sub"};
    }
    SUBCASE("the entry a symlink") {
      fs::remove_all(dir);
      fs::create_directory_symlink(f.dir(f.original), dir);
      problem = "the entry is a symlink";
    }
    SUBCASE("the entry a file") {
      fs::remove_all(dir);
      npucc::util::write_file_atomic(dir, "x");
      problem = "the entry is not a folder";
    }
    SUBCASE("another compiler version: ok to the scan, other-version to the listing") {
      fs::remove_all(dir);
      f.clone(key, "0.0.1-old");
      state = EntryState::other_version;
    }

    std::vector<EntryInfo> listed = f.storage.list(Check::sizes);
    const EntryInfo& info = find(listed, key);
    CHECK(info.state == state);
    CHECK(info.problem == problem);
    CHECK(info.truncated == truncated);
    std::vector<std::string> found_strays = info.strays;
    std::sort(found_strays.begin(), found_strays.end());
    CHECK(found_strays == strays);
    CHECK(find(listed, f.original).state == EntryState::ok);

    // The scan relative to the open shard agrees with the one through the full path.
    std::string text;
    EntryInfo direct = scan_entry(AT_FDCWD, dir.c_str(), dir, key, text);
    CHECK(direct.problem == info.problem);
    CHECK(direct.bytes == info.bytes);
    if (state == EntryState::ok) {
      // What a stray adds: the file, and the file inside the folder.
      CHECK(info.bytes == find(listed, f.original).bytes + 5 + 7);
    }

    // `cache ls` looks no closer than the header and the files it lists: the same state and
    // problem, but strays are neither named nor counted.
    std::vector<EntryInfo> files_listed = f.storage.list(Check::files);
    REQUIRE(files_listed.size() == listed.size());
    const EntryInfo& light = find(files_listed, key);
    CHECK(light.state == state);
    CHECK(light.problem == problem);
    CHECK(light.truncated == truncated);
    CHECK(light.strays.empty());
    CHECK(light.last_used() == info.last_used());
    CHECK(light.header.model == info.header.model);
    if (state == EntryState::ok) {
      CHECK(light.bytes == find(listed, f.original).bytes);
      CHECK(find(files_listed, f.original).bytes == find(listed, f.original).bytes);
    }
  }

  TEST_CASE("many entries are examined on all cores, in key order, each judged alone") {
    Fixture f;
    std::vector<std::string> keys{f.original};
    for (int i = 1; i < 150; ++i) {
      char shard[3];
      std::snprintf(shard, sizeof shard, "%02x", (i * 37) % 256);
      std::string key = shard + std::string(62, "0123456789abcdef"[i % 16]);
      f.clone(key, i % 10 == 0 ? "0.0.1-old" : npucc::k_version);
      keys.push_back(key);
    }
    // Damage a few, scattered over the shards.
    fs::remove(f.dir(keys[7]) / "manifest.json");
    f.edit_header(keys[33], [](std::string& text) { text[text.find("model m") + 6] = 'x'; });
    npucc::util::write_file_atomic(f.dir(keys[101]) / "stray", "s");
    std::sort(keys.begin(), keys.end());

    size_t calls = 0;
    size_t last_done = 0;
    std::vector<EntryInfo> listed = f.storage.list(Check::sizes, [&](size_t done, size_t total) {
      ++calls;
      CHECK(done == last_done + 1);
      CHECK(total == 150);
      last_done = done;
    });
    CHECK(calls == 150);
    REQUIRE(listed.size() == keys.size());
    size_t ok = 0, other = 0, incomplete = 0, corrupt = 0, with_strays = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      CHECK(listed[i].key == keys[i]);
      CHECK(f.storage.entry_dir(listed[i].key) == f.dir(keys[i]));
      ok += listed[i].state == EntryState::ok ? 1 : 0;
      other += listed[i].state == EntryState::other_version ? 1 : 0;
      incomplete += listed[i].state == EntryState::incomplete ? 1 : 0;
      corrupt += listed[i].state == EntryState::corrupt ? 1 : 0;
      with_strays += listed[i].strays.empty() ? 0 : 1;
    }
    CHECK(other == 14); // 10, 20, ... 140
    CHECK(incomplete == 1);
    CHECK(corrupt == 1);
    CHECK(ok == 150 - 14 - 2);
    CHECK(with_strays == 1);
  }

  TEST_CASE("other versions' entries are counted from their headers alone, never through a link") {
    Fixture f;
    std::string old_version = key_in("00", '1');
    std::string old_damaged = key_in("00", '2');
    std::string old_linked = key_in("00", '3');
    std::string old_missing_file = key_in("01", '4');
    f.clone(old_version, "0.0.1-old");
    f.clone(old_damaged, "0.0.1-old");
    f.edit_header(old_damaged,
                  [](std::string& text) { text.replace(text.find("model"), 5, "MODEL"); });
    fs::create_directory_symlink(f.dir(old_version), f.dir(old_linked));
    f.clone(old_missing_file, "0.0.1-old");
    fs::remove(f.dir(old_missing_file) / "high.onnx");

    npucc::util::Fd shard(::open(f.dir(f.original).parent_path().c_str(), O_RDONLY | O_DIRECTORY));
    REQUIRE(shard.get() >= 0);
    CHECK(entry_compiler_version(shard.get(), f.original) == std::string(npucc::k_version));
    CHECK(entry_compiler_version(shard.get(), old_version) == std::string("0.0.1-old"));
    CHECK_FALSE(entry_compiler_version(shard.get(), old_damaged));       // checksum broken
    CHECK_FALSE(entry_compiler_version(shard.get(), old_linked));        // a link is not followed
    CHECK_FALSE(entry_compiler_version(shard.get(), key_in("00", '9'))); // no such entry

    // The header alone: an old entry missing a file still counts (list() calls it
    // incomplete), a damaged or linked one does not.
    CHECK(f.storage.count_other_versions() == 2);
    size_t listed = 0;
    for (const auto& info : f.storage.list(Check::sizes)) {
      listed += info.state == EntryState::other_version ? 1 : 0;
    }
    CHECK(listed == 1);
  }
}

#include "cache/entry_signature.h"
#include "cache/local_storage.h"
#include "npucc/cache.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace npucc::cache;

namespace {

std::string key_of(char c) {
  return std::string(64, c);
}

fs::path key_file(const std::string& label, const std::string& text, unsigned mode = 0600) {
  fs::path path = npucc::test::temp_dir("key") / label;
  npucc::util::write_file_atomic(path, text);
  ::chmod(path.c_str(), mode);
  return path;
}

SigningKey make_key(const std::string& secret) {
  return load_signing_key(key_file("k", secret + "\n"));
}

unsigned mode_of(const fs::path& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

// A cache whose entries are written with `writer` (nullopt: unsigned) and read back
// through a second LocalStorage holding `reader`.
struct Fixture {
  fs::path root = npucc::test::temp_dir("cache");
  fs::path source = npucc::test::temp_dir("source");
  fs::path out = npucc::test::temp_dir("out");

  Fixture() {
    npucc::init_cache_dir(root);
    root = fs::canonical(root);
    npucc::util::write_file_atomic(source / "high.onnx", std::string(1000, 'g'));
    npucc::util::write_file_atomic(source / "manifest.json", "{}\n");
  }

  void put(const std::optional<SigningKey>& writer, const std::string& key = key_of('a')) {
    LocalStorage storage(root);
    storage.set_signing_key(writer);
    EntryHeader header;
    header.compiler_version = npucc::k_version;
    header.key = key;
    header.model = "m";
    storage.store(header, source, {"high.onnx", "manifest.json"}, SourceFiles::copy, Replace::no,
                  {});
  }

  FetchResult get(const std::optional<SigningKey>& reader) {
    LocalStorage storage(root);
    storage.set_signing_key(reader);
    fs::remove_all(out);
    fs::create_directories(out);
    return storage.fetch(key_of('a'), out);
  }

  std::vector<Finding> findings(const std::optional<SigningKey>& reader) {
    LocalStorage storage(root);
    storage.set_signing_key(reader);
    return storage.verify(Fix::no).findings;
  }

  fs::path entry() const { return root / "entries" / "aa" / key_of('a'); }
};

// Flips one byte of high.onnx and rewrites its checksum in the header (and the header's
// own end checksum): consistent on every checksum, so only a MAC can tell.
void tamper_with_fixed_checksums(const fs::path& entry) {
  fs::path data = entry / "high.onnx";
  fs::path header = entry / k_header_file;
  ::chmod(data.c_str(), 0644);
  ::chmod(header.c_str(), 0644);
  std::string bytes = npucc::util::read_file(data);
  std::string old_sum = npucc::util::sha256_hex(bytes);
  bytes[bytes.size() / 2] ^= 1;
  npucc::util::write_file_atomic(data, bytes);
  std::string text = npucc::util::read_file(header);
  std::string body = text.substr(0, text.rfind("end "));
  size_t at = body.find(old_sum);
  REQUIRE(at != std::string::npos);
  body.replace(at, old_sum.size(), npucc::util::sha256_hex(bytes));
  npucc::util::write_file_atomic(header, body + "end " + npucc::util::sha256_hex(body) + "\n");
  // Back to 0444, as npucc writes entry files: another mode alone is damage (issue 30).
  ::chmod(data.c_str(), 0444);
  ::chmod(header.c_str(), 0444);
}

} // namespace

TEST_SUITE("npucc::cache::entry_signature") {
  TEST_CASE("key files: weak ones are refused with the fix") {
    SUBCASE("a good key; a trailing newline does not change it") {
      SigningKey with = load_signing_key(key_file("a", "0123456789abcdef0123\n"));
      SigningKey without = load_signing_key(key_file("b", "0123456789abcdef0123"));
      CHECK(with.secret == without.secret);
      CHECK(signature_text(with, "x") == signature_text(without, "x"));
    }
    SUBCASE("group-readable is allowed (a team's key)") {
      CHECK_NOTHROW(load_signing_key(key_file("g", "0123456789abcdef0123", 0640)));
    }
    auto refused = [](const fs::path& path, const std::string& words) {
      try {
        load_signing_key(path);
        FAIL("accepted " << path);
      } catch (const npucc::Error& e) {
        std::string message = e.what();
        CHECK(message.find(path.string()) != std::string::npos);
        CHECK_MESSAGE(message.find(words) != std::string::npos, message);
        return std::string(e.hint());
      }
      return std::string();
    };
    SUBCASE("empty") {
      refused(key_file("e", "\n"), "is empty");
    }
    SUBCASE("too short") {
      refused(key_file("s", "short"), "holds 5 bytes");
    }
    SUBCASE("world-readable") {
      CHECK(refused(key_file("w", "0123456789abcdef0123", 0644), "open to others (mode 0644)")
                .find("chmod 600") != std::string::npos);
    }
    SUBCASE("group-writable") {
      refused(key_file("gw", "0123456789abcdef0123", 0660), "mode 0660");
    }
    SUBCASE("missing") {
      refused(npucc::test::temp_dir("none") / "key", "cannot open it");
    }
    SUBCASE("a folder") {
      refused(npucc::test::temp_dir("dir"), "not a regular file");
    }
  }

  TEST_CASE("signatures: valid, missing, wrong key, malformed") {
    SigningKey key = make_key("0123456789abcdef0123");
    SigningKey other = make_key("fedcba98765432100123");
    std::string header = "npucc-cache-entry 1\nexample\n";
    std::string signature = signature_text(key, header);
    CHECK(check_signature(key, header, signature).state == SignatureState::valid);
    CHECK(check_signature(key, header + " ", signature).state == SignatureState::mismatch);
    CHECK(check_signature(other, header, signature).state == SignatureState::mismatch);
    CHECK(check_signature(key, header, "").state == SignatureState::missing);
    std::string garbled = signature;
    garbled[garbled.size() - 2] = 'Z';
    CHECK(check_signature(key, header, garbled).state == SignatureState::mismatch);
    CHECK(check_signature(key, header, signature + "x").state == SignatureState::mismatch);
    CHECK(signature_text(key, header) != signature_text(other, header));
  }

  TEST_CASE("a reader with the key accepts only entries signed with it") {
    Fixture f;
    SigningKey key = make_key("0123456789abcdef0123");
    SigningKey other = make_key("fedcba98765432100123");

    SUBCASE("signed with the key: accepted; without a key: accepted on checksums") {
      f.put(key);
      CHECK(fs::exists(f.entry() / k_signature_file));
      CHECK(mode_of(f.entry() / k_signature_file) == 0444);
      CHECK(f.get(key).status == FetchStatus::hit);
      CHECK(f.get(std::nullopt).status == FetchStatus::hit);
      CHECK(f.findings(key).empty());
      CHECK(f.findings(std::nullopt).empty()); // entry.sig is not a stray
    }
    SUBCASE("signed with another key: rejected as untrusted, verify says tampered") {
      f.put(other);
      FetchResult fetched = f.get(key);
      CHECK(fetched.status == FetchStatus::corrupt);
      CHECK(fetched.untrusted);
      CHECK(fetched.problem.find("signature does not match") != std::string::npos);
      CHECK_FALSE(fs::exists(f.out / "high.onnx"));
      auto findings = f.findings(key);
      REQUIRE(findings.size() == 1);
      CHECK(findings[0].kind == Finding::Kind::bad_signature);
      CHECK(std::string(finding_name(findings[0].kind)) == "tampered");
    }
    SUBCASE("unsigned: rejected when a key is set") {
      f.put(std::nullopt);
      FetchResult fetched = f.get(key);
      CHECK(fetched.status == FetchStatus::corrupt);
      CHECK(fetched.untrusted);
      auto findings = f.findings(key);
      REQUIRE(findings.size() == 1);
      CHECK(findings[0].kind == Finding::Kind::unsigned_entry);
      CHECK(f.get(std::nullopt).status == FetchStatus::hit);
    }
    SUBCASE("tampered with its checksum fixed: only the signature catches it") {
      f.put(key);
      tamper_with_fixed_checksums(f.entry());
      CHECK(f.get(std::nullopt).status == FetchStatus::hit); // checksums all agree
      FetchResult fetched = f.get(key);
      CHECK(fetched.status == FetchStatus::corrupt);
      CHECK(fetched.untrusted);
      auto findings = f.findings(key);
      REQUIRE(findings.size() == 1);
      CHECK(findings[0].kind == Finding::Kind::bad_signature);
      CHECK(findings[0].path == f.entry());
    }
    SUBCASE("ordinary damage stays corrupt, not untrusted") {
      f.put(key);
      ::chmod((f.entry() / "high.onnx").c_str(), 0644);
      npucc::util::write_file_atomic(f.entry() / "high.onnx", std::string(1000, 'h'));
      FetchResult fetched = f.get(key);
      CHECK(fetched.status == FetchStatus::corrupt);
      CHECK_FALSE(fetched.untrusted);
    }
  }

  TEST_CASE("check_entry_signature and sign_entry work on a folder (for other tiers)") {
    Fixture f;
    SigningKey key = make_key("0123456789abcdef0123");
    f.put(std::nullopt);
    CHECK(check_entry_signature(f.entry(), key).state == SignatureState::missing);
    ::chmod(f.entry().c_str(), 0755);
    sign_entry(f.entry(), key);
    CHECK(check_entry_signature(f.entry(), key).state == SignatureState::valid);
    CHECK(f.get(key).status == FetchStatus::hit);
  }
}

TEST_SUITE("npucc::cache::LocalStorage read-only and sharing") {
  TEST_CASE("read-only: hits are served, nothing is written") {
    Fixture f;
    f.put(std::nullopt);
    ::utimensat(AT_FDCWD, f.entry().c_str(), nullptr, 0);
    struct timespec old_times[2] = {{1000, 0}, {1000, 0}};
    ::utimensat(AT_FDCWD, f.entry().c_str(), old_times, 0);
    fs::remove(f.root / "stats");

    LocalStorage storage(f.root, npucc::CacheAccess::read_only);
    CHECK(storage.read_only());
    fs::create_directories(f.out);
    FetchResult fetched = storage.fetch(key_of('a'), f.out);
    CHECK(fetched.status == FetchStatus::hit);
    CHECK(std::count(fetched.transfers.begin(), fetched.transfers.end(), Transfer::hard_link) == 0);
    struct stat info {};
    REQUIRE(::stat(f.entry().c_str(), &info) == 0);
    CHECK(info.st_mtime == 1000); // last use not recorded
    REQUIRE(::stat((f.entry() / "high.onnx").c_str(), &info) == 0);
    CHECK(info.st_nlink == 1);

    storage.stats().update({{"hits", 1}});
    CHECK_FALSE(fs::exists(f.root / "stats"));
    storage.record_model_index(key_of('c'), "x");
    CHECK_FALSE(fs::exists(f.root / "models" / "cc"));

    EntryHeader header;
    header.key = key_of('b');
    CHECK_THROWS_WITH_AS(
        storage.store(header, f.source, {"high.onnx"}, SourceFiles::copy, Replace::no, {}),
        doctest::Contains("read-only"), npucc::Error);
    CHECK_FALSE(fs::exists(storage.entry_dir(key_of('b'))));
    CHECK_THROWS_AS(storage.remove(key_of('a')), npucc::Error);
    CHECK_THROWS_AS(storage.invalidate({std::string("0.0.0"), "", ""}, DryRun::no), npucc::Error);
    CHECK_THROWS_AS(storage.purge({true, std::nullopt, std::nullopt, ""}, DryRun::no), npucc::Error);
    CHECK_THROWS_AS(storage.verify(Fix::yes), npucc::Error);
    CHECK_THROWS_AS(storage.stats().zero(), npucc::Error);
    CHECK(storage.purge({true, std::nullopt, std::nullopt, ""}, DryRun::yes).removed.size() == 1);
    CHECK(storage.enforce_max_size(1).removed.empty());
    CHECK(fs::exists(f.entry()));
    CHECK_FALSE(fs::exists(f.root / "lock" / "cleanup"));
  }

  TEST_CASE("entry modes follow the sharing, not the umask") {
    fs::path root = npucc::test::temp_dir("modes");
    fs::path source = npucc::test::temp_dir("modes-src");
    npucc::util::write_file_atomic(source / "high.onnx", "x");
    mode_t old_umask = ::umask(0);
    struct Case {
      npucc::CacheSharing sharing;
      unsigned dir;
      unsigned mutable_file;
    };
    for (Case c : {Case{npucc::CacheSharing::none, 0700, 0600},
                   Case{npucc::CacheSharing::group, 02770, 0660},
                   Case{npucc::CacheSharing::world, 0755, 0644}}) {
      CAPTURE(npucc::cache_sharing_name(c.sharing));
      fs::path dir = root / npucc::cache_sharing_name(c.sharing);
      ::umask(c.sharing == npucc::CacheSharing::none ? 0 : 077);
      npucc::init_cache_dir(dir, c.sharing);
      CHECK(mode_of(dir) == c.dir);
      LocalStorage storage(fs::canonical(dir), npucc::CacheAccess::read_write, c.sharing);
      EntryHeader header;
      header.key = key_of('d');
      storage.store(header, source, {"high.onnx"}, SourceFiles::copy, Replace::no, {});
      storage.stats().update({{"hits", 1}});
      CHECK(mode_of(storage.entry_dir(key_of('d'))) == c.dir);
      CHECK(mode_of(storage.entry_dir(key_of('d')).parent_path()) == c.dir);
      CHECK(mode_of(storage.entry_dir(key_of('d')) / "high.onnx") == 0444);
      CHECK(mode_of(dir / "stats") == c.mutable_file);
      CHECK(mode_of(dir / "lock" / "stats") == c.mutable_file);
    }
    ::umask(old_umask);
  }

  TEST_CASE("auto sharing: group when the folder is setgid and group-writable") {
    fs::path plain = npucc::test::temp_dir("plain");
    ::chmod(plain.c_str(), 0755);
    CHECK(resolve_sharing(npucc::CacheSharing::automatic, plain) == npucc::CacheSharing::none);
    fs::path shared = npucc::test::temp_dir("shared");
    ::chmod(shared.c_str(), 02770);
    CHECK(resolve_sharing(npucc::CacheSharing::automatic, shared) == npucc::CacheSharing::group);
    CHECK(resolve_sharing(npucc::CacheSharing::none, shared) == npucc::CacheSharing::none);
    ::chmod(shared.c_str(), 02750);
    CHECK(resolve_sharing(npucc::CacheSharing::automatic, shared) == npucc::CacheSharing::none);
  }
}

#include "cache/input_digests.h"
#include "cache/local_storage.h"
#include "key/input_digest.h"
#include "test_support.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/file_stamp.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <chrono>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <thread>

namespace fs = std::filesystem;
using npucc::DigestCacheMode;
using npucc::cache::InputDigest;
using npucc::cache::InputDigests;
using npucc::cache::LocalStorage;

namespace {

struct Cache {
  fs::path root = npucc::test::temp_dir("digests");
  LocalStorage storage{(npucc::init_cache_dir(root), fs::canonical(root))};
};

npucc::util::Fd open_file(const fs::path& path) {
  npucc::util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.get() >= 0);
  return fd;
}

// A file last changed more than the racy margin ago: a bundled model (its ctime is the
// checkout's), waited for when the checkout is that recent.
fs::path settled_file() {
  fs::path path = fs::path(NPUCC_TESTDATA_DIR) / "models" / "ppocr_cls.onnx";
  npucc::util::Fd fd = open_file(path);
  int64_t ctime = npucc::util::stamp_of(fd.get())->ctime_ns;
  int64_t wait = ctime + npucc::cache::k_racy_margin_ns - npucc::util::realtime_ns();
  if (wait > 0) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait + 100000000));
  }
  return path;
}

// The file's digest as a compile finds it (key/input_digest.h), opened anew each
// time, and whether it came from its recorded digest; nullopt when it could not be had.
std::optional<InputDigest> digest(InputDigests& digests, const fs::path& path) {
  auto file = npucc::util::InputFile::open(path, npucc::util::InputFile::Links::follow).value();
  InputDigest out = digests.look_up(file->fd());
  auto sha256 = npucc::key::digest_of_input(file, &digests);
  if (!sha256) {
    return std::nullopt;
  }
  out.sha256 = *sha256;
  return out;
}

std::vector<fs::path> digest_files(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root / "digests", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file()) {
      out.push_back(it->path());
    }
  }
  return out;
}

} // namespace

TEST_SUITE("npucc::cache::InputDigests") {
  TEST_CASE("a settled file is hashed once, then known by its recorded digest") {
    Cache c;
    fs::path path = settled_file();
    std::string sha = npucc::util::sha256_file_hex(path);
    InputDigests digests(&c.storage, DigestCacheMode::on);
    npucc::util::Fd fd = open_file(path);
    auto first = digest(digests, path);
    REQUIRE(first);
    CHECK_FALSE(first->from_stamp);
    CHECK(first->sha256 == sha);
    CHECK(digest_files(c.root).size() == 1);
    auto second = digest(digests, path);
    REQUIRE(second);
    CHECK(second->from_stamp);
    CHECK(second->sha256 == sha);
    // Each file counts once, by its first verdict.
    CHECK(digests.tally().from_stamp == 0);
    CHECK(digests.tally().hashed == 1);
    CHECK(digests.look_up(fd.get()).from_stamp);
  }

  TEST_CASE("a file changed a moment ago is hashed every time, never recorded") {
    Cache c;
    fs::path path = npucc::test::temp_dir("digests-input") / "m.onnx";
    npucc::util::write_file_atomic(path, "fresh bytes");
    InputDigests digests(&c.storage, DigestCacheMode::on);
    npucc::util::Fd fd = open_file(path);
    for (int i = 0; i < 2; ++i) {
      auto found = digest(digests, path);
      REQUIRE(found);
      CHECK_FALSE(found->from_stamp);
      CHECK(found->sha256 == npucc::util::sha256_hex("fresh bytes"));
    }
    CHECK(digest_files(c.root).empty());
  }

  TEST_CASE("off, read-only and no cache record and use nothing") {
    Cache c;
    fs::path path = settled_file();
    npucc::util::Fd fd = open_file(path);
    InputDigests off(&c.storage, DigestCacheMode::off);
    REQUIRE(digest(off, path));
    CHECK(off.tally().why_hashed == "the digest cache is off: cache.digest_cache");
    LocalStorage read_only(c.storage.root(), npucc::CacheAccess::read_only);
    InputDigests looking(&read_only, DigestCacheMode::on);
    REQUIRE(digest(looking, path));
    InputDigests none(nullptr, DigestCacheMode::on);
    REQUIRE(digest(none, path));
    CHECK(digest_files(c.root).empty());
  }

  TEST_CASE("a damaged, foreign or future-dated digest file is not trusted") {
    Cache c;
    fs::path path = settled_file();
    npucc::util::Fd fd = open_file(path);
    InputDigests digests(&c.storage, DigestCacheMode::on);
    REQUIRE(digest(digests, path));
    auto files = digest_files(c.root);
    REQUIRE(files.size() == 1);
    std::string good = npucc::util::read_file(files[0]);
    auto lines = npucc::util::split(good, '\n');
    REQUIRE(lines.size() == 5);
    const std::string wrong_sha = "sha256 " + std::string(64, 'a');
    const std::string future = "recorded " + std::to_string(npucc::util::realtime_ns() + 3600e9);
    for (const std::string& bad :
         {std::string(""), good.substr(0, good.size() - 1),
          lines[0] + "\nstamp 1 2 3 4 5\n" + lines[2] + "\n" + lines[3] + "\n",
          lines[0] + "\n" + lines[1] + "\nsha256 XYZ\n" + lines[3] + "\n",
          lines[0] + "\n" + lines[1] + "\n" + wrong_sha + "\n" + future + "\n"}) {
      CAPTURE(bad);
      npucc::util::write_file_atomic(files[0], bad);
      InputDigest found = digests.look_up(fd.get());
      CHECK_FALSE(found.from_stamp);
      CHECK_FALSE(found.why_hashed.empty());
    }
    npucc::util::write_file_atomic(files[0], good);
    CHECK(digests.look_up(fd.get()).from_stamp);
  }

  TEST_CASE("verify names a stray in digests/, purge --all empties it") {
    Cache c;
    fs::path path = settled_file();
    npucc::util::Fd fd = open_file(path);
    InputDigests digests(&c.storage, DigestCacheMode::on);
    REQUIRE(digest(digests, path));
    CHECK(c.storage.verify(npucc::cache::Fix::no).findings.empty());
    fs::path shard = digest_files(c.root)[0].parent_path();
    fs::path stray = shard / (shard.filename().string() + std::string(62, 'f'));
    npucc::util::write_file_atomic(stray, "not a digest\n");
    auto report = c.storage.verify(npucc::cache::Fix::no);
    REQUIRE(report.findings.size() == 1);
    CHECK(report.findings[0].path == stray);
    fs::remove(stray);
    npucc::cache::PurgeOptions all;
    all.all = true;
    c.storage.purge(all, npucc::cache::DryRun::no);
    CHECK(digest_files(c.root).empty());
  }
}

TEST_SUITE("npucc::util::FileStamp") {
  TEST_CASE("file systems not known to keep inode times are not trusted") {
    npucc::util::Fd proc = open_file("/proc/self/status"); // procfs: not in the list
    npucc::util::FileSystem fs = npucc::util::file_system_of(proc.get());
    CHECK_FALSE(fs.keeps_stamps);
    CHECK(fs.name.rfind("type 0x", 0) == 0);
    npucc::util::Fd here = open_file(settled_file());
    CHECK_FALSE(npucc::util::file_system_of(here.get()).name.empty());
  }

  TEST_CASE("a stamp is the whole of device, inode, size, mtime and ctime") {
    npucc::util::FileStamp a{1, 2, 3, 4, 5};
    for (auto change : {&npucc::util::FileStamp::mtime_ns, &npucc::util::FileStamp::ctime_ns}) {
      npucc::util::FileStamp b = a;
      b.*change += 1;
      CHECK(a != b);
    }
    npucc::util::FileStamp c = a;
    c.inode = 9;
    CHECK(a != c);
    CHECK(npucc::util::stamp_text(a) == "1 2 3 4 5");
  }

  TEST_CASE("without a key, only the user's own digest that nobody else may write is used") {
    Cache c;
    fs::path path = settled_file();
    npucc::util::Fd fd = open_file(path);
    InputDigests digests(&c.storage, DigestCacheMode::on);
    REQUIRE(digest(digests, path));
    auto files = digest_files(c.root);
    REQUIRE(files.size() == 1);
    CHECK((fs::status(files[0]).permissions() & fs::perms::group_write) == fs::perms::none);
    REQUIRE(digests.look_up(fd.get()).from_stamp);
    fs::permissions(files[0], fs::perms::group_write, fs::perm_options::add);
    InputDigest found = digests.look_up(fd.get());
    CHECK_FALSE(found.from_stamp);
    CHECK(found.why_hashed.find("others may write it") != std::string::npos);
  }

  TEST_CASE("with a key, digests are signed, and one unsigned or altered is not used") {
    Cache c;
    c.storage.set_signing_key(npucc::cache::SigningKey{"k", std::string(32, 'k')});
    fs::path path = settled_file();
    npucc::util::Fd fd = open_file(path);
    InputDigests digests(&c.storage, DigestCacheMode::on);
    REQUIRE(digest(digests, path));
    auto files = digest_files(c.root);
    REQUIRE(files.size() == 1);
    std::string good = npucc::util::read_file(files[0]);
    auto lines = npucc::util::split(good, '\n');
    REQUIRE(lines.size() == 6);
    CHECK(npucc::util::starts_with(lines[4], "hmac-sha256 "));
    CHECK(digests.look_up(fd.get()).from_stamp);
    CHECK(c.storage.verify(npucc::cache::Fix::no).findings.empty());
    const std::string other_sha = "sha256 " + std::string(64, 'a');
    // Unsigned (as a keyless user writes them): not used, but no damage for verify.
    npucc::util::write_file_atomic(files[0], lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n" +
                                                 lines[3] + "\n");
    InputDigest unsigned_one = digests.look_up(fd.get());
    CHECK_FALSE(unsigned_one.from_stamp);
    CHECK(unsigned_one.why_hashed.find("not signed with the cache key") != std::string::npos);
    CHECK(c.storage.verify(npucc::cache::Fix::no).findings.empty());
    // Another digest under the signature: not used, and reported.
    npucc::util::write_file_atomic(files[0], lines[0] + "\n" + lines[1] + "\n" + other_sha + "\n" +
                                                 lines[3] + "\n" + lines[4] + "\n");
    InputDigest forged = digests.look_up(fd.get());
    CHECK_FALSE(forged.from_stamp);
    CHECK(forged.why_hashed.find("not signed with the cache key") != std::string::npos);
    auto report = c.storage.verify(npucc::cache::Fix::no);
    REQUIRE(report.findings.size() == 1);
    CHECK(report.findings[0].detail.find("signature does not check") != std::string::npos);
    // Signed with another key: as unsigned.
    LocalStorage other(c.storage.root());
    other.set_signing_key(npucc::cache::SigningKey{"k2", std::string(32, 'x')});
    npucc::util::write_file_atomic(files[0], good);
    CHECK_FALSE(InputDigests(&other, DigestCacheMode::on).look_up(fd.get()).from_stamp);
    CHECK(digests.look_up(fd.get()).from_stamp);
  }
}

TEST_SUITE("npucc::cache::InputDigests") {
  TEST_CASE("a sample hint names a touched copy's likely digest, never a digest to use") {
    Cache c;
    fs::path dir = npucc::test::temp_dir("samples");
    std::string bytes(3 << 20, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
    }
    npucc::util::write_file_atomic(dir / "model.onnx", bytes);
    std::string sha = npucc::util::sha256_file_hex(dir / "model.onnx");
    InputDigests digests(&c.storage, DigestCacheMode::on);
    npucc::util::Fd fd = open_file(dir / "model.onnx");
    CHECK_FALSE(digests.likely_digest(fd.get()));
    digests.record_likely_digest(fd.get(), sha);
    // A fresh checkout: the same bytes, another inode and stamp.
    npucc::util::write_file_atomic(dir / "copy.onnx", bytes);
    npucc::util::Fd copy = open_file(dir / "copy.onnx");
    CHECK(digests.likely_digest(copy.get()) == sha);
    CHECK_FALSE(digests.look_up(copy.get()).from_stamp); // a hint, not a recorded digest
    CHECK(c.storage.verify(npucc::cache::Fix::no).findings.empty());
    // Other bytes in a sampled block (the first), or another size: no hint.
    std::string changed = bytes;
    changed[100] = static_cast<char>(changed[100] ^ 1);
    npucc::util::write_file_atomic(dir / "changed.onnx", changed);
    CHECK_FALSE(digests.likely_digest(open_file(dir / "changed.onnx").get()));
    npucc::util::write_file_atomic(dir / "longer.onnx", bytes + "x");
    CHECK_FALSE(digests.likely_digest(open_file(dir / "longer.onnx").get()));
    // Without the cache: nothing recorded or found.
    InputDigests none(nullptr, DigestCacheMode::on);
    CHECK_FALSE(none.likely_digest(copy.get()));
  }
}

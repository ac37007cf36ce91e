#include "cache/entry_format.h"
#include "cache/remote/bundle.h"
#include "cache/remote/circuit_breaker.h"
#include "cache/remote/transport.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <sys/statvfs.h>

namespace {

namespace fs = std::filesystem;
using namespace npucc::cache::remote;

// A folder with a header and two files, bundled; returns the bundle's bytes.
std::string make_bundle(const fs::path& dir) {
  fs::create_directories(dir / "src");
  npucc::util::write_file_atomic(dir / "src" / npucc::cache::k_header_file, "header text\n");
  npucc::util::write_file_atomic(dir / "src" / "high.onnx", std::string(5000, 'g'));
  npucc::util::write_file_atomic(dir / "src" / "manifest.json", "{}");
  uint64_t bytes = write_bundle(
      dir / "src", {npucc::cache::k_header_file, "high.onnx", "manifest.json"}, dir / "object");
  std::string data = npucc::util::read_file(dir / "object");
  CHECK(data.size() == bytes);
  return data;
}

UnpackResult unpack_bytes(const fs::path& dir, const std::string& data) {
  npucc::util::write_file_atomic(dir / "edited", data);
  fs::path into = dir / ("into" + std::to_string(data.size()) + std::to_string(rand()));
  fs::create_directories(into);
  return unpack_bundle(dir / "edited", into);
}

void put_u64(std::string& data, size_t at, uint64_t value) {
  for (int i = 7; i >= 0; --i) {
    data[at + static_cast<size_t>(7 - i)] = static_cast<char>((value >> (i * 8)) & 0xff);
  }
}

} // namespace

TEST_SUITE("npucc::cache::remote::bundle") {
  TEST_CASE("a bundle round-trips every file byte for byte") {
    fs::path dir = npucc::test::temp_dir("bundle-roundtrip");
    make_bundle(dir);
    fs::create_directories(dir / "out");
    UnpackResult result = unpack_bundle(dir / "object", dir / "out");
    REQUIRE(result.ok);
    CHECK(result.names.size() == 3);
    CHECK(npucc::util::read_file(dir / "out" / "high.onnx") == std::string(5000, 'g'));
    CHECK(npucc::util::read_file(dir / "out" / npucc::cache::k_header_file) == "header text\n");
    CHECK(npucc::util::read_file(dir / "out" / "manifest.json") == "{}");
  }

  TEST_CASE("a damaged bundle is refused") {
    fs::path dir = npucc::test::temp_dir("bundle-damaged");
    std::string good = make_bundle(dir);
    // Table: magic(8) count(4), then name-length(2) "entry.npucc"(11) size(8) sha(32).
    const size_t first_size = 8 + 4 + 2 + 11;
    std::string data = good;
    SUBCASE("truncated") {
      data.resize(data.size() - 100);
      UnpackResult result = unpack_bytes(dir, data);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("truncated") != std::string::npos);
    }
    SUBCASE("padded") {
      data += "x";
      CHECK_FALSE(unpack_bytes(dir, data).ok);
    }
    SUBCASE("a flipped payload byte") {
      data[data.size() - 1000] ^= 1;
      UnpackResult result = unpack_bytes(dir, data);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("checksum") != std::string::npos);
    }
    SUBCASE("a flipped digest byte") {
      data[data.size() - 1] ^= 1;
      UnpackResult result = unpack_bytes(dir, data);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("digest") != std::string::npos);
    }
    SUBCASE("a huge size is refused before anything is written") {
      put_u64(data, first_size, uint64_t{1} << 62);
      UnpackResult result = unpack_bytes(dir, data);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("truncated") != std::string::npos);
    }
    SUBCASE("a huge file count") {
      data[8] = '\x7f';
      CHECK(unpack_bytes(dir, data).problem.find("file count") != std::string::npos);
    }
    SUBCASE("bad magic") {
      data[0] = 'X';
      CHECK(unpack_bytes(dir, data).problem.find("magic") != std::string::npos);
    }
    SUBCASE("a path name") {
      // Same length as "entry.npucc" (11 bytes): a parent reference and a slash.
      data.replace(8 + 4 + 2, 11, "../x/evil.o");
      UnpackResult result = unpack_bytes(dir, data);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("refused file name") != std::string::npos);
      CHECK_FALSE(fs::exists(dir / "x"));
    }
    SUBCASE("empty object") {
      CHECK_FALSE(unpack_bytes(dir, "").ok);
    }
  }

  TEST_CASE("pieces of every size, gathered or written where they are, arrive in order") {
    fs::path dir = npucc::test::temp_dir("bundle-pieces");
    fs::create_directories(dir / "src");
    std::string big(3 * k_bundle_piece_bytes + 12345, '\0');
    for (size_t i = 0; i < big.size(); ++i) {
      big[i] = static_cast<char>((i * 2654435761u) >> 13);
    }
    npucc::util::write_file_atomic(dir / "src" / npucc::cache::k_header_file, "header\n");
    npucc::util::write_file_atomic(dir / "src" / "high.onnx", big);
    npucc::util::write_file_atomic(dir / "src" / "manifest.json", "{}");
    write_bundle(dir / "src", {npucc::cache::k_header_file, "high.onnx", "manifest.json"},
                 dir / "object");
    std::string object = npucc::util::read_file(dir / "object");
    // Short runs to gather, runs past k_bundle_direct_bytes, and runs across file ends.
    const size_t sizes[] = {5,
                            k_bundle_direct_bytes + 1,
                            300,
                            k_bundle_piece_bytes + 7,
                            1,
                            k_bundle_direct_bytes - 1,
                            2 * k_bundle_direct_bytes};
    auto feed_all = [&](const std::string& data, const fs::path& into) {
      fs::create_directories(into);
      BundleReceiver receiver(into);
      receiver.expect_size(data.size());
      size_t at = 0;
      for (size_t i = 0; at < data.size(); ++i) {
        size_t n = std::min(sizes[i % std::size(sizes)], data.size() - at);
        if (!receiver.feed(data.data() + at, n)) {
          break;
        }
        at += n;
      }
      return receiver.finish();
    };
    UnpackResult result = feed_all(object, dir / "out");
    REQUIRE(result.ok);
    CHECK(npucc::util::read_file(dir / "out" / "high.onnx") == big);
    CHECK(npucc::util::read_file(dir / "out" / "manifest.json") == "{}");
    // A byte flipped in a run written where it is is caught as well.
    object[object.size() - 5000] ^= 0x01;
    UnpackResult damaged = feed_all(object, dir / "damaged");
    CHECK_FALSE(damaged.ok);
    CHECK(damaged.problem.find("high.onnx does not match its checksum") != std::string::npos);
  }

  TEST_CASE("without a size from the server, a bundle past the maximum is refused") {
    fs::path dir = npucc::test::temp_dir("bundle-max");
    std::string object = make_bundle(dir);
    fs::create_directories(dir / "out");
    // The table's own sizes are past the maximum: refused once the table is read.
    BundleReceiver small(dir / "out", 4000);
    CHECK_FALSE(small.feed(object.data(), 300)); // the table, not yet the maximum
    CHECK(small.problem().find("high.onnx has 5000 bytes") != std::string::npos);
    // The table fits, the bytes keep coming (an answer without Content-Length).
    BundleReceiver receiver(dir / "out2", object.size());
    fs::create_directories(dir / "out2");
    CHECK(receiver.feed(object.data(), object.size()));
    CHECK_FALSE(receiver.feed("x", 1));
    CHECK(receiver.problem().find("the most a bundle may hold") != std::string::npos);
    // A size declared past the maximum (Content-Length, a Redis value's length) refuses the
    // bundle before a byte is taken.
    fs::create_directories(dir / "out3");
    BundleReceiver declared(dir / "out3", object.size());
    declared.expect_size(object.size() + 1);
    CHECK_FALSE(declared.feed(object.data(), 8));
    CHECK(declared.problem().find("more than") != std::string::npos);
    CHECK(fs::is_empty(dir / "out3"));
  }

  TEST_CASE("no bundle larger than the free space of its folder") {
    fs::path dir = npucc::test::temp_dir("bundle-room");
    fs::create_directories(dir / "out");
    struct statvfs room {};
    REQUIRE(::statvfs((dir / "out").c_str(), &room) == 0);
    const uint64_t free_bytes = static_cast<uint64_t>(room.f_bavail) * room.f_frsize;
    BundleReceiver receiver(dir / "out", ~uint64_t{0});
    receiver.expect_size(free_bytes + (uint64_t{1} << 30)); // a gigabyte more than there is
    CHECK_FALSE(receiver.feed("NPUCCBD2", 8));
    CHECK(receiver.problem().find("the free space where it is unpacked") != std::string::npos);
  }

  TEST_CASE("names that are not plain are not bundled") {
    fs::path dir = npucc::test::temp_dir("bundle-names");
    fs::create_directories(dir / "src");
    npucc::util::write_file_atomic(dir / "src" / ".hidden", "x");
    CHECK_THROWS_AS(write_bundle(dir / "src", {".hidden"}, dir / "object"), npucc::Error);
    CHECK_THROWS_AS(write_bundle(dir / "src", {}, dir / "object2"), npucc::Error);
  }
}

TEST_SUITE("npucc::cache::remote::transport") {
  TEST_CASE("the circuit breaker opens once per URL") {
    CHECK_FALSE(remote_is_down("http://unit-test-breaker/"));
    CHECK(mark_remote_down("http://unit-test-breaker/"));
    CHECK_FALSE(mark_remote_down("http://unit-test-breaker/"));
    CHECK(remote_is_down("http://unit-test-breaker/"));
    CHECK_FALSE(remote_is_down("http://unit-test-other/"));
  }
}

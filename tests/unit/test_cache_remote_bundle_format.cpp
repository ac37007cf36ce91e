// Bundle format 2 (one hash per byte), its streaming receiver, and format 1 compatibility.
#include "cache/entry_format.h"
#include "cache/remote/bundle.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <doctest/doctest.h>

namespace {

namespace fs = std::filesystem;
using namespace npucc::cache::remote;
using npucc::cache::k_header_file;

// Bytes that differ from piece to piece, so a piece written twice or skipped shows.
std::string pattern(size_t size, unsigned seed) {
  std::string out(size, '\0');
  uint32_t state = seed * 2654435761u + 1;
  for (auto& c : out) {
    state = state * 1103515245u + 12345u;
    c = static_cast<char>(state >> 24);
  }
  return out;
}

std::string raw_sha(const std::string& data) {
  std::string hex = npucc::util::sha256_hex(data);
  std::string raw;
  for (size_t i = 0; i < hex.size(); i += 2) {
    raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return raw;
}

void put_be(std::string& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out += static_cast<char>((value >> (i * 8)) & 0xff);
  }
}

using Files = std::vector<std::pair<std::string, std::string>>;

// A format-1 object as earlier builds wrote it: the digest covers every byte.
std::string bundle_v1(const Files& files) {
  std::string out = k_bundle_magic_v1;
  put_be(out, files.size(), 4);
  for (const auto& [name, data] : files) {
    put_be(out, name.size(), 2);
    out += name;
    put_be(out, data.size(), 8);
    out += raw_sha(data);
  }
  for (const auto& file : files) {
    out += file.second;
  }
  return out + raw_sha(out);
}

// Feeds `data` to a receiver in pieces of the given sizes, cycling.
UnpackResult receive(const fs::path& into, const std::string& data,
                     const std::vector<size_t>& sizes, bool known_size = true) {
  fs::create_directories(into);
  BundleReceiver receiver(into);
  if (known_size) {
    receiver.expect_size(data.size());
  }
  size_t at = 0;
  for (size_t i = 0; at < data.size(); ++i) {
    size_t n = std::min(sizes[i % sizes.size()], data.size() - at);
    if (!receiver.feed(data.data() + at, n)) {
      break;
    }
    at += n;
  }
  return receiver.finish();
}

// A folder with a header, a file of several hash pieces, a small file and an empty one.
Files sample_files() {
  return {{k_header_file, "header\n"},
          {"high.onnx", pattern(3 * k_bundle_piece_bytes + 12345, 1)},
          {"manifest.json", "{}"},
          {"empty.bin", ""}};
}

std::string write_sample(const fs::path& dir, const Files& files) {
  fs::create_directories(dir / "src");
  std::vector<std::string> names;
  for (const auto& [name, data] : files) {
    npucc::util::write_file_atomic(dir / "src" / name, data);
    names.push_back(name);
  }
  write_bundle(dir / "src", names, dir / "object");
  return npucc::util::read_file(dir / "object");
}

} // namespace

TEST_SUITE("npucc::cache::remote::bundle") {
  TEST_CASE("format 2: the digest covers the table, which covers the payload") {
    fs::path dir = npucc::test::temp_dir("bundle-v2");
    Files files = sample_files();
    std::string data = write_sample(dir, files);
    REQUIRE(data.compare(0, 8, k_bundle_magic) == 0);
    // The table records each file's real checksum, written once the file was copied.
    size_t at = 12;
    for (const auto& [name, bytes] : files) {
      at += 2 + name.size() + 8;
      CHECK(data.substr(at, 32) == raw_sha(bytes));
      at += 32;
    }
    size_t table_end = at;
    CHECK(data.substr(data.size() - 32) == raw_sha(data.substr(0, table_end)));

    std::vector<size_t> odd = {1, 7, 16384, 3 << 20, 100000};
    SUBCASE("received in odd pieces, with and without a known size") {
      for (bool known : {true, false}) {
        fs::path into = dir / (known ? "known" : "unknown");
        UnpackResult result = receive(into, data, odd, known);
        REQUIRE_MESSAGE(result.ok, result.problem);
        CHECK(result.names.size() == files.size());
        for (const auto& [name, bytes] : files) {
          CHECK(npucc::util::read_file(into / name) == bytes);
          CHECK(result.sha256[name] == npucc::util::sha256_hex(bytes));
          CHECK((fs::status(into / name).permissions() & fs::perms::owner_write) ==
                fs::perms::none);
        }
      }
    }
    SUBCASE("a flipped byte in the middle of a large file") {
      data[table_end + 7 + k_bundle_piece_bytes + 5] ^= 0x10;
      UnpackResult result = receive(dir / "into", data, odd);
      CHECK_FALSE(result.ok);
      CHECK(result.problem == "high.onnx does not match its checksum");
    }
    SUBCASE("cut inside a large file, size unknown") {
      data.resize(table_end + 7 + 2 * k_bundle_piece_bytes);
      UnpackResult result = receive(dir / "into", data, odd, false);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("truncated") != std::string::npos);
    }
    SUBCASE("cut after the last file, before the digest, size unknown") {
      data.resize(data.size() - 32);
      UnpackResult result = receive(dir / "into", data, odd, false);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("truncated") != std::string::npos);
    }
    SUBCASE("an edited table the per-file checksums cannot see") {
      // "manifest.json" -> "manifest.jsom": every file still matches its checksum.
      size_t name_at = data.find("manifest.json");
      REQUIRE(name_at < table_end);
      data[name_at + 12] = 'm';
      UnpackResult result = receive(dir / "into", data, odd);
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("digest") != std::string::npos);
    }
    SUBCASE("a file's checksum edited in the table") {
      data[12 + 2 + 11 + 8] ^= 1; // the header file's recorded checksum
      CHECK_FALSE(receive(dir / "into", data, odd).ok);
    }
  }

  TEST_CASE("format 1 objects from earlier builds are still read and checked") {
    fs::path dir = npucc::test::temp_dir("bundle-v1");
    Files files = sample_files();
    std::string data = bundle_v1(files);
    SUBCASE("whole") {
      UnpackResult result = receive(dir / "into", data, {65536, 3});
      REQUIRE_MESSAGE(result.ok, result.problem);
      CHECK(npucc::util::read_file(dir / "into" / "high.onnx") == files[1].second);
    }
    SUBCASE("a flipped digest byte") {
      data.back() ^= 1;
      UnpackResult result = receive(dir / "into", data, {65536});
      CHECK_FALSE(result.ok);
      CHECK(result.problem.find("digest") != std::string::npos);
    }
    SUBCASE("a flipped payload byte") {
      data[data.size() - 40] ^= 1; // the end of high.onnx
      CHECK_FALSE(receive(dir / "into", data, {65536}).ok);
    }
  }
}

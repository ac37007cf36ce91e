#include "model/varint_ends.h"
#include "model/wire_source.h"
#include "util/parallel.h"

#include <doctest/doctest.h>
#include <optional>
#include <string>

// The count of a large packed varint field in parts at once (model/varint_ends.h) against
// the values written, with the cuts between parts falling inside varints and long runs of
// continuation bytes placed across them.
namespace {

using npucc::model::count_packed_varints;
using npucc::model::WireSource;

std::string varint(uint64_t value) {
  std::string out;
  npucc::model::put_varint(out, value);
  return out;
}

// Values of every length from one byte to ten, `count` of them.
std::string varints(size_t count) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t value = (uint64_t{i} * 0x9E3779B97F4A7C15ull) >> (i % 64);
    out += varint(i % 3 == 0 ? ~value : value);
  }
  return out;
}

std::optional<uint64_t> count_of(const std::string& bytes) {
  WireSource source{std::string_view(bytes)};
  return count_packed_varints(source, 0, bytes.size());
}

// The count as protobuf reads a packed field, a byte at a time: nullopt for a varint of
// more than ten bytes, or one the field's end cuts.
std::optional<uint64_t> reference_count(const std::string& bytes) {
  uint64_t values = 0;
  uint64_t run = 0;
  for (char byte : bytes) {
    if ((static_cast<uint8_t>(byte) & 0x80) != 0) {
      ++run;
      continue;
    }
    if (run > 9) {
      return std::nullopt;
    }
    ++values;
    run = 0;
  }
  return run == 0 ? std::optional<uint64_t>(values) : std::nullopt;
}

// Sets thread_budget for a test and restores it.
struct Budget {
  explicit Budget(unsigned threads) : previous(npucc::util::set_thread_budget(threads)) {}
  ~Budget() { npucc::util::set_thread_budget(previous); }
  unsigned previous;
};

} // namespace

TEST_SUITE("npucc::model::varint_ends") {
  TEST_CASE("a field counted in parts has the values written, wherever the cuts fall") {
    Budget budget(2);
    const size_t count = 1500000; // about 10 MB: two parts
    std::string bytes = varints(count);
    REQUIRE(bytes.size() > (8u << 20));
    for (size_t extra = 0; extra < 10; ++extra) { // shifts the cut through a varint
      CHECK(count_of(bytes + std::string(extra, '\x01')) == count + extra);
    }
    Budget one(1);
    CHECK(count_of(bytes) == count);
  }

  TEST_CASE("a run of continuation bytes is judged as protobuf does at every offset of a block") {
    // Runs of 0 to 11 continuation bytes starting at each offset of three 64-byte blocks
    // (the count takes 64 bytes at a time), in a field of one-byte values.
    for (size_t length = 0; length <= 11; ++length) {
      for (size_t offset = 0; offset < 192; ++offset) {
        std::string bytes(256, '\x05');
        for (size_t i = offset; i < offset + length; ++i) {
          bytes[i] = '\x80';
        }
        CAPTURE(length);
        CAPTURE(offset);
        CHECK(count_of(bytes) == reference_count(bytes));
        std::string two_runs = bytes; // a second run in the same block, after an end
        for (size_t i = 0; i < 9 && offset + length + 1 + i < 255; ++i) {
          two_runs[offset + length + 1 + i] = '\x80';
        }
        CHECK(count_of(two_runs) == reference_count(two_runs));
      }
    }
    CHECK(count_of(varints(100000)) == reference_count(varints(100000)));
  }

  TEST_CASE("what protobuf refuses is refused, across a cut too") {
    Budget budget(2);
    std::string bytes(10u << 20, '\x01'); // ten million one-byte values
    const size_t cut = bytes.size() / 2;
    SUBCASE("a ten-byte varint across the cut is one value") {
      for (size_t i = cut - 5; i < cut + 4; ++i) {
        bytes[i] = '\x81';
      }
      CHECK(count_of(bytes) == bytes.size() - 9);
    }
    SUBCASE("eleven bytes across the cut") {
      for (size_t i = cut - 5; i < cut + 5; ++i) {
        bytes[i] = '\x81';
      }
      CHECK_FALSE(count_of(bytes).has_value());
    }
    SUBCASE("eleven bytes inside a part") {
      for (size_t i = 1000; i < 1010; ++i) {
        bytes[i] = '\x81';
      }
      CHECK_FALSE(count_of(bytes).has_value());
    }
    SUBCASE("the field ends inside a varint") {
      bytes.back() = '\x81';
      CHECK_FALSE(count_of(bytes).has_value());
    }
  }
}

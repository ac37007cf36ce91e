#include "util/hex.h"

#include <doctest/doctest.h>

using namespace npucc::util;

TEST_SUITE("npucc::util::hex") {
  TEST_CASE("encoding and decoding are inverse") {
    const std::string bytes("\x00\x01\x7f\x80\xab\xff", 6);
    CHECK(hex_encode(bytes) == "00017f80abff");
    CHECK(hex_decode("00017f80abff") == bytes);
    CHECK(hex_encode("") == "");
    CHECK(hex_decode("") == std::string());
  }

  TEST_CASE("only lower-case hex of even length decodes") {
    for (const char* bad : {"0", "abc", "AB", "0g", " 00"}) {
      CAPTURE(bad);
      CHECK_FALSE(hex_decode(bad));
    }
  }

  TEST_CASE("a key is lower-case hex of the given length") {
    CHECK(is_lower_hex(std::string(64, 'a'), 64));
    CHECK_FALSE(is_lower_hex(std::string(63, 'a'), 64));
    CHECK_FALSE(is_lower_hex(std::string(64, 'A'), 64));
  }
}

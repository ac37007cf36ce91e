#include "util/strings.h"

#include <doctest/doctest.h>

using namespace npucc::util;

TEST_SUITE("npucc::util::strings") {
  TEST_CASE("split keeps empty fields") {
    CHECK(split("a|b|", '|') == std::vector<std::string>{"a", "b", ""});
    CHECK(split("", '|') == std::vector<std::string>{""});
  }

  TEST_CASE("parse_int64 takes whole numbers only") {
    int64_t value = 0;
    CHECK(parse_int64("42", value));
    CHECK(value == 42);
    CHECK(parse_int64("-1", value));
    CHECK_FALSE(parse_int64("4x", value));
    CHECK_FALSE(parse_int64("", value));
    CHECK_FALSE(parse_int64("99999999999999999999", value));
  }

  TEST_CASE("closest_match suggests near names and unique prefixes") {
    std::vector<std::string> names = {"compile", "inspect", "cache", "schedule"};
    CHECK(closest_match("compil", names) == "compile");
    CHECK(closest_match("insepct", names) == "inspect");
    CHECK(closest_match("sched", names) == "schedule");
    CHECK(closest_match("zzzzzzzz", names).empty());
  }

  TEST_CASE("format_bytes") {
    CHECK(format_bytes(512) == "512 B");
    CHECK(format_bytes(1536) == "1.5 KiB");
  }

  TEST_CASE("printable escapes C0, DEL and C1 controls and keeps other UTF-8") {
    CHECK(npucc::util::printable("a\x1b[31mb\tc\nd\x7f") == "a\\x1b[31mb\\x09c\\x0ad\\x7f");
    CHECK(npucc::util::printable("\xc2\x9b"
                                 "2J") == "\\xc2\\x9b"
                                          "2J");
    CHECK(npucc::util::printable("gr\xc3\xbc\xc3\x9f"
                                 "e \xc2\xa0") == "gr\xc3\xbc\xc3\x9f"
                                                  "e \xc2\xa0");
    CHECK(npucc::util::printable("\xc2") == "\xc2");
  }

  TEST_CASE("cut_for_message keeps a short text, cuts a long one on a character boundary") {
    CHECK(npucc::util::cut_for_message("abc") == "abc");
    CHECK(npucc::util::cut_for_message("a\nb") == "a\\x0ab");
    std::string big(100000, 'x');
    CHECK(npucc::util::cut_for_message(big) == std::string(80, 'x') + "...(100000 bytes)");
    std::string utf8 = std::string(79, 'a') + "\xc3\xa9" + std::string(10, 'b');
    CHECK(npucc::util::cut_for_message(utf8) == std::string(79, 'a') + "...(91 bytes)");
  }
}

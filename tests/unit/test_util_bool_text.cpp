#include "util/bool_text.h"
#include "util/strings.h"

#include <doctest/doctest.h>

using npucc::util::parse_bool_text;

TEST_SUITE("npucc::util::bool_text") {
  TEST_CASE("the spellings of true and false") {
    for (const char* yes : {"1", "true", "YES", " on ", "True"}) {
      CHECK(parse_bool_text(yes) == true);
    }
    for (const char* no : {"0", "false", "No", "OFF\n"}) {
      CHECK(parse_bool_text(no) == false);
    }
    for (const char* neither : {"", "2", "y", "enable", "truely"}) {
      CHECK_FALSE(parse_bool_text(neither).has_value());
    }
  }

  TEST_CASE("ASCII lower case leaves other bytes alone") {
    CHECK(npucc::util::ascii_lower("MiB") == "mib");
    CHECK(npucc::util::ascii_lower("\xc3\x84Z") == "\xc3\x84z");
  }
}

#include "cache/entry_format.h"

#include <doctest/doctest.h>

using namespace npucc::cache;

namespace {

EntryHeader sample() {
  EntryHeader header;
  header.compiler_version = "0.1.0";
  header.created = 1764400000;
  header.key = std::string(64, 'a');
  header.model = "my model%\nname";
  header.variants = "high:float32";
  header.options = R"({"passes":["a","b"]})";
  header.files = {{"high.onnx", std::string(64, 'b'), 123},
                  {"manifest.json", std::string(64, 'c'), 7}};
  return header;
}

} // namespace

TEST_SUITE("npucc::cache::EntryFormat") {
  TEST_CASE("round-trips every field, escaping newlines and percent signs") {
    EntryHeader header = sample();
    std::string text = serialize_header(header);
    CHECK(text.rfind("npucc-cache-entry 1\n", 0) == 0);
    CHECK(text.find("my model%25%0Aname") != std::string::npos);
    ParsedHeader parsed = parse_header(text);
    REQUIRE(parsed.problem == HeaderProblem::none);
    CHECK(parsed.header.model == header.model);
    CHECK(parsed.header.options == header.options);
    CHECK(parsed.header.created == header.created);
    REQUIRE(parsed.header.files.size() == 2);
    CHECK(parsed.header.files[1].name == "manifest.json");
    CHECK(parsed.header.total_bytes() == 130);
  }

  TEST_CASE("any changed, missing or added byte makes the header corrupt") {
    std::string text = serialize_header(sample());
    SUBCASE("flipped byte") {
      std::string bad = text;
      bad[30] ^= 1;
      CHECK(parse_header(bad).problem == HeaderProblem::corrupt);
    }
    SUBCASE("truncated") {
      for (size_t length : {size_t{0}, size_t{10}, text.size() / 2, text.size() - 1}) {
        CHECK(parse_header(text.substr(0, length)).problem == HeaderProblem::corrupt);
      }
    }
    SUBCASE("appended") {
      CHECK(parse_header(text + "x\n").problem == HeaderProblem::corrupt);
    }
  }

  TEST_CASE("another format version is foreign, not corrupt") {
    ParsedHeader parsed = parse_header("npucc-cache-entry 2\nwhatever\n");
    CHECK(parsed.problem == HeaderProblem::foreign_format);
    CHECK(parsed.error.find("version 2") != std::string::npos);
  }

  TEST_CASE("refuses unsafe file names even with a valid checksum") {
    for (const std::string name : {"../escape", "a/b", ".hidden", "entry.npucc", ".."}) {
      CAPTURE(name);
      CHECK_FALSE(is_plain_file_name(name));
      EntryHeader header = sample();
      header.files[0].name = name;
      ParsedHeader parsed = parse_header(serialize_header(header));
      CHECK(parsed.problem == HeaderProblem::corrupt);
      CHECK(parsed.error.find("unsafe") != std::string::npos);
    }
    CHECK(is_plain_file_name("high.onnx.data"));
  }

  TEST_CASE("a key prefix is 4 to 64 hex digits, lower-cased") {
    CHECK(check_key_prefix("ab12", "--key") == "ab12");
    CHECK(check_key_prefix("AB12cd", "--key") == "ab12cd");
    CHECK(check_key_prefix(std::string(64, 'f'), "--key") == std::string(64, 'f'));
    CHECK_THROWS_WITH(check_key_prefix("zz", "--key"),
                      "--key zz: not hex (a key is written with 0-9 and a-f)");
    CHECK_THROWS_WITH(check_key_prefix("abcg", "--key"),
                      "--key abcg: not hex (a key is written with 0-9 and a-f)");
    CHECK_THROWS_WITH(check_key_prefix("abc", "--key"), "--key abc: too short");
    CHECK_THROWS_WITH(check_key_prefix(std::string(65, 'a'), "key prefix"),
                      doctest::Contains("longer than a key"));
  }
}

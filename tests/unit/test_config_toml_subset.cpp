#include "config/toml_subset.h"
#include "npucc/error.h"

#include <doctest/doctest.h>

using namespace npucc::config;

namespace {

// The message of the error parsing `text` throws ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    parse_toml_subset(text, "cfg.toml");
  } catch (const npucc::Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE("npucc::config::parse_toml_subset") {
  TEST_CASE("pairs, tables, comments and value types") {
    auto entries = parse_toml_subset("# npucc settings\n"
                                     "\n"
                                     "precision_mode = \"allow_fp32_to_fp16\"  # trailing comment\n"
                                     "color='never'\n"
                                     "[cache]\n"
                                     "  dir = \"/var/cache/npucc\"\n"
                                     "max_size = 10_000_000\n"
                                     "disable = false\n",
                                     "cfg.toml");
    REQUIRE(entries.size() == 5);
    CHECK(entries[0].key == "precision_mode");
    CHECK(entries[0].value == "allow_fp32_to_fp16");
    CHECK(entries[0].line == 3);
    CHECK(entries[1].value == "never");
    CHECK(entries[2].key == "cache.dir");
    CHECK(entries[2].line == 6);
    CHECK(entries[3].key == "cache.max_size");
    CHECK(entries[3].type == TomlType::integer);
    CHECK(entries[3].value == "10000000");
    CHECK(entries[4].type == TomlType::boolean);
    CHECK(entries[4].value == "false");
  }

  TEST_CASE("dotted keys, escapes, CRLF and a byte order mark") {
    auto entries = parse_toml_subset("\xEF\xBB\xBF"
                                     "cache.dir = \"C:\\\\x\\t\\\"q\\\" \\u00e9\"\r\nn = -5\r\n",
                                     "cfg.toml");
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].key == "cache.dir");
    CHECK(entries[0].value == "C:\\x\t\"q\" \xC3\xA9");
    CHECK(entries[1].value == "-5");
    CHECK(entries[1].line == 2);
  }

  TEST_CASE("a '#' inside a string is not a comment") {
    auto entries = parse_toml_subset("a = \"x # y\" # z\nb = 'p#q'\n", "cfg.toml");
    CHECK(entries[0].value == "x # y");
    CHECK(entries[1].value == "p#q");
  }

  TEST_CASE("errors name the file and the line") {
    struct Case {
      const char* text;
      const char* message;
    };
    const Case cases[] = {
        {"a = \"x\"\nb = \"unterminated\n", "cfg.toml:2: unterminated string"},
        {"a = 1\na = 2\n", "cfg.toml:2: key \"a\" is given twice"},
        {"[cache]\ndir = \"x\"\n[cache]\n", "cfg.toml:3: table [cache] is defined twice"},
        {"x = 1.5\n", "cfg.toml:1: floating-point numbers are not supported"},
        {"x = [1, 2]\n", "cfg.toml:1: only arrays of strings are supported"},
        {"x = [\"a\"\n", "cfg.toml:1: an array must end on the line it starts on"},
        {"x = [\"a\" \"b\"]\n", "cfg.toml:1: expected \",\" or \"]\" in the array"},
        {"x = {a = 1}\n", "cfg.toml:1: inline tables are not supported"},
        {"\n\nx = \n", "cfg.toml:3: missing value after \"=\""},
        {"x = never\n", "cfg.toml:1: expected a value"},
        {"x = \"a\" \"b\"\n", "cfg.toml:1: unexpected text"},
        {"x \"a\"\n", "cfg.toml:1: expected \"=\" after the key"},
        {"= 3\n", "cfg.toml:1: expected a key"},
        {"\"quoted\" = 3\n", "cfg.toml:1: quoted keys are not supported"},
        {"[[cache]]\n", "cfg.toml:1: arrays of tables"},
        {"[cache\n", "cfg.toml:1: expected \"]\""},
        {"x = 007\n", "cfg.toml:1: leading zeros"},
        {"x = 1__0\n", "cfg.toml:1: \"_\" in a number"},
        {"x = 10G\n", "cfg.toml:1: malformed number (a string needs quotes)"},
        {"x = \"\\q\"\n", "cfg.toml:1: unknown escape \\q"},
        {"x = \"\"\"long\"\"\"\n", "cfg.toml:1: multi-line strings"},
        {"x = 1979-05-27\n", "cfg.toml:1: malformed number"},
        {"x = \"\\uD800\"\n", "cfg.toml:1: \\u escape is not a Unicode scalar value"},
        {"x = truely\n", "cfg.toml:1: expected a value"},
        {"x = 1234567890123456789\n", "cfg.toml:1: integer out of range"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.text);
      std::string message = error_of(c.text);
      CHECK(message.rfind(c.message, 0) == 0);
    }
  }

  TEST_CASE("arrays of strings, on one line") {
    auto entries = parse_toml_subset("a = [\"x:1,3\", 'y;z' , ]  # two\nb = []\n", "cfg.toml");
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].type == TomlType::string_array);
    CHECK(entries[0].items == std::vector<std::string>{"x:1,3", "y;z"});
    CHECK(entries[1].items.empty());
    CHECK(std::string(toml_type_name(entries[1].type)) == "an array of strings");
  }

  TEST_CASE("an empty file or only comments gives nothing") {
    CHECK(parse_toml_subset("", "cfg.toml").empty());
    CHECK(parse_toml_subset("# nothing\n   \n\t# more\n", "cfg.toml").empty());
  }

  TEST_CASE("arrays of tables: each [[name]] opens a new table") {
    TomlDocument document = parse_toml_document("top = 1\n"
                                                "[[model]]\n"
                                                "path = \"a.onnx\"\n"
                                                "input_shape = [\"x:1,3\"]\n"
                                                "[[model]]\n"
                                                "[[model]]  # third\n"
                                                "path = \"c.onnx\"\n"
                                                "[cache]\n"
                                                "dir = \"d\"\n",
                                                "m.toml");
    REQUIRE(document.array_tables.size() == 3);
    CHECK(document.array_tables[1].index == 1);
    CHECK(document.array_tables[1].line == 5);
    CHECK(document.array_tables[2].line == 6);
    const auto& entries = document.entries;
    REQUIRE(entries.size() == 5);
    CHECK(entries[0].array_table.empty());
    CHECK(entries[1].key == "model.path");
    CHECK(entries[1].array_table == "model");
    CHECK(entries[1].array_index == 0);
    CHECK(entries[2].items == std::vector<std::string>{"x:1,3"});
    CHECK(entries[3].value == "c.onnx");
    CHECK(entries[3].array_index == 2);
    CHECK(entries[3].line == 7);
    CHECK(entries[4].key == "cache.dir"); // a [table] ends the array's table
    CHECK(entries[4].array_table.empty());
  }

  TEST_CASE("arrays of tables: errors name the line") {
    auto error = [](const std::string& text) {
      try {
        parse_toml_document(text, "m.toml");
      } catch (const npucc::Error& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    CHECK(error("[[model]]\npath = \"a\"\npath = \"b\"\n")
              .rfind("m.toml:3: key \"model.path\" is given twice in this [[model]]", 0) == 0);
    // The same key in two tables of the array is no repetition.
    CHECK(error("[[model]]\npath = \"a\"\n[[model]]\npath = \"b\"\n").empty());
    CHECK(error("[model]\n[[model]]\n").rfind("m.toml:2: [[model]]: model is already", 0) == 0);
    CHECK(error("[[model]]\n[model]\n").rfind("m.toml:2: [model]: tables inside an array", 0) == 0);
    CHECK(error("[[model]]\n[model.x]\n").rfind("m.toml:2: [model.x]: tables inside", 0) == 0);
    CHECK(error("[[model]\n").rfind("m.toml:1: expected \"]]\"", 0) == 0);
    CHECK(error("[[a.b]]\n").rfind("m.toml:1: [[a.b]]: only top-level", 0) == 0);
  }
}

#include "cache/model_index.h"

#include <doctest/doctest.h>

using npucc::cache::parse_model_index;
using npucc::cache::serialize_model_index;

TEST_SUITE("npucc::cache::ModelIndex") {
  TEST_CASE("model index round-trips and refuses anything else") {
    auto parsed = parse_model_index("npucc-model-index 1\nexternal a.bin\nexternal sub/b.bin\n");
    REQUIRE(parsed.has_value());
    CHECK(parsed->external_locations == std::vector<std::string>{"a.bin", "sub/b.bin"});
    CHECK(parsed->key_facts.empty()); // an older npucc's index: no facts
    CHECK(parse_model_index("npucc-model-index 1\n")->external_locations.empty());
    CHECK_FALSE(parse_model_index("").has_value());
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nexternal a.bin").has_value());
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nother a.bin\n").has_value());
    CHECK_FALSE(parse_model_index("npucc-model-index 2\n").has_value());
  }

  TEST_CASE("the key's facts are the index's last line, once") {
    std::string text = serialize_model_index({"sub/b.bin", "a.bin"}, R"({"opset":13})");
    CHECK(text == "npucc-model-index 1\nexternal a.bin\nexternal sub/b.bin\n"
                  "key-facts {\"opset\":13}\n");
    auto parsed = parse_model_index(text);
    REQUIRE(parsed.has_value());
    CHECK(parsed->external_locations == std::vector<std::string>{"a.bin", "sub/b.bin"});
    CHECK(parsed->key_facts == R"({"opset":13})");
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nkey-facts {}\nexternal a.bin\n"));
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nkey-facts {}\nkey-facts {}\n"));
    // Facts that would break the line format are not recorded.
    CHECK(serialize_model_index({}, "{\n}") == "npucc-model-index 1\n");
  }
}

#include "cache/model_index.h"

#include <doctest/doctest.h>

using npucc::cache::parse_model_index;

TEST_SUITE("npucc::cache::ModelIndex") {
  TEST_CASE("model index round-trips and refuses anything else") {
    auto parsed = parse_model_index("npucc-model-index 1\nexternal a.bin\nexternal sub/b.bin\n");
    REQUIRE(parsed.has_value());
    CHECK(*parsed == std::vector<std::string>{"a.bin", "sub/b.bin"});
    CHECK(parse_model_index("npucc-model-index 1\n")->empty());
    CHECK_FALSE(parse_model_index("").has_value());
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nexternal a.bin").has_value());
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nother a.bin\n").has_value());
    CHECK_FALSE(parse_model_index("npucc-model-index 2\n").has_value());
  }
}

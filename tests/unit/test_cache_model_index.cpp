#include "cache/model_index.h"

#include <doctest/doctest.h>
#include <unistd.h>

using npucc::cache::ModelIndex;
using npucc::cache::parse_model_index;
using npucc::cache::why_key_facts_not_used;
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

  TEST_CASE("the key's facts are the index's last line, once, after their model's SHA-256") {
    const std::string sha(64, 'a');
    std::string text = serialize_model_index({"sub/b.bin", "a.bin"}, sha, R"({"opset":13})");
    CHECK(text == "npucc-model-index 1\nexternal a.bin\nexternal sub/b.bin\n"
                  "key-facts " + sha + " {\"opset\":13}\n");
    auto parsed = parse_model_index(text);
    REQUIRE(parsed.has_value());
    CHECK(parsed->external_locations == std::vector<std::string>{"a.bin", "sub/b.bin"});
    CHECK(parsed->key_facts == R"({"opset":13})");
    CHECK(parsed->key_facts_model == sha);
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nkey-facts {}\nexternal a.bin\n"));
    CHECK_FALSE(parse_model_index("npucc-model-index 1\nkey-facts {}\nkey-facts {}\n"));
    // Facts that would break the line format, or of no model, are not recorded.
    CHECK(serialize_model_index({}, sha, "{\n}") == "npucc-model-index 1\n");
    CHECK(serialize_model_index({}, "", "{}") == "npucc-model-index 1\n");
    // An older npucc's facts name no model: parsed, bound to none.
    parsed = parse_model_index("npucc-model-index 1\nkey-facts {\"opset\":13}\n");
    REQUIRE(parsed.has_value());
    CHECK(parsed->key_facts == R"({"opset":13})");
    CHECK(parsed->key_facts_model.empty());
  }

  // Issue 42 item 2: facts choose which options the key drops, so only facts no one else
  // could have written are used.
  TEST_CASE("key facts are used only when this user's own, unwritable by others, of this model") {
    const std::string sha(64, 'b');
    ModelIndex index = *parse_model_index(serialize_model_index({}, sha, "{}"));
    index.owner_uid = ::geteuid();
    index.mode = 0640;
    CHECK(why_key_facts_not_used(index, sha, false).empty());
    index.mode = 0600;
    CHECK(why_key_facts_not_used(index, sha, false).empty());
    CHECK(why_key_facts_not_used(index, sha, true) ==
          "the cache has a signing key, and the index is not signed");
    CHECK(why_key_facts_not_used(index, std::string(64, 'c'), false) ==
          "its facts name another model's SHA-256 (an index moved from another name)");
    index.mode = 0660; // a member may rewrite it in place, keeping this user as its owner
    CHECK(why_key_facts_not_used(index, sha, false) == "others may write the index (mode 0660)");
    index.mode = 0602;
    CHECK_FALSE(why_key_facts_not_used(index, sha, false).empty());
    index.mode = 0640;
    index.owner_uid = ::geteuid() + 1; // a member's replacement is the member's
    CHECK(why_key_facts_not_used(index, sha, false) ==
          "the index is another user's (uid " + std::to_string(::geteuid() + 1) + ")");
    index = *parse_model_index("npucc-model-index 1\nkey-facts {}\n");
    index.owner_uid = ::geteuid();
    CHECK(why_key_facts_not_used(index, sha, false) ==
          "its facts name no model (an older npucc's index)");
    index.key_facts.clear();
    CHECK(why_key_facts_not_used(index, sha, false) ==
          "the index records no key facts (an older npucc's)");
  }
}

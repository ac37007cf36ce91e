#include "output/manifest.h"
#include "pipeline/cache_explain.h"
#include "util/sha256.h"

#include <doctest/doctest.h>

using namespace npucc::pipeline;
using nlohmann::json;

namespace {

npucc::KeyComponent component(const std::string& name, const std::string& value) {
  return {name, npucc::util::sha256_hex(value), value};
}

// A key of six components with the given options and model digest.
npucc::CacheKey key_with(const std::string& options, const std::string& model_sha256) {
  npucc::CacheKey key;
  key.components = {component("format", "npucc-cache-key/1"),
                    component("compiler", "0.1.0"),
                    component("build", "npucc=aa"),
                    {"model", model_sha256, "m.onnx, 10 bytes"},
                    component("external", "0 file(s), 0 bytes"),
                    component("options", options)};
  key.key = std::string(64, 'a');
  return key;
}

// The entry a compile with `key` would have stored: header and manifest.
npucc::cache::EntryInfo entry_of(const npucc::CacheKey& key, const std::string& options) {
  npucc::cache::EntryInfo info;
  info.key = std::string(64, 'b');
  info.header.key = info.key;
  info.header.compiler_version = key.components[1].value;
  info.header.model = "m";
  info.header.options = options;
  return info;
}

json manifest_of(const npucc::CacheKey& key) {
  return {{"model", {{"file", "m.onnx"}, {"sha256", key.components[3].digest}, {"bytes", 10}}},
          {"cache_key", key.key},
          {"cache_key_components", npucc::output::key_components_json(key)}};
}

} // namespace

TEST_SUITE("npucc::pipeline::CacheExplain") {
  const std::string old_options = R"({"passes":["a"],"precision":{"mode":""}})";
  const std::string new_options = R"({"passes":["a"],"precision":{"mode":"fast"},"x":1})";
  const std::string model = std::string(64, '1');

  TEST_CASE("the same components: nothing differs") {
    npucc::CacheKey key = key_with(old_options, model);
    NearbyEntry near = compare_with_entry(key, entry_of(key, old_options), manifest_of(key));
    CHECK(near.differing.empty());
    CHECK(near.not_recorded.empty());
  }

  TEST_CASE("an option change names each option by its path, old and new") {
    npucc::CacheKey before = key_with(old_options, model);
    npucc::CacheKey now = key_with(new_options, model);
    NearbyEntry near = compare_with_entry(now, entry_of(before, old_options), manifest_of(before));
    REQUIRE(near.differing.size() == 1);
    CHECK(near.differing[0].name == "options");
    CHECK(near.differing[0].current_value.is_object());
    REQUIRE(near.options.size() == 2);
    CHECK(near.options[0].name == "precision.mode");
    CHECK(near.options[0].recorded == "");
    CHECK(near.options[0].current == "fast");
    CHECK(near.options[1].name == "x");
    CHECK(near.options[1].recorded.is_null()); // not set in the entry
    CHECK(near.options[1].current == 1);
  }

  TEST_CASE("model bytes and build differ; the options do not") {
    npucc::CacheKey before = key_with(old_options, model);
    npucc::CacheKey now = key_with(old_options, std::string(64, '2'));
    now.components[2] = component("build", "npucc=bb");
    NearbyEntry near = compare_with_entry(now, entry_of(before, old_options), manifest_of(before));
    REQUIRE(near.differing.size() == 2);
    CHECK(near.differing[0].name == "build");
    CHECK(near.differing[0].recorded_value == "npucc=aa");
    CHECK(near.differing[1].name == "model");
    CHECK(near.options.empty());
  }

  TEST_CASE("an entry from before manifests held the components: what it has is compared") {
    npucc::CacheKey before = key_with(old_options, model);
    npucc::CacheKey now = key_with(new_options, model);
    json manifest = manifest_of(before);
    manifest.erase("cache_key_components");
    NearbyEntry near = compare_with_entry(now, entry_of(before, old_options), manifest);
    REQUIRE(near.differing.size() == 1);
    CHECK(near.differing[0].name == "options");
    CHECK(near.not_recorded == std::vector<std::string>{"format", "build", "external"});

    SUBCASE("without a readable manifest, the header's version and options still count") {
      NearbyEntry bare = compare_with_entry(now, entry_of(before, old_options), json());
      CHECK(bare.differing.size() == 1);
      CHECK(bare.not_recorded == std::vector<std::string>{"format", "build", "model", "external"});
    }
  }
}

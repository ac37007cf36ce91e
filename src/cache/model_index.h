#pragma once

#include <optional>
#include <string>
#include <vector>

// What a store records about a model's bytes (CACHE_DIR/models/<kk>/<model sha256>,
// local_storage.h), so that a hit can skip parsing the model: hashing it is enough. Both
// are functions of the model's bytes:
//   - the external data locations it refers to, which a hit resolves inside the model's
//     folder with the same checks as read_model;
//   - the facts the key's options need of the model (compiler::KeyFacts, one line of text
//     the cache does not interpret): without them, a request with --input-shape or
//     --target-opset parses the model to be keyed.
//
//   index = "npucc-model-index 1" LF *("external" SP location LF) ["key-facts" SP text LF]
namespace npucc::cache {

struct ModelIndex {
  std::vector<std::string> external_locations; // as the model writes them, sorted
  std::string key_facts;                       // empty: not recorded (an older npucc's index)
};

// `external_locations` in any order; `key_facts` without a line feed.
std::string serialize_model_index(const std::vector<std::string>& external_locations,
                                  const std::string& key_facts);
// nullopt when the text is not an index.
std::optional<ModelIndex> parse_model_index(const std::string& text);

} // namespace npucc::cache

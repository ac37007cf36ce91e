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
//     the cache does not interpret), after the SHA-256 of the model they were taken from:
//     without them, a request with --input-shape or --target-opset parses the model to be
//     keyed.
//
//   index = "npucc-model-index 1" LF *("external" SP location LF)
//           ["key-facts" SP [model-sha256 SP] text LF]   ; older npuccs wrote no SHA-256
//
// The locations can only make a hit miss: they choose which files are hashed, and a key over
// other files than the model's is no honest compile's key. The facts choose which options
// the key leaves out (an --input-shape the model already declares), so they could move a
// request onto another user's, or the reader's own, entry for another request: they are used
// only when no one but the reader could have written them (why_key_facts_not_used).
namespace npucc::cache {

struct ModelIndex {
  std::vector<std::string> external_locations; // as the model writes them, sorted
  std::string key_facts;                       // empty: not recorded (an older npucc's index)
  std::string key_facts_model; // the model's SHA-256 the facts name; empty: an older index's
  // The index file as it was read (fstat of the descriptor read): who may have written it.
  uint32_t owner_uid = 0;
  uint32_t mode = 0; // permission bits
};

// `external_locations` in any order; `key_facts` without a line feed, of the model whose
// bytes hash to `model_sha256`.
std::string serialize_model_index(const std::vector<std::string>& external_locations,
                                  const std::string& model_sha256, const std::string& key_facts);
// nullopt when the text is not an index.
std::optional<ModelIndex> parse_model_index(const std::string& text);

// Why `index`'s key facts may not decide which entry a request for the model whose bytes hash
// to `model_sha256` gets; empty when they may. With a signing key never (the index is not
// signed). Without one, only facts this user wrote and no one else can rewrite: the index
// file is owned by this user (a member's replacement is theirs) and writable by no one else
// (group or other: in place), and its facts name this model's SHA-256 (so a member cannot
// move this user's own index of another model into its place).
std::string why_key_facts_not_used(const ModelIndex& index, const std::string& model_sha256,
                                   bool signing_key);
// The same in a few words, for when they are used.
inline constexpr const char* k_key_facts_used_because =
    "this user's own index, which no one else can write, of these bytes";

} // namespace npucc::cache

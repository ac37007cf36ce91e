#pragma once

#include "cache/local_storage.h"
#include "npucc/cache.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

// `npucc cache explain`: the key a compile would compute, whether the local cache holds
// it, and for a miss the entries of the same model nearest to it with what differs (as
// ccache's debug mode, JAX's explain-cache-misses and torch's FX cache logs do). It
// reads the model and the cache and writes nothing: no entry, no statistics, no output.
namespace npucc::pipeline {

// A component whose digest differs from the entry's.
struct ComponentDifference {
  std::string name; // format, compiler, build, model, external, options
  std::string recorded_digest;
  std::string current_digest;
  nlohmann::json recorded_value; // as key_components_json gives values
  nlohmann::json current_value;
};

// One option of the canonical options whose value differs; the name is its path in
// them ("precision.accelerate_train_mode"), a missing side is null.
struct OptionDifference {
  std::string name;
  nlohmann::json recorded;
  nlohmann::json current;
};

struct NearbyEntry {
  cache::EntryInfo info;
  std::vector<ComponentDifference> differing;
  // Components the entry did not record (written by an npucc before manifests held them):
  // they may differ too.
  std::vector<std::string> not_recorded;
  std::vector<OptionDifference> options; // when "options" differs
};

// How a compile would know one input file's digest (cache/input_digests.h).
struct InputFileDigest {
  std::filesystem::path path;
  bool from_stamp = false;
  std::string why_hashed; // when not from_stamp
  // from_stamp: whether the recorded digest is the file's (explain hashes it to see); a
  // false here means the stamp missed a change, and cache.digest_cache = off is the cure.
  bool matches_bytes = true;
};

// The model index of the model's bytes (cache/model_index.h) as a compile would take it: its
// key facts decide which options the key leaves out (--input-shape, --target-opset).
struct IndexFacts {
  bool found = false;  // the cache holds an index of these bytes
  bool needed = false; // the request's options need the model's facts to be keyed
  bool used = false;   // a compile would take the index's facts (else it reads the model)
  std::string why;     // why they are, or are not, used
};

// bypass: the model holds an op that keeps it out of the cache (resource_ops.h): a compile
// neither looks it up nor stores it.
enum class KeyLookup { hit, damaged, miss, bypass, not_checked };
// "hit", "damaged", "miss", "bypass", "not_checked".
const char* key_lookup_name(KeyLookup lookup);

struct CacheExplanation {
  CacheKey key;
  std::string model; // the model name entries record: the file's stem
  KeyLookup lookup = KeyLookup::not_checked;
  // damaged: the entry's problem; bypass: the op; not_checked: why the cache was not read.
  std::string detail;
  std::filesystem::path cache_dir; // empty when not checked
  size_t entries = 0;              // in the local cache
  size_t model_entries = 0;        // of this model under other keys
  std::vector<NearbyEntry> nearest;
  std::vector<InputFileDigest> inputs; // the model, then its external data; empty unchecked
  IndexFacts index;                     // unchecked: not found
};

inline constexpr size_t k_nearest_entries = 3;

// `use` disabled (--no-cache, cache.disable): the cache is not read, as a compile would
// not read it. A configured remote tier is not asked: asking would import its entry.
CacheExplanation explain_cache(const CompileOptions& options, const CacheConfig& config,
                               CacheUse use);

// How `entry` (its header, and its manifest.json: null when unreadable) differs from
// `current`. Exposed for the unit tests.
NearbyEntry compare_with_entry(const CacheKey& current, const cache::EntryInfo& entry,
                               const nlohmann::json& manifest);

} // namespace npucc::pipeline

#pragma once

// What a cache key is made of, as `npucc cache explain` and a manifest's
// cache_key_components show it. Plain types of their own, below both the compiler (which
// writes them into the manifest) and the cached compile (npucc/cache.h, which computes
// them), so neither has to include the other.

#include <string>
#include <vector>

namespace npucc {

// One input of the key, hashed on its own, so `npucc cache explain` can show which
// one differs between two runs that miss each other.
struct KeyComponent {
  std::string name;   // format, compiler, model, external, options
  std::string digest; // SHA-256 of the component's canonical bytes
  std::string value;  // readable form (the version, the options JSON, sizes)
};

// Something the request gave that the key leaves out, and why: the schedule (its trigger
// and ratio change no byte of a graph, so the manifest states them when an entry is
// materialised) and options that are no-ops on this model (key/key_options.h).
struct KeyOmission {
  std::string name;  // "schedule", "input_shapes", "target_opset", "passes"
  std::string value; // as the request gave it
  std::string why;   // e.g. "equal to the model's declared shape: not part of the key"
};

struct CacheKey {
  std::string key; // 64 lower-case hex digits
  std::vector<KeyComponent> components;
  std::vector<KeyOmission> not_in_key;
};

} // namespace npucc

#pragma once

#include "npucc/cache_key.h"
#include "npucc/compile.h"

#include <nlohmann/json.hpp>

namespace npucc::output {

// manifest.json, format version 1 (documented in npucc-compile(1)):
// {
//   "format": "npucc-manifest", "format_version": 1,
//   "compiler": {"name": "npucc", "version": "0.1.0"},
//   "model": {"file", "name", "sha256", "bytes", "ir_version", "opsets": {domain: version}}
//            (as read, before --target-opset),
//   "options": {effective options that shape the output; through the cache, as the key
//              holds them: without the schedule and no-op options (key_options.h)},
//   "graphs": [{"role": "high"|"low"|"emulation", "precision", "emulates"?, "file",
//               "sha256", "bytes", "ir_version", "opsets": {domain: version},
//               "external_data": [{"file", "sha256", "bytes"}]}],
//   "schedule"?: {"mode", "type", "trigger", "ratio", "first", "then", "rule"}
//                (with accelerate_train_mode),
//   "precision_report"?: precision/report.h (when a graph was lowered),
//   "high_precision_report"?: the same for high when its precision mode lowered it,
//   "passes": [{"name", "changed", "unit"}],
//   "memory_plan": {"available", "reason"?, "arena_bytes", "lower_bound_bytes",
//                   "unshared_bytes", "alignment", "tensors"},
//   "cache_key"?: the compile cache key (when compiled through the cache),
//   "cache_key_components"?: key_components_json below (with cache_key), so that
//                            `npucc cache explain` can say which component another key
//                            differs in, and what the request gave that the key left out
// }
// An entry stores the manifest of the compile that made it; a hit restates what is the
// request's own (restate_request below), since requests that share a key may differ there.
constexpr int k_manifest_format_version = 1;
// --accuracy-report nodes: the drift report's file beside the manifest, which names it.
constexpr const char* k_drift_report_file = "drift.json";

nlohmann::json memory_plan_json(const MemoryPlan& plan, bool with_tensors);

// The key's components: [{"name", "in_key": true, "digest", "value"}] in the key's order
// (the options' value is their canonical JSON as an object, every other value its text),
// then what the key leaves out: [{"name", "in_key": false, "value", "why"}].
nlohmann::json key_components_json(const CacheKey& key);

// The value of a key's "options" component (its canonical JSON): what an entry's header
// and manifest record as its options. Throws npucc::Error when the key has none.
const std::string& options_component(const CacheKey& key);

// The accelerate_train_mode schedule: which graph runs when (SPEC §1).
nlohmann::json schedule_json(const AccelerateTrainMode& mode);

// Restates in a stored manifest what is the request's, not the entry's: the model file's
// name, the schedule (from the request's accelerate_train_mode), the key and its
// components (the request's omissions). Everything else the entry's compile wrote stays.
// Returns whether anything changed (a hit then writes the manifest anew).
bool restate_request(nlohmann::json& manifest, const CompileOptions& options, const CacheKey& key);

// `cache_key`: an empty key when not compiled through the cache.
nlohmann::json build_manifest(const CompileOptions& options, const Model& model,
                              const CompileResult& result, const CacheKey& cache_key);

} // namespace npucc::output

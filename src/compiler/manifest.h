#pragma once

#include "npucc/cache.h"
#include "npucc/compile.h"

#include <nlohmann/json.hpp>

namespace npucc::compiler {

// manifest.json, format version 1 (documented in npucc-compile(1)):
// {
//   "format": "npucc-manifest", "format_version": 1,
//   "compiler": {"name": "npucc", "version": "0.1.0"},
//   "model": {"file", "name", "sha256", "bytes", "ir_version", "opsets": {domain: version}}
//            (as read, before --target-opset),
//   "options": {effective options that shape the output},
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
//                            differs in
// }
constexpr int k_manifest_format_version = 1;

nlohmann::json memory_plan_json(const MemoryPlan& plan, bool with_tensors);

// The key's components: [{"name", "digest", "value"}] in the key's order; the options'
// value is their canonical JSON as an object, every other value its text.
nlohmann::json key_components_json(const CacheKey& key);

// `cache_key`: an empty key when not compiled through the cache.
nlohmann::json build_manifest(const CompileOptions& options, const Model& model,
                              const CompileResult& result, const CacheKey& cache_key);

} // namespace npucc::compiler

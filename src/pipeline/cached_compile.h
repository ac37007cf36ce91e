#pragma once

#include "cache/local_storage.h"
#include "npucc/cache.h"

// The one path every cached compile takes (npucc compile, cache populate).
namespace npucc::pipeline {

// Where a cached compile's files go: into options.output_dir (compile), or only into
// the cache (populate: compiled in a scratch folder under tmp/ and moved into the entry).
enum class Deliver { output_folder, cache_only };

CachedCompile run_cached(cache::LocalStorage& storage, const CacheConfig& config,
                         const CompileOptions& options, Deliver deliver, const LogSink& log);

} // namespace npucc::pipeline

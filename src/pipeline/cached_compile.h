#pragma once

#include "cache/local_storage.h"
#include "npucc/cache.h"

#include <filesystem>
#include <string>

// The one path every cached compile takes (npucc compile, cache populate).
namespace npucc::pipeline {

// Where a cached compile's files go: into options.output_dir (compile), or only into
// the cache (populate: compiled in a scratch folder under tmp/ and moved into the entry).
enum class Deliver { output_folder, cache_only };

// What a cache folder is before a compile or populate makes it a cache: "did not exist",
// "was empty", or "" (a cache already, or a folder that will be refused).
std::string unmade_cache_folder(const std::filesystem::path& dir);

CachedCompile run_cached(cache::LocalStorage& storage, const CacheConfig& config,
                         const CompileOptions& options, Deliver deliver, const LogSink& log,
                         const WriteProgress& write_progress = {});

} // namespace npucc::pipeline

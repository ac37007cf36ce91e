#pragma once

#include "cache/input_digests.h"
#include "cache/local_storage.h"
#include "npucc/cache.h"
#include "pipeline/cached_compile.h"
#include "util/input_file.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

// The lookup phases of a cached compile (compile_cached.cpp runs them).
namespace npucc::pipeline {

// A model whose bytes were seen before: its model index gives the external locations,
// so the key needs only hashes and a hit never parses the model. nullopt: not found this
// way (the full path reads the model, and says why when it cannot). The files are opened
// through `inputs`, where the model's reader finds them open, the model file's digest
// known if it was computed. The digests come through `digests` (cache/input_digests.h).
// `known_key`: the key, when the index gave it and the local store missed it (a remote tier can be
// asked at once). Options whose no-op the model decides (an --input-shape, --target-opset) are not
// looked up this way: the full path reads the model (key::key_options_need_model).
// `unknown_digest`: what to do when no digest of the model file is known (none recorded for
// its stamp): hash it now, or leave it to be hashed beside the compile (the cold path of a
// compile that does not need the key first: key::KeyHashing), and not look it up this way.
enum class UnknownDigest { hash_now, hash_beside_compile };
std::optional<CachedCompile> lookup_by_model_index(cache::LocalStorage& storage,
                                                   cache::InputDigests& digests,
                                                   const CompileOptions& options, Deliver deliver,
                                                   const LogSink& log, util::InputFiles& inputs,
                                                   std::optional<CacheKey>& known_key,
                                                   UnknownDigest unknown_digest);

// Once the model's entry is stored or hit: its file's sampled bytes recorded as a hint of
// its digest `sha256` (cache::InputDigests::likely_digest), so that a touched copy of the
// same bytes is looked up before any compile work (a hit, most likely).
void note_likely_digest(const cache::InputDigests& digests, util::InputFiles& inputs,
                        const std::filesystem::path& model_path, const std::string& sha256);

// Looks the key up in `tier` and, on a hit, delivers the files: into the output folder
// (through a staging folder, so a failed fetch leaves nothing; the manifest restating the
// request's schedule and file name, output::restate_request), or for populate only checks
// them: a local entry as a fetch does (its stamp, else every checksum) without copying a
// file, a remote one by importing it into the local store.
struct Delivered : cache::FetchResult {
  // A hit into an output folder: its manifest.json as delivered, parsed once (a model's
  // precision report makes it 100 KB and more; a hit's other work takes milliseconds).
  nlohmann::json manifest;
};
Delivered fetch_and_deliver(cache::LocalStorage& storage, cache::Storage& tier, const CacheKey& key,
                            const CompileOptions& options, Deliver deliver);

// The outcome of a hit `fetch_and_deliver` delivered: with an output folder, the
// compile's result as its manifest records it.
CachedCompile hit_result(const Delivered& fetched, const CompileOptions& options,
                         const std::string& key, const std::string& model_sha256, Deliver deliver);

} // namespace npucc::pipeline

#include "pipeline/cache_lookup.h"

#include "cache/file_ops.h"
#include "output/manifest.h"
#include "output/output_folder.h"
#include "key/cache_key.h"
#include "key/input_digest.h"
#include "key/key_options.h"
#include "model/external_data.h"
#include "npucc/error.h"
#include "pipeline/resource_ops.h"
#include "pipeline/manifest_reader.h"
#include "util/file_io.h"
#include "util/test_point.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace npucc::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An entry's manifest is the one its first compile wrote; requests that share its key
// may differ in what the key leaves out (the model file's name, the schedule, no-op
// options): the user's manifest states their own (output::restate_request). The entry's
// signature covers the stored bytes; what is restated comes from the request alone.
// Written as a new file (the delivered one may be a hard link to the cache's, which stays
// as it was). Returns the manifest as delivered; not JSON: null (parse_cached_manifest says
// what is wrong).
json restate_request(const fs::path& manifest_path, const CompileOptions& options,
                     const CacheKey& key) {
  json manifest = json::parse(util::read_file(manifest_path), nullptr, false);
  if (!manifest.is_object()) {
    return nullptr;
  }
  if (output::restate_request(manifest, options, key)) {
    util::write_file_atomic(manifest_path,
                            manifest.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  }
  return manifest;
}

// `identity` (its name and size known) completed from the model index of the bytes whose
// digest is `sha256`: nullopt when there is none here, or an external data file it names is
// missing (read_model says which).
std::optional<key::ModelIdentity> completed_by_index(const cache::LocalStorage& storage,
                                                     const CompileOptions& options,
                                                     key::ModelIdentity identity,
                                                     const std::string& sha256) {
  identity.sha256 = sha256;
  std::optional<cache::ModelIndex> index = storage.model_index(identity.sha256);
  if (!index) {
    return std::nullopt;
  }
  // Read only for the options that need them, and only when no one else could have written
  // them: they decide which options the key drops, so forged ones would move the request
  // onto another request's entry (why_key_facts_not_used; without them the model is read).
  if (key::key_options_need_model(options) &&
      cache::why_key_facts_not_used(*index, identity.sha256, storage.signing()).empty()) {
    identity.facts = key::parse_key_facts(index->key_facts);
  }
  for (const auto& location : index->external_locations) {
    auto path = model::try_resolve_external_location(location, options.model_path.parent_path(),
                                                     options.model_path.string(), "(external)");
    if (!path) {
      return std::nullopt;
    }
    identity.external.emplace_back(location, std::move(*path));
  }
  return identity;
}

// Whether the request most likely hits, for a model file no digest is known for (touched
// since, a fresh checkout with a restored cache): its sampled bytes are those of a model
// seen before (InputDigests::likely_digest), and the entry that model's key names for this
// request is here. Then the lookup hashes the model first and a hit compiles nothing;
// otherwise the model is hashed beside the compile. A guess only: the key is the hashed
// digest's. False too when an external data file's digest is not known by its stamp (its
// key cannot be told without reading it).
bool likely_hit(const cache::LocalStorage& storage, cache::InputDigests& digests,
                const CompileOptions& options, util::InputFiles& inputs,
                const util::InputFile& file, const key::ModelIdentity& identity) {
  std::optional<std::string> likely = digests.likely_digest(file.fd());
  std::optional<key::ModelIdentity> guess =
      likely ? completed_by_index(storage, options, identity, *likely) : std::nullopt;
  if (!guess || (key::key_options_need_model(options) && !guess->facts)) {
    return false;
  }
  std::optional<CacheKey> key = key::key_without_reading(*guess, options, digests, inputs);
  return key && cache::path_kind(storage.entry_dir(key->key)) == cache::PathKind::directory;
}

// What the key needs of the model at options.model_path without parsing it, when its
// bytes have a model index here; nullopt otherwise. The model file stays open in `inputs`
// with its digest, for the reader to take over on a miss.
std::optional<key::ModelIdentity> identity_from_index(const cache::LocalStorage& storage,
                                                      cache::InputDigests& digests,
                                                      const CompileOptions& options,
                                                      util::InputFiles& inputs,
                                                      UnknownDigest unknown_digest,
                                                      const LogSink& log) {
  // Absent, not a regular file, or changed while it was hashed: read_model says what is
  // wrong, or hashes it.
  auto file = inputs.try_open(options.model_path, util::InputFile::Links::follow);
  if (!file) {
    return std::nullopt;
  }
  key::ModelIdentity identity;
  identity.file_name = options.model_path.filename().string();
  identity.bytes = (*file)->stamp().size;
  if (identity.bytes > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      identity.bytes > options.limits.max_memory_bytes) {
    return std::nullopt; // read_model refuses it without reading it
  }
  if (unknown_digest == UnknownDigest::hash_beside_compile && !(*file)->sha256() &&
      !digests.look_up((*file)->fd()).from_stamp) {
    if (!likely_hit(storage, digests, options, inputs, **file, identity)) {
      return std::nullopt; // a model not seen as it is now: hashed beside its compile
    }
    if (log) {
      log("cache: the model's sampled bytes are a cached model's, whose entry for this request "
          "is here: hashed before any compile work (likely a hit)");
    }
  }
  util::Expected<std::string> sha256 = key::digest_of_input(*file, &digests);
  if (!sha256) {
    return std::nullopt;
  }
  return completed_by_index(storage, options, std::move(identity), *sha256);
}

} // namespace

void note_likely_digest(const cache::InputDigests& digests, util::InputFiles& inputs,
                        const fs::path& model_path, const std::string& sha256) {
  std::shared_ptr<util::InputFile> file = inputs.find(model_path);
  if (file && !sha256.empty()) {
    digests.record_likely_digest(file->fd(), sha256);
  }
}

Delivered fetch_and_deliver(cache::LocalStorage& storage, cache::Storage& tier,
                            const CacheKey& cache_key, const CompileOptions& options,
                            Deliver deliver) {
  const std::string& key = cache_key.key;
  if (deliver == Deliver::output_folder) {
    output::OutputFolder output(options);
    Delivered out{tier.fetch(key, output.staging()), {}};
    if (out.status == cache::FetchStatus::hit) {
      // Read and restated while the weights are still being copied.
      out.manifest = restate_request(output.staging() / "manifest.json", options, cache_key);
      out.wait_for_files();
      util::test_point("cache:hit-staged");
      output.publish();
    }
    return out;
  }
  cache::FetchResult local = storage.fetch(key, {}); // checked, nothing copied
  if (local.status == cache::FetchStatus::hit || &tier == &storage) {
    return {std::move(local), {}};
  }
  // The remote tier imports a hit into the local store, which checks every checksum.
  cache::TempPath scratch = storage.temp_folder("check"); // a group member may purge it
  Delivered imported{tier.fetch(key, scratch.path()), {}};
  imported.wait_for_files();
  return imported;
}

CachedCompile hit_result(const Delivered& fetched, const CompileOptions& options,
                         const std::string& key, const std::string& model_sha256, Deliver deliver) {
  CachedCompile out;
  out.outcome = CacheOutcome::hit;
  out.key = key;
  if (deliver == Deliver::output_folder) {
    out.reason = "materialised by " + cache::describe_transfers(fetched.transfers) +
                 (fetched.note.empty() ? "" : "; " + fetched.note);
    // A hit does no compile work, so the result comes from the stored manifest.
    fs::path manifest_path = options.output_dir / "manifest.json";
    out.result = parse_cached_manifest(fetched.manifest, manifest_path, model_sha256);
  } else {
    out.reason = "already cached";
  }
  return out;
}

std::optional<CachedCompile> lookup_by_model_index(cache::LocalStorage& storage,
                                                   cache::InputDigests& digests,
                                                   const CompileOptions& options, Deliver deliver,
                                                   const LogSink& log, util::InputFiles& inputs,
                                                   std::optional<CacheKey>& known_key,
                                                   UnknownDigest unknown_digest) {
  util::test_point("cache:model-index");
  if (find_unkeyed_function(options)) {
    return std::nullopt; // never cached: nothing to find
  }
  std::optional<key::ModelIdentity> identity =
      identity_from_index(storage, digests, options, inputs, unknown_digest, log);
  if (!identity || (key::key_options_need_model(options) && !identity->facts)) {
    return std::nullopt; // whether an option is a no-op is the model's to say
  }
  CacheKey key = key::compute_key(*identity, options, &digests, inputs);
  Delivered fetched = fetch_and_deliver(storage, storage, key, options, deliver);
  if (fetched.status != cache::FetchStatus::hit) {
    known_key = std::move(key);
    return std::nullopt;
  }
  if (log) {
    log("cache: hit " + key.key + " (model index: no parse needed)");
  }
  // Statistics are advisory: a lock held past its deadline skips them, said in the reason.
  // populate's "already cached" counts too: a CI re-run hits.
  bool counted = storage.stats().update({{"hits", 1}});
  note_likely_digest(digests, inputs, options.model_path, identity->sha256);
  CachedCompile out = hit_result(fetched, options, key.key, identity->sha256, deliver);
  if (!counted) {
    out.reason += "; statistics not updated: lock/stats is held by another process";
  }
  return out;
}

} // namespace npucc::pipeline

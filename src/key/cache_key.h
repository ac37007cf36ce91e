#pragma once

#include "cache/input_digests.h"
#include "key/key_options.h"
#include "npucc/cache_key.h"
#include "npucc/compile.h"
#include "npucc/model.h"
#include "util/file_observer.h"
#include "util/input_file.h"
#include "util/input_scan.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace npucc::key {

// The key salt: bump it when the meaning of an entry changes incompatibly, so every
// older entry misses (like ccache's HASH_PREFIX).
// /2: the options leave out the schedule and no-op options (key/key_options.h). An
// entry of /1 was keyed with its whole accelerate_train_mode and stores a manifest whose
// options say so; under /2 it is never found (a clean miss), and `cache explain` names
// "format" as what differs.
inline constexpr const char* k_key_salt = "npucc-cache-key/2";

// What the key needs to know about a model: no parse required once the external
// locations are known (they are a function of the model's bytes), unless the options need
// the model to be judged (key_options_need_model): then the key from an identity
// keeps them, and differs from the parsed model's.
struct ModelIdentity {
  std::string file_name;
  uint64_t bytes = 0;
  std::string sha256;
  std::vector<std::pair<std::string, std::filesystem::path>> external; // location, resolved path
  // What the options need of the model, when its index recorded it: then the key is the
  // parsed model's whatever the options.
  std::optional<KeyFacts> facts;
};
// What the key reads besides the model file and the options: each external data file's
// digest, sorted by location (a location once), their bytes in all, and the identity of
// the runtime an accuracy check runs in (runtime_identity: "" without the check).
struct KeyDigests {
  std::vector<std::pair<std::string, std::string>> external; // location, sha256
  uint64_t external_bytes = 0;
  std::string runtime;
};

// The one entry that decides a key: compile, explain, populate and the Python package
// all reach it (through compute_key and KeyHashing below, which find the digests).
CacheKey key_of(const CompileOptions& request, const ModelIdentity& model,
                const KeyDigests& digests);

// The key of compiling `model` (already read by read_model, --input-shape not yet
// applied) with `options`.
//
// Canonical encoding: each component is hashed on its own (SHA-256, OpenSSL) and the
// key is the SHA-256 of the text
//     "npucc-cache-key" LF *(component-name ":" component-digest LF)
// with the components in this fixed order:
//   format   = the salt k_key_salt
//   compiler = the compiler version (npucc/version.h k_version)
//   build    = util::build_identity(): the build IDs of the npucc executable and of the
//              ONNX libraries it loaded (a file hash for one without a build ID)
//   model    = the .onnx file's bytes (Model::sha256: hashed once, while reading)
//   external = for each external data file, sorted by location: location LF sha256 LF
//   options  = key_options(options, model).canonical: canonical_options() of
//              every option that changes the output, file options (the mixlist) by
//              content, without the schedule and the options that are no-ops on this
//              model (listed in CacheKey::not_in_key, with why)
// Paths (model, output) are not part of it: the same model compiled from two places
// hits the same entry.
// `digests`, when given, finds the external files' digests (cache/input_digests.h) and
// records those it hashes; a file that changes while hashed is an npucc::Error. The files
// are the ones the model was read from, open already (model::input_files).
CacheKey compute_key(const Model& model, const CompileOptions& options,
                     cache::InputDigests* digests = nullptr);

// `inputs` opens the external files, once: a miss reads the model from the same ones.
CacheKey compute_key(const ModelIdentity& model, const CompileOptions& options,
                     cache::InputDigests* digests, util::InputFiles& inputs);

// compute_key(model, ...) when every external data file's digest is known without reading
// it (set on the open file, or recorded for its stamp: cache/input_digests.h); nullopt
// otherwise. Counts nothing, records nothing: a guess at a request's entry
// (pipeline/cache_lookup.cpp) must cost no read of the weights.
std::optional<CacheKey> key_without_reading(const ModelIdentity& model,
                                            const CompileOptions& options,
                                            const cache::InputDigests& digests,
                                            util::InputFiles& inputs);

// compute_key(model, options) for a compile that goes on meanwhile: the external data
// is read once (util::InputScan), on a second thread (HashOn::second_thread) or in the
// constructor (HashOn::this_thread, when the process may use one core: `populate -j 1`),
// and `observer`, when given, sees every chunk read (the precision rewrite's overflow
// counts: compiler/overflow_counts.h), so it finds its counts done. Throws (here or from
// get()) what compute_key would. `digests`, when given, records the digests of the
// external files hashed (they are read for the compile anyway, so never looked up).
// A model read without its digest (model::ModelDigest::later: the cached compile of a model
// no digest was recorded for) is hashed in the same read, first, so that a cold compile
// pays for one read of the model beside the compile rather than one before it; a model
// file that changes while it is read is an npucc::Error from get().
enum class HashOn { second_thread, this_thread };
class KeyHashing {
public:
  KeyHashing(const Model& model, const CompileOptions& options, HashOn where,
             cache::InputDigests* digests = nullptr, util::FileObserver* observer = nullptr);
  KeyHashing(const KeyHashing&) = delete;
  KeyHashing& operator=(const KeyHashing&) = delete;
  CacheKey get();
  // The model file's SHA-256: known from the start, or once get() returned.
  const std::string& model_sha256() const;

private:
  // The digests of the files scanned, recorded; the model's kept in m_model.
  KeyDigests take_digests(const std::vector<util::InputScan::Hashed>& hashed);

  ModelIdentity m_model;
  std::shared_ptr<util::InputFile> m_model_file; // when its digest is taken in the scan
  util::FileStamp m_model_stamp;
  std::string m_why_model_hashed;
  CompileOptions m_request;
  std::vector<std::pair<std::string, std::filesystem::path>> m_external; // sorted
  std::vector<std::shared_ptr<const util::InputFile>> m_files;           // in m_external's order
  cache::InputDigests* m_digests;
  std::unique_ptr<util::InputScan> m_scan;
};

} // namespace npucc::key

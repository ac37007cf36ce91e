#include "accuracy/checked.h"
#include "cache/model_index.h"
#include "cache/remote/tiered_storage.h"
#include "check/isolated_worker.h"
#include "accuracy/target_functions.h"
#include "output/manifest.h"
#include "output/output_folder.h"
#include "compiler/overflow_counts.h"
#include "compiler/prepared_compile.h"
#include "key/cache_key.h"
#include "key/input_digest.h"
#include "key/key_options.h"
#include "model/model_reader.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "pipeline/cache_lookup.h"
#include "pipeline/cached_compile.h"
#include "pipeline/resource_ops.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/strings.h"
#include "util/test_point.h"

#include <algorithm>
#include <ctime>
#include <memory>

// A cached compile in phases: the lookup by model index (cache_lookup.cpp), the read of
// the model with its key (and the compile's first stages beside it: the speculative
// write), the lookup by key in the local and remote tiers, then on a miss the compile and
// the store. Each phase takes and leaves its state in one CachedRun.
namespace npucc {

namespace fs = std::filesystem;

namespace pipeline {

namespace {

struct CachedRun {
  CachedRun(cache::LocalStorage& storage_, cache::InputDigests& digests_,
            const CacheConfig& config_, const CompileOptions& given_, Deliver deliver_,
            const LogSink& log_)
      : storage(storage_), digests(digests_), config(config_), given(given_), deliver(deliver_),
        log(log_), options(given_) {}

  void say(const std::string& line) const {
    if (log) {
      log(line);
    }
  }
  // The local cache, or the local one in front of the remote one when there is one.
  cache::Storage& tier() {
    return tiered ? static_cast<cache::Storage&>(*tiered) : static_cast<cache::Storage&>(storage);
  }
  std::string remote_warning() const { return tiered ? tiered->warning() : std::string(); }

  cache::LocalStorage& storage;
  cache::InputDigests& digests;
  const CacheConfig& config;
  const CompileOptions& given;
  const Deliver deliver;
  const LogSink& log;
  WriteProgress write_progress; // of the graphs' write, on a miss
  CompileOptions options;       // given, and for populate with its scratch output folder

  // The input files, each opened once: the lookup opens the model file (and hashes it),
  // the reader maps the same (util/input_file.h).
  std::shared_ptr<util::InputFiles> inputs = std::make_shared<util::InputFiles>();
  Model model;
  std::string model_sha256;
  std::string model_index;
  std::vector<std::string> index_locations; // the model index's, taken as the model is read
  std::string index_facts;
  std::optional<Uncacheable> uncacheable;
  CacheKey key;
  // The compile's stages done so far (none, the first, or the first with its graphs
  // being written).
  std::optional<PreparedCompile> prepared;
  std::unique_ptr<GraphWriting> writing;
  // The weights' overflow counts, fed by the key's read: they outlive it and the stages.
  std::unique_ptr<compiler::OverflowCounts> overflow;
  std::unique_ptr<cache::remote::TieredStorage> tiered;
  CachedCompile out;
  // The compiled files as their writer left them (compiler/prepared_compile.h).
  std::map<std::string, FileIdentity> written_as;
  std::string remote_asked; // the key the remote tier was asked for, if it was
};

// The stages of the compile not yet done; the manifest records the key.
void finish_compile(CachedRun& run) {
  WrittenCompile written;
  if (run.writing) {
    written = run.writing->finish(run.options, run.key, run.write_progress, run.model_sha256);
    run.writing.reset();
  } else {
    if (!run.prepared) {
      output::check_output_folder(run.options); // as compile() does, before any work
      run.prepared = prepare_compile(std::move(run.model), run.options, run.log);
    }
    written = write_compile(std::move(*run.prepared), run.options, run.key, run.write_progress,
                            run.model_sha256);
  }
  run.out.result = std::move(written.result);
  run.written_as = std::move(written.written_as);
}

// The second stage (writing the graphs, most of a compile's time) starts before the key is
// known: the rewrite assumes that the weights the key's reading has yet to reach do not
// overflow the low type (compiler::OverflowCounts::speculate), and is built again, its graphs
// rewritten, on the rare model where one does. A hit stops the writers.
void speculative_write(CachedRun& run, key::KeyHashing& hashing) {
  run.overflow->speculate();
  PreparedCompile early =
      prepare_compile(std::move(run.model), run.options, run.log, run.overflow.get());
  run.writing = std::make_unique<GraphWriting>(std::move(early), run.options);
  run.key = hashing.get();
  if (!run.overflow->speculation_held()) {
    run.prepared = run.writing->abandon();
    run.writing.reset();
    run.say("precision: a weight overflows the low type: rewriting the low graph");
    rebuild_variants(*run.prepared, run.options, run.overflow.get());
  }
}

// A model whose bytes have no index here (lookup_by_model_index) is nearly always a miss:
// the compile's first stage runs while a second core hashes the external data for the key,
// and the model file itself when no digest of it was known (with one core, the key is
// hashed first, in line), and is thrown away on the rare hit: nothing is stored or
// published before the key is known. With a second core and an output folder, the second
// stage runs early too.
void key_beside_compile(CachedRun& run) {
  bool second_core = util::thread_budget() > 1;
  const bool hashed_beside = run.model.sha256.empty();
  run.overflow = std::make_unique<compiler::OverflowCounts>(run.model.proto);
  key::KeyHashing hashing(run.model, run.options,
                          second_core ? key::HashOn::second_thread : key::HashOn::this_thread,
                          &run.digests, &run.overflow->observer());
  if (run.deliver == Deliver::output_folder) {
    output::check_output_folder(run.options);
  }
  if (second_core && run.deliver == Deliver::output_folder) {
    speculative_write(run, hashing);
  } else {
    run.prepared = prepare_compile(std::move(run.model), run.options, run.log, run.overflow.get());
    run.key = hashing.get();
  }
  run.model_sha256 = hashing.model_sha256();
  if (hashed_beside) {
    run.say("cache: the model hashed beside the compile (no digest recorded for it)");
  }
}

// The key's way: beside the compile, or first. An accuracy check runs graphs for seconds or
// minutes, so the key comes first there, and a hit runs none (the speculative first stage
// would run the check); with a remote tier a local miss may well be a remote hit, which
// needs no compile work.
bool key_beside(const CacheConfig& config, const CompileOptions& options) {
  return config.remote.url.empty() && !accuracy::is_checked(options);
}

// The model file's digest for a key computed first, when the read left it to the key
// (model::ModelDigest::later): through the digest cache, or hashed now.
void know_model_digest(CachedRun& run) {
  if (run.model.sha256.empty()) {
    run.model.sha256 =
        key::digest_of_input(run.inputs->find(run.given.model_path), &run.digests).value();
  }
}

// What a later compile of the same bytes needs to key them without a parse, but for the
// model's digest (serialized with it once known): taken before the compile takes the model.
void note_model_index(CachedRun& run) {
  for (const auto& file : run.model.external_files) {
    run.index_locations.push_back(file.location);
  }
  run.index_facts = key::key_facts_text(key::key_facts(run.model.proto));
}

// Reads the model and computes its key: beside the compile (key_beside_compile, which
// hashes the model file in its read when the lookup left it unhashed) or first.
void read_and_key(CachedRun& run) {
  check::start_isolated_worker(); // while this process is small
  std::shared_ptr<util::InputFile> opened = run.inputs->find(run.given.model_path);
  if (!opened) {
    run.digests.count_hashed("hashed as the model was read");
  }
  const model::ModelDigest digest = opened ? model::ModelDigest::later : model::ModelDigest::now;
  run.model = model::read_mapped_model(run.given.model_path, run.given.limits, run.inputs,
                                       model::TableScope::every_tensor, digest);
  run.uncacheable = find_uncacheable_op(run.model.proto);
  if (!run.uncacheable) {
    run.uncacheable = find_unkeyed_function(run.options);
  }
  note_model_index(run);
  if (!run.uncacheable && key_beside(run.config, run.options)) {
    key_beside_compile(run);
  } else {
    know_model_digest(run);
    run.model_sha256 = run.model.sha256;
    run.key = key::compute_key(run.model, run.options, &run.digests);
  }
  run.model_index =
      cache::serialize_model_index(run.index_locations, run.model_sha256, run.index_facts);
  run.out.key = run.key.key;
  run.say("cache: key " + run.key.key + " (" + run.storage.describe() + ")");
}

CachedCompile bypass(CachedRun& run) {
  run.storage.stats().update({{"bypass." + run.uncacheable->reason, 1}});
  run.out.outcome = CacheOutcome::bypass;
  run.out.reason = run.uncacheable->message;
  run.say("cache: bypass: " + run.out.reason);
  if (run.deliver == Deliver::output_folder) {
    finish_compile(run);
  }
  return run.out;
}

// The key's lookup, in the shared remote tier too when one is configured (asked on a
// local miss, fed by compiles), unless it was asked for this key already.
Delivered fetch(CachedRun& run) {
  if (!run.config.remote.url.empty() && !run.tiered) {
    run.tiered = std::make_unique<cache::remote::TieredStorage>(run.storage, run.config.remote);
  }
  bool asked = run.remote_asked == run.key.key;
  run.remote_asked = run.key.key;
  cache::Storage& tier = asked ? static_cast<cache::Storage&>(run.storage) : run.tier();
  return fetch_and_deliver(run.storage, tier, run.key, run.options, run.deliver);
}

constexpr const char* k_stats_skipped = "; statistics not updated: lock/stats is held by "
                                        "another process";

// Statistics are advisory: when another process holds their lock past its deadline the
// compile goes on without them. False then: the caller adds k_stats_skipped to its reason.
bool count_stats(const CachedRun& run, const cache::Counters& deltas) {
  return run.storage.stats().update(deltas);
}

CachedCompile hit(CachedRun& run, const Delivered& fetched) {
  run.writing.reset();
  bool remote_hit = run.tiered && run.tiered->served_remotely();
  // populate's "already cached" counts too: a CI re-run hits.
  bool counted = remote_hit || count_stats(run, {{"hits", 1}});
  if (!run.model_index.empty()) { // empty: the index gave the key, and stays as it is
    run.storage.record_model_index(run.model_sha256, run.model_index);
  }
  note_likely_digest(run.digests, *run.inputs, run.given.model_path, run.model_sha256);
  CachedCompile out = hit_result(fetched, run.options, run.key.key, run.model_sha256, run.deliver);
  if (remote_hit) {
    out.reason = "from the remote cache " + run.config.remote.url + ", " + out.reason;
    run.say("cache: remote hit " + run.key.key + ": " + std::to_string(run.tiered->hit_bytes()) +
            " bytes in " + std::to_string(run.tiered->hit_seconds()) + " s");
  }
  if (!counted) {
    out.reason += k_stats_skipped;
  }
  out.remote_warning = run.remote_warning();
  return out;
}

// The model index gave the key without reading the model (its digests recorded, or hashed)
// and the local store missed it: the remote tier is asked now, before the model is read.
// nullopt on a miss there (the compile goes on; fetch() does not ask again).
std::optional<CachedCompile> remote_by_known_key(CachedRun& run, CacheKey key) {
  run.key = std::move(key);
  run.model_sha256 = *run.inputs->find(run.given.model_path)->sha256();
  Delivered fetched = fetch(run);
  if (fetched.status != cache::FetchStatus::hit) {
    return std::nullopt;
  }
  run.say("cache: the key came from the model index: the remote cache was asked before the "
          "model was read");
  return hit(run, fetched);
}

// Records the miss; Replace::yes when the entry under the key is damaged.
cache::Replace miss(CachedRun& run, const cache::FetchResult& fetched) {
  bool replace = fetched.status == cache::FetchStatus::corrupt ||
                 fetched.status == cache::FetchStatus::incomplete;
  run.out.outcome = CacheOutcome::miss;
  run.out.reason = replace ? std::string(cache::fetch_status_name(fetched.status)) + " entry " +
                                 (run.storage.read_only() ? "not used" : "replaced") + " (" +
                                 fetched.problem + ")"
                           : "new key";
  if (fetched.untrusted) {
    // Someone may be trying to feed us a forged entry: say so even without --verbose.
    run.out.warning = "cache entry " + run.storage.entry_dir(run.key.key).string() +
                      " rejected: " + fetched.problem + "; compiled locally";
  }
  if (!count_stats(run, {{"misses", 1}, {replace ? "misses.corrupt" : "misses.new", 1}})) {
    run.out.reason += k_stats_skipped;
  }
  run.say("cache: miss: " + run.out.reason);
  return replace ? cache::Replace::yes : cache::Replace::no;
}

CachedCompile compile_read_only(CachedRun& run) {
  run.out.reason += " (read-only cache: not stored)";
  if (run.deliver == Deliver::cache_only) {
    throw Error(run.storage.root().string() + ": the cache is used read-only; cannot populate it");
  }
  finish_compile(run);
  run.out.remote_warning = run.remote_warning();
  return run.out;
}

std::string variants_of(const CompileResult& result) {
  std::string out;
  for (const auto& graph : result.graphs) {
    out += (out.empty() ? "" : ",") + graph.role + ":" + graph.precision;
  }
  return out;
}

// The files one compile wrote: manifest.json, each graph and its external data (once,
// though the graphs share it).
std::vector<std::string> written_files(const CompileResult& result) {
  std::vector<std::string> names;
  for (const auto& graph : result.graphs) {
    names.push_back(graph.graph.file);
    for (const auto& data : graph.external_data) {
      if (std::find(names.begin(), names.end(), data.file) == names.end()) {
        names.push_back(data.file);
      }
    }
  }
  if (!result.drift_report.empty()) {
    names.push_back(output::k_drift_report_file);
  }
  names.push_back(result.manifest_path.filename().string());
  return names;
}

// The digests the graph writer computed: the store need not read the graphs again.
cache::KnownDigests written_digests(const CompileResult& result,
                                    const std::map<std::string, FileIdentity>& written_as) {
  cache::KnownDigests known;
  auto add = [&](const WrittenFile& file) {
    auto identity = written_as.find(file.file);
    if (identity != written_as.end()) {
      known[file.file] = {file.sha256, identity->second};
    }
  };
  for (const auto& graph : result.graphs) {
    add(graph.graph);
    for (const auto& data : graph.external_data) {
      add(data);
    }
  }
  return known;
}

// The size limit may evict the entry just stored (it alone is over the limit, or the
// trim to below it reaches it): the next identical compile is a miss again, so say so.
// Every entry the size limit evicted after this store, named: a limit far below the
// cache's size empties it, and that must not pass unseen.
void warn_if_evicted(CachedRun& run, const cache::PurgeReport& trimmed) {
  if (trimmed.removed.empty()) {
    return;
  }
  bool own = false;
  uint64_t bytes = 0;
  std::vector<std::string> others;
  for (const auto& removed : trimmed.removed) {
    bytes += removed.bytes;
    if (removed.key == run.key.key) {
      own = true;
    } else {
      others.push_back(removed.model + " " + removed.key.substr(0, 12));
    }
  }
  std::string what = own ? "the cache entry just stored" : "";
  if (!others.empty()) {
    std::string list = others.size() <= 5 ? ": " + util::join(others, ", ") : "";
    what += std::string(own ? " and " : "") + std::to_string(others.size()) + " other " +
            (others.size() == 1 ? "entry" : "entries") + list;
  }
  run.out.warning += std::string(run.out.warning.empty() ? "" : "; ") + "evicted " + what + " (" +
                     util::format_bytes(bytes) + ") to keep the cache under its max size of " +
                     util::format_bytes(*run.config.max_size) +
                     "; raise --max-size (or NPUCC_CACHE_MAX_SIZE, cache.max_size) to keep more";
}

// Stores the compile's files under the key; a failure to store is a warning, for
// populate an error (storing is its whole point).
void store(CachedRun& run, cache::Replace replace) {
  cache::EntryHeader header;
  header.compiler_version = k_version;
  header.created = static_cast<int64_t>(std::time(nullptr));
  header.key = run.key.key;
  header.model = run.given.model_path.stem().string();
  header.variants = variants_of(run.out.result);
  header.options = output::options_component(run.key); // as the key holds them
  try {
    cache::StoreResult stored = run.tier().store(
        header, run.options.output_dir, written_files(run.out.result),
        run.deliver == Deliver::cache_only ? cache::SourceFiles::move : cache::SourceFiles::link,
        replace, written_digests(run.out.result, run.written_as));
    run.storage.stats().update(
        {{stored.status == cache::StoreStatus::stored ? "stores" : "stores.raced", 1}});
    run.storage.record_model_index(run.model_sha256, run.model_index);
    note_likely_digest(run.digests, *run.inputs, run.given.model_path, run.model_sha256);
    if (run.config.max_size) {
      warn_if_evicted(run, run.storage.enforce_max_size(*run.config.max_size, run.key.key));
    }
  } catch (const Error& e) {
    run.storage.stats().update({{"store_errors", 1}});
    run.out.warning += std::string(run.out.warning.empty() ? "" : "; ") +
                       "not stored in the cache: " + e.what() +
                       (e.hint().empty() ? "" : " (" + e.hint() + ")");
    if (run.deliver == Deliver::cache_only) {
      throw Error(run.out.warning);
    }
  }
}

// Populate compiles into a scratch folder under tmp/, whose files the store moves.
CachedCompile compile_and_store(CachedRun& run, cache::Replace replace) {
  cache::TempPath scratch;
  if (run.deliver == Deliver::cache_only) {
    scratch = run.storage.temp_name("compile");
    run.options.output_dir = scratch.path();
  }
  finish_compile(run);
  util::test_point("cache:storing");
  store(run, replace);
  util::test_point("cache:stored");
  run.out.remote_warning = run.remote_warning();
  return run.out;
}

} // namespace

namespace {

CachedCompile run_phases(cache::LocalStorage& storage, cache::InputDigests& digests,
                         const CacheConfig& config, const CompileOptions& given, Deliver deliver,
                         const LogSink& log, const WriteProgress& write_progress) {
  CachedRun run(storage, digests, config, given, deliver, log);
  std::optional<CacheKey> known_key;
  // A model no digest is known for (new, or changed since) is hashed beside its compile where
  // a second core takes the hash while the compile goes on; populate looks it up first (most
  // of a CI re-run's models are hits, worth no parse).
  const bool beside = deliver == Deliver::output_folder && util::thread_budget() > 1 &&
                      key_beside(config, given);
  const UnknownDigest unknown =
      beside ? UnknownDigest::hash_beside_compile : UnknownDigest::hash_now;
  if (auto found = lookup_by_model_index(storage, digests, given, deliver, log, *run.inputs,
                                         known_key, unknown)) {
    return *found;
  }
  run.write_progress = write_progress;
  // A known key: the lookup hashed the model file.
  if (known_key && !config.remote.url.empty()) {
    if (auto found = remote_by_known_key(run, std::move(*known_key))) {
      return *found;
    }
  }
  util::test_point("cache:reading");
  read_and_key(run);
  util::test_point("cache:keyed");
  if (run.uncacheable) {
    return bypass(run);
  }
  Delivered fetched = fetch(run);
  util::test_point("cache:fetched");
  if (fetched.status == cache::FetchStatus::hit) {
    return hit(run, fetched);
  }
  cache::Replace replace = miss(run, fetched);
  if (storage.read_only()) {
    return compile_read_only(run);
  }
  return compile_and_store(run, replace);
}

} // namespace

std::string unmade_cache_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(dir, ec))) {
    return "did not exist";
  }
  if (std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec) && !ec) {
    return "was empty";
  }
  return {};
}

CachedCompile run_cached(cache::LocalStorage& storage, const CacheConfig& config,
                         const CompileOptions& given, Deliver deliver, const LogSink& log,
                         const WriteProgress& write_progress) {
  cache::InputDigests digests(&storage, config.digest_cache);
  CachedCompile out = run_phases(storage, digests, config, given, deliver, log, write_progress);
  out.digests_from_stamps = digests.tally().from_stamp;
  out.digests_hashed = digests.tally().hashed;
  out.why_hashed = digests.tally().why_hashed;
  return out;
}

} // namespace pipeline

CacheKey explain_cache_key(const CompileOptions& options) {
  Model model = read_model(options.model_path, options.limits, Weights::in_table);
  return key::compute_key(model, options);
}

CachedCompile compile_cached(const CompileOptions& options, const CacheConfig& config, CacheUse use,
                             const LogSink& log, const WriteProgress& write_progress) {
  if (use == CacheUse::disabled) {
    CachedCompile out;
    out.result = compile(options, log, write_progress);
    out.outcome = CacheOutcome::disabled;
    out.reason = "--no-cache";
    return out;
  }
  // Before any lookup: a hit would otherwise answer a function clause no function backs.
  accuracy::check_accuracy_functions(options);
  std::string before = pipeline::unmade_cache_folder(config.dir);
  cache::LocalStorage storage = cache::open_local_storage(config);
  util::sweep_on_interrupt(storage.root() / "tmp"); // staging folders, on Ctrl-C
  CachedCompile out = pipeline::run_cached(storage, config, options,
                                           pipeline::Deliver::output_folder, log, write_progress);
  if (!before.empty()) {
    out.cache_made =
        "made " + storage.root().string() + " an npucc cache (the folder " + before + ")";
  }
  return out;
}

const char* outcome_name(CacheOutcome outcome) {
  switch (outcome) {
  case CacheOutcome::hit:
    return "hit";
  case CacheOutcome::miss:
    return "miss";
  case CacheOutcome::bypass:
    return "bypass";
  case CacheOutcome::disabled:
    return "disabled";
  }
  return "disabled";
}

} // namespace npucc

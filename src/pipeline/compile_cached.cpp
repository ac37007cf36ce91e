#include "pipeline/cache_key.h"
#include "pipeline/cached_compile.h"
#include "pipeline/manifest_reader.h"
#include "cache/model_index.h"
#include "cache/remote/tiered_storage.h"
#include "pipeline/resource_ops.h"
#include "check/isolated_worker.h"
#include "compiler/output_folder.h"
#include "compiler/prepared_compile.h"
#include "model/external_data.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "precision/overflow_prescan.h"
#include "util/file_io.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/sha256.h"

#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>

namespace npucc {

namespace fs = std::filesystem;
using nlohmann::json;

namespace pipeline {

using cache::FetchResult;
using cache::FetchStatus;
using cache::KnownDigests;
using cache::LocalStorage;
using cache::Storage;
using cache::EntryHeader;
using cache::StoreResult;
using cache::StoreStatus;
using cache::SourceFiles;
using cache::Replace;
using cache::remove_tree;
using cache::unique_name;
using cache::serialize_model_index;
namespace remote = cache::remote;

namespace {

// A hit does no compile work, so the result comes from the stored manifest.
CompileResult result_from_manifest(const fs::path& manifest_path, const std::string& model_sha256) {
  return parse_cached_manifest(util::read_file(manifest_path), manifest_path, model_sha256);
}

std::string variants_of(const CompileResult& result) {
  std::string out;
  for (const auto& graph : result.graphs) {
    out += (out.empty() ? "" : ",") + graph.role + ":" + graph.precision;
  }
  return out;
}

} // namespace

namespace {

// The digests the graph writer computed: the store need not read the graphs again.
KnownDigests written_digests(const CompileResult& result) {
  KnownDigests known;
  for (const auto& graph : result.graphs) {
    known[graph.graph.file] = {graph.graph.sha256, graph.graph.written_as};
    for (const auto& data : graph.external_data) {
      known[data.file] = {data.sha256, data.written_as};
    }
  }
  return known;
}

} // namespace

std::vector<std::string> written_files(const CompileResult& result) {
  std::vector<std::string> names;
  for (const auto& graph : result.graphs) {
    names.push_back(graph.graph.file);
    for (const auto& data : graph.external_data) {
      names.push_back(data.file);
    }
  }
  names.push_back(result.manifest_path.filename().string());
  return names;
}

namespace {

// An entry's manifest names the model first compiled into it; the user's manifest names
// the model they compiled now (a renamed copy hits the same entry). Written as a new file
// (the delivered one may be a hard link to the cache's, which stays as it was).
void name_current_input(const fs::path& manifest_path, const fs::path& model_path) {
  json manifest = json::parse(util::read_file(manifest_path));
  const json file = model_path.filename().string();
  auto model = manifest.is_object() ? manifest.find("model") : manifest.end();
  if (model == manifest.end() || !model->is_object() || (*model)["file"] == file) {
    return;
  }
  (*model)["file"] = file;
  util::write_file_atomic(manifest_path,
                          manifest.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

// Looks the key up and, on a hit, delivers the files: into the output folder (through
// a staging folder, so a failed fetch leaves nothing), or for populate only checks them
// (materialising into a scratch folder verifies every checksum and costs only links).
FetchResult fetch_and_deliver(LocalStorage& storage, Storage& tier, const std::string& key,
                              const CompileOptions& options, Deliver deliver) {
  if (deliver == Deliver::output_folder) {
    compiler::OutputFolder output(options);
    FetchResult fetched = tier.fetch(key, output.staging());
    if (fetched.status == FetchStatus::hit) {
      name_current_input(output.staging() / "manifest.json", options.model_path);
      output.publish();
    }
    return fetched;
  }
  storage.make_dir(storage.root() / "tmp");
  fs::path scratch = unique_name(storage.root() / "tmp", "check");
  storage.make_dir(scratch); // a group member may purge it
  FetchResult fetched;
  try {
    fetched = tier.fetch(key, scratch);
  } catch (...) {
    remove_tree(scratch);
    throw;
  }
  remove_tree(scratch);
  return fetched;
}

CachedCompile hit_result(const FetchResult& fetched, const CompileOptions& options,
                         const std::string& key, const std::string& model_sha256, Deliver deliver) {
  CachedCompile out;
  out.outcome = CacheOutcome::hit;
  out.key = key;
  if (deliver == Deliver::output_folder) {
    out.reason = std::string("materialised by ") + transfer_name(fetched.transfer);
    out.result = result_from_manifest(options.output_dir / "manifest.json", model_sha256);
  } else {
    out.reason = "already cached";
  }
  return out;
}

// A model whose bytes were seen before: its index gives the external locations, so the
// key needs only hashes and a hit never parses the model. nullopt: take the full path.
std::optional<CachedCompile> fast_hit(LocalStorage& storage, const CompileOptions& options,
                                      Deliver deliver, const LogSink& log) {
  std::error_code ec;
  if (!fs::is_regular_file(options.model_path, ec)) {
    return std::nullopt; // read_model gives the error
  }
  ModelIdentity identity;
  identity.file_name = options.model_path.filename().string();
  identity.bytes = fs::file_size(options.model_path, ec);
  if (ec || identity.bytes > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      identity.bytes > options.limits.max_memory_bytes) {
    return std::nullopt; // read_model refuses it without reading it
  }
  identity.sha256 = util::sha256_file_hex(options.model_path);
  auto locations = storage.model_index(identity.sha256);
  if (!locations) {
    return std::nullopt;
  }
  try {
    for (const auto& location : *locations) {
      identity.external.emplace_back(
          location, model::resolve_external_location(location, options.model_path.parent_path(),
                                                     options.model_path.string(), "(external)"));
    }
  } catch (const Error&) {
    return std::nullopt; // a missing data file: read_model says which
  }
  CacheKey key = compute_key(identity, options);
  FetchResult fetched = fetch_and_deliver(storage, storage, key.key, options, deliver);
  if (fetched.status != FetchStatus::hit) {
    return std::nullopt;
  }
  if (log) {
    log("cache: hit " + key.key + " (model index: no parse needed)");
  }
  if (deliver == Deliver::output_folder) {
    storage.stats().update({{"hits", 1}});
  }
  return hit_result(fetched, options, key.key, identity.sha256, deliver);
}

} // namespace

CachedCompile run_cached(cache::LocalStorage& storage, const CacheConfig& config,
                         const CompileOptions& given, Deliver deliver, const LogSink& log) {
  auto say = [&](const std::string& line) {
    if (log) {
      log(line);
    }
  };
  if (auto hit = fast_hit(storage, given, deliver, log)) {
    return *hit;
  }
  CachedCompile out;
  check::start_isolated_worker(); // while this process is small
  Model model = read_model(given.model_path, given.limits, Weights::in_table);
  CompileOptions options = given;
  const std::string model_sha256 = model.sha256;
  const std::string model_index = serialize_model_index(model);
  auto uncacheable = find_uncacheable_op(model.proto);

  // A model whose bytes have no index here (fast_hit) is nearly always a miss: the
  // compile's first stage runs while a second core hashes the external data for the
  // key (with one core, the key is hashed first, in line), and is thrown away on the
  // rare hit. With a remote tier a local miss may well be a remote hit, which needs no
  // compile work: the key alone comes first there.
  //
  // With a second core and an output folder, the second stage (writing the graphs, most
  // of a compile's time) starts before the key is known too: the rewrite assumes that
  // the weights the key's reading has yet to reach do not overflow the low type
  // (precision::OverflowAssumption), and is built again, its graphs rewritten, on the
  // rare model where one does. A hit stops the writers.
  std::optional<PreparedCompile> prepared;
  std::unique_ptr<GraphWriting> writing;
  CacheKey key;
  if (!uncacheable && config.remote.url.empty()) {
    bool second_core = util::thread_budget() > 1;
    KeyHashing hashing(model, options, second_core ? HashOn::second_thread : HashOn::this_thread);
    if (deliver == Deliver::output_folder) {
      compiler::check_output_folder(options);
    }
    if (second_core && deliver == Deliver::output_folder) {
      precision::OverflowAssumption assumption;
      PreparedCompile early = prepare_compile(std::move(model), options, log);
      assumption.stop();
      writing = std::make_unique<GraphWriting>(std::move(early), options);
      key = hashing.get();
      if (!assumption.holds()) {
        prepared = writing->abandon();
        writing.reset();
        say("precision: a weight overflows the low type: rewriting the low graph");
        rebuild_variants(*prepared, options);
      }
    } else {
      prepared = prepare_compile(std::move(model), options, log);
      key = hashing.get();
    }
  } else {
    key = compute_key(model, options);
  }
  options.cache_key = key.key;
  out.key = key.key;
  say("cache: key " + key.key + " (" + storage.describe() + ")");
  // The second stage, or both when the first did not run.
  auto compile_now = [&]() {
    if (writing) {
      CompileResult result = writing->finish(options);
      writing.reset();
      return result;
    }
    return prepared ? write_compile(std::move(*prepared), options)
                    : compile(std::move(model), options, log);
  };

  if (uncacheable) {
    storage.stats().update({{"bypass." + uncacheable->reason, 1}});
    out.outcome = CacheOutcome::bypass;
    out.reason = uncacheable->message;
    say("cache: bypass: " + out.reason);
    if (deliver == Deliver::output_folder) {
      out.result = compile_now();
    }
    return out;
  }

  // The shared remote tier, when configured: asked on a local miss, fed by compiles.
  std::unique_ptr<remote::TieredStorage> tiered;
  if (!config.remote.url.empty()) {
    tiered = std::make_unique<remote::TieredStorage>(storage, config.remote);
  }
  Storage& tier = tiered ? static_cast<Storage&>(*tiered) : storage;
  auto remote_warning = [&] { return tiered ? tiered->warning() : std::string(); };

  FetchResult fetched = fetch_and_deliver(storage, tier, key.key, options, deliver);
  if (fetched.status == FetchStatus::hit) {
    writing.reset();
    bool remote_hit = tiered && tiered->served_remotely();
    if (deliver == Deliver::output_folder && !remote_hit) {
      storage.stats().update({{"hits", 1}});
    }
    storage.record_model_index(model_sha256, model_index);
    CachedCompile hit = hit_result(fetched, options, key.key, model_sha256, deliver);
    if (remote_hit) {
      hit.reason = "from the remote cache " + config.remote.url + ", " + hit.reason;
      say("cache: remote hit " + key.key + ": " + std::to_string(tiered->hit_bytes()) +
          " bytes in " + std::to_string(tiered->hit_seconds()) + " s");
    }
    hit.remote_warning = remote_warning();
    return hit;
  }

  bool replace =
      fetched.status == FetchStatus::corrupt || fetched.status == FetchStatus::incomplete;
  out.outcome = CacheOutcome::miss;
  out.reason = replace ? std::string(fetch_status_name(fetched.status)) + " entry " +
                             (storage.read_only() ? "not used" : "replaced") + " (" +
                             fetched.problem + ")"
                       : "new key";
  if (fetched.untrusted) {
    // Someone may be trying to feed us a forged entry: say so even without --verbose.
    out.warning = "cache entry " + storage.entry_dir(key.key).string() +
                  " rejected: " + fetched.problem + "; compiled locally";
  }
  storage.stats().update({{"misses", 1}, {replace ? "misses.corrupt" : "misses.new", 1}});
  say("cache: miss: " + out.reason);
  if (storage.read_only()) {
    out.reason += " (read-only cache: not stored)";
    if (deliver == Deliver::cache_only) {
      throw Error(storage.root().string() + ": the cache is used read-only; cannot populate it");
    }
    out.result = compile_now();
    out.remote_warning = remote_warning();
    return out;
  }

  fs::path scratch;
  if (deliver == Deliver::cache_only) {
    storage.make_dir(storage.root() / "tmp");
    scratch = unique_name(storage.root() / "tmp", "compile");
    options.output_dir = scratch;
  }
  try {
    out.result = compile_now();
    EntryHeader header;
    header.compiler_version = k_version;
    header.created = static_cast<int64_t>(std::time(nullptr));
    header.key = key.key;
    header.model = given.model_path.stem().string();
    header.variants = variants_of(out.result);
    header.options = canonical_options(given);
    try {
      StoreResult stored =
          tier.store(header, options.output_dir, written_files(out.result),
                     deliver == Deliver::cache_only ? SourceFiles::move : SourceFiles::link,
                     replace ? Replace::yes : Replace::no, written_digests(out.result));
      storage.stats().update(
          {{stored.status == StoreStatus::stored ? "stores" : "stores.raced", 1}});
      storage.record_model_index(model_sha256, model_index);
      if (config.max_size) {
        storage.enforce_max_size(*config.max_size);
      }
    } catch (const Error& e) {
      storage.stats().update({{"store_errors", 1}});
      out.warning += std::string(out.warning.empty() ? "" : "; ") +
                     "not stored in the cache: " + e.what() +
                     (e.hint().empty() ? "" : " (" + e.hint() + ")");
      if (deliver == Deliver::cache_only) {
        throw Error(out.warning);
      }
    }
  } catch (...) {
    if (!scratch.empty()) {
      remove_tree(scratch);
    }
    throw;
  }
  if (!scratch.empty()) {
    remove_tree(scratch);
  }
  out.remote_warning = remote_warning();
  return out;
}

} // namespace pipeline

CacheKey explain_cache_key(const CompileOptions& options) {
  Model model = read_model(options.model_path, options.limits, Weights::in_table);
  return pipeline::compute_key(model, options);
}

CachedCompile compile_cached(const CompileOptions& options, const CacheConfig& config, CacheUse use,
                             const LogSink& log) {
  if (use == CacheUse::disabled) {
    CachedCompile out;
    out.result = compile(options, log);
    out.outcome = CacheOutcome::disabled;
    out.reason = "--no-cache";
    return out;
  }
  cache::LocalStorage storage = cache::open_local_storage(config);
  util::sweep_on_interrupt(storage.root() / "tmp"); // staging folders, on Ctrl-C
  return pipeline::run_cached(storage, config, options, pipeline::Deliver::output_folder, log);
}

} // namespace npucc

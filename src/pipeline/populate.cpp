#include "cache/remote/circuit_breaker.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "pipeline/cached_compile.h"
#include "pipeline/populate_shard.h"
#include "pipeline/populate_workers.h"
#include "util/interrupt.h"

#include <algorithm>

namespace npucc {

namespace fs = std::filesystem;

namespace {

// How TieredStorage::fail begins the warning of the call that opened the breaker.
constexpr const char* k_remote_down_warning = "remote cache unavailable";

} // namespace

namespace {

struct FoundModel {
  fs::path path;
  std::string shard_key; // relative to the folder searched; a file: as given
};

std::vector<FoundModel> search_inputs(const std::vector<fs::path>& inputs) {
  std::vector<FoundModel> models;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<fs::path> found;
      for (fs::recursive_directory_iterator it(input, ec), end; !ec && it != end;
           it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".onnx") {
          found.push_back(it->path());
        }
      }
      if (ec) {
        throw Error(input.string() + ": cannot search the folder: " + ec.message());
      }
      std::sort(found.begin(), found.end());
      for (const auto& path : found) {
        models.push_back({path, path.lexically_relative(input).generic_string()});
      }
    } else if (fs::exists(input, ec)) {
      models.push_back({input, input.lexically_normal().generic_string()});
    } else {
      throw Error(input.string() + ": no such file or folder", "check the path");
    }
  }
  return models;
}

} // namespace

std::vector<fs::path> find_models(const std::vector<fs::path>& inputs) {
  std::vector<fs::path> paths;
  for (const auto& model : search_inputs(inputs)) {
    paths.push_back(model.path);
  }
  return paths;
}

namespace {

// A compile, but not one that may create a cache: that is `cache init`'s (or a compile's).
cache::LocalStorage open_for_populate(const CacheConfig& config) {
  // An empty folder (or the default one, missing) becomes a cache here, as for a compile.
  cache::LocalStorage storage = cache::open_local_storage(config, CacheIntent::compile);
  util::sweep_on_interrupt(storage.root() / "tmp"); // the workers' staging, on Ctrl-C
  if (storage.read_only()) {
    throw Error("cache populate: " + storage.root().string() +
                    " is used read-only; nothing compiled",
                "drop --read-only (NPUCC_CACHE_READ_ONLY, cache.read_only in config.toml) to "
                "fill the cache");
  }
  return storage;
}

// Runs in a worker process (or here, for -j 1): every failure becomes the item's one
// line, since nothing may escape a worker.
pipeline::WorkerReply compile_item(cache::LocalStorage& storage, const CacheConfig& config,
                                   const CompileOptions& options, const fs::path& model,
                                   pipeline::RemoteState remote) {
  pipeline::WorkerReply reply;
  PopulateItem& item = reply.item;
  const std::string& remote_url = config.remote.url;
  try {
    if (remote == pipeline::RemoteState::down && !remote_url.empty()) {
      cache::remote::mark_remote_down(remote_url); // another worker found it down
    }
    CompileOptions compile = options;
    compile.model_path = model;
    CachedCompile done =
        pipeline::run_cached(storage, config, compile, pipeline::Deliver::cache_only, {});
    item.outcome = done.outcome;
    item.detail = done.outcome == CacheOutcome::miss ? done.warning : done.reason;
    item.remote_warning = done.remote_warning;
  } catch (const Error& e) {
    item.failed = true;
    item.detail = std::string(e.what()) + (e.hint().empty() ? "" : " (" + e.hint() + ")");
  } catch (const std::exception& e) {
    item.failed = true;
    item.detail = std::string("internal error: ") + e.what();
  } catch (...) {
    item.failed = true;
    item.detail = "internal error: an unknown exception";
  }
  if (!remote_url.empty() && cache::remote::remote_is_down(remote_url)) {
    reply.remote = pipeline::RemoteState::down;
  }
  return reply;
}

// The inputs' models with the run's options, then the models with their own; with a
// shard, only its models. Sets summary.models_total.
std::vector<PopulateModel> models_to_compile(const PopulateOptions& options,
                                             PopulateSummary& summary) {
  std::vector<PopulateModel> models;
  for (const auto& found : search_inputs(options.inputs)) {
    models.push_back({found.path, options.compile, found.shard_key});
  }
  models.insert(models.end(), options.models.begin(), options.models.end());
  summary.models_total = models.size();
  summary.shard = options.shard;
  return options.shard ? pipeline::take_shard(std::move(models), *options.shard) : models;
}

void count_outcomes(PopulateSummary& summary) {
  for (const auto& item : summary.items) {
    if (item.failed) {
      ++summary.failed;
    } else if (item.outcome == CacheOutcome::hit) {
      ++summary.cached;
    } else if (item.outcome == CacheOutcome::bypass) {
      ++summary.bypassed;
    } else {
      ++summary.compiled;
    }
  }
}

} // namespace

PopulateSummary populate_cache(const CacheConfig& config, const PopulateOptions& options,
                               const PopulateProgress& progress) {
  PopulateSummary summary;
  std::vector<PopulateModel> models = models_to_compile(options, summary);
  util::set_interrupt_progress(0, models.size());
  const std::string before = pipeline::unmade_cache_folder(config.dir);
  cache::LocalStorage storage = open_for_populate(config);
  if (!before.empty()) {
    summary.cache_made = "made " + storage.root().string() + " an npucc cache (the folder " + before + ")";
  }
  if (options.invalidate_first == InvalidateFirst::yes) {
    cache::InvalidateReport invalidated = storage.invalidate({}, cache::DryRun::no);
    summary.invalidated = invalidated.removed.size();
    if (!invalidated.failures.empty()) {
      throw Error("cache populate --invalidate: " + invalidated.failures.front());
    }
  }
  summary.items.resize(models.size());
  auto compile_one = [&](size_t i, pipeline::RemoteState remote) {
    return compile_item(storage, config, models[i].compile, models[i].path, remote);
  };
  size_t finished = 0;
  bool remote_down_reported = false;
  auto item_done = [&](size_t i, const pipeline::WorkerReply& reply) {
    PopulateItem item = reply.item;
    item.model = models[i].path;
    if (reply.worker_lost) {
      item.detail = models[i].path.string() + ": " + item.detail;
    }
    // Two workers may find a down remote at once: one warning, as from one process.
    if (item.remote_warning.rfind(k_remote_down_warning, 0) == 0) {
      if (remote_down_reported) {
        item.remote_warning.clear();
      }
      remote_down_reported = true;
    }
    summary.items[i] = item;
    ++finished;
    if (progress) {
      progress(item, finished, models.size());
    }
  };
  pipeline::compile_in_workers(models.size(), options.jobs, compile_one, item_done);
  count_outcomes(summary);
  // From the headers alone: a full listing costs more than a run with nothing to compile.
  summary.other_version_entries = storage.count_other_versions();
  return summary;
}

} // namespace npucc

#include "cache/cached_compile.h"
#include "npucc/error.h"
#include "npucc/version.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace npucc {

namespace fs = std::filesystem;

std::vector<fs::path> find_models(const std::vector<fs::path>& inputs) {
  std::vector<fs::path> models;
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
      models.insert(models.end(), found.begin(), found.end());
    } else if (fs::exists(input, ec)) {
      models.push_back(input);
    } else {
      throw Error(input.string() + ": no such file or folder", "check the path");
    }
  }
  return models;
}

PopulateSummary populate_cache(const CacheConfig& config, const PopulateOptions& options,
                               const PopulateProgress& progress) {
  std::vector<fs::path> models = find_models(options.inputs);
  cache::LocalStorage storage = cache::open_local_storage(config);
  if (storage.read_only()) {
    throw Error("cache populate: " + storage.root().string() +
                    " is used read-only; nothing compiled",
                "drop --read-only (NPUCC_CACHE_READ_ONLY, cache.read_only in config.toml) to "
                "fill the cache");
  }
  PopulateSummary summary;
  if (options.invalidate_first == InvalidateFirst::yes) {
    summary.invalidated = storage.invalidate({}, cache::DryRun::no).size();
  }
  summary.items.resize(models.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  size_t finished = 0;
  auto worker = [&] {
    for (size_t i = next++; i < models.size(); i = next++) {
      PopulateItem item;
      item.model = models[i];
      try {
        CompileOptions compile = options.compile;
        compile.model_path = models[i];
        CachedCompile done =
            cache::run_cached(storage, config, compile, cache::Deliver::cache_only, {});
        item.outcome = done.outcome;
        item.detail = done.outcome == CacheOutcome::miss ? done.warning : done.reason;
        item.remote_warning = done.remote_warning;
      } catch (const Error& e) {
        item.failed = true;
        item.detail = std::string(e.what()) + (e.hint().empty() ? "" : " (" + e.hint() + ")");
      } catch (const std::exception& e) {
        item.failed = true;
        item.detail = std::string("internal error: ") + e.what();
      }
      std::lock_guard<std::mutex> lock(mutex);
      summary.items[i] = item;
      ++finished;
      if (progress) {
        progress(item, finished, models.size());
      }
    }
  };
  unsigned jobs =
      std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(models.size())));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) {
    threads.emplace_back(worker);
  }
  worker();
  for (auto& thread : threads) {
    thread.join();
  }
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
  for (const auto& info : storage.list(cache::Check::sizes)) {
    if (info.state == cache::EntryState::other_version) {
      ++summary.other_version_entries;
    }
  }
  return summary;
}

} // namespace npucc

// The public Cache (npucc/cache_maintenance.h): each call opens the folder with the
// intent of what it does, as the CLI's commands do, and hands off to LocalStorage.
#include "npucc/cache_maintenance.h"

#include "cache/blob_store.h"
#include "cache/entry_format.h"
#include "cache/local_storage.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace npucc {

namespace {

CacheEntry entry_of(const cache::EntryInfo& info) {
  CacheEntry entry;
  entry.key = info.key;
  entry.model = info.header.model;
  entry.variants = info.header.variants;
  entry.compiler_version = info.header.compiler_version;
  entry.options = info.header.options;
  entry.state = cache::entry_state_name(info.state);
  entry.problem = info.problem;
  entry.bytes = info.bytes;
  entry.created = info.header.created;
  entry.last_used = info.last_used();
  return entry;
}

// The entries a purge or an invalidation removed (or, dry run, would remove).
CacheRemoval removal_of(const std::vector<cache::Removal>& removals, cache::Failures failures) {
  CacheRemoval removal;
  for (const auto& removed : removals) {
    removal.removed.push_back(
        {removed.key, removed.model, removed.version, removed.bytes, removed.why});
    removal.freed += removed.bytes;
  }
  removal.failures = std::move(failures);
  return removal;
}

cache::DryRun dry_run_of(bool dry_run) {
  return dry_run ? cache::DryRun::yes : cache::DryRun::no;
}

CacheIntent intent_of(bool changes) {
  return changes ? CacheIntent::modify : CacheIntent::read;
}

// The header's "high:float32,low:mixed_float16" as [{"role": "high", "precision": "float32"},
// ...]: a reader should not have to split strings.
nlohmann::json variants_json(const std::string& variants) {
  nlohmann::json out = nlohmann::json::array();
  if (variants.empty()) {
    return out;
  }
  for (const auto& variant : util::split(variants, ',')) {
    size_t colon = variant.find(':');
    out.push_back({{"role", variant.substr(0, colon)},
                   {"precision", colon == std::string::npos ? "" : variant.substr(colon + 1)}});
  }
  return out;
}

// The header's options (canonical_options() text) as the object they are; null when the
// entry is corrupt or its header holds no valid JSON object (headers can be forged).
nlohmann::json options_json(const std::string& options) {
  nlohmann::json parsed = nlohmann::json::parse(options, nullptr, false);
  return parsed.is_object() ? parsed : nlohmann::json(nullptr);
}

} // namespace

std::string cache_entry_json(const CacheEntry& entry) {
  nlohmann::json object = {{"key", entry.key},
                           {"model", entry.model},
                           {"variants", variants_json(entry.variants)},
                           {"bytes", entry.bytes},
                           {"created", entry.created},
                           {"last_used", entry.last_used},
                           {"compiler_version", entry.compiler_version},
                           {"state", entry.state},
                           {"problem", entry.problem},
                           {"options", options_json(entry.options)}};
  // Header fields can be forged: bytes that are not UTF-8 are replaced, not a failure.
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

uint64_t CacheStatistics::counter(const std::string& name) const {
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

Cache::Cache(CacheConfig config) : m_config(std::move(config)) {}

std::vector<CacheEntry> Cache::entries() const {
  return listing().entries;
}

CacheListing Cache::listing() const {
  cache::LocalStorage storage = cache::open_local_storage(m_config, CacheIntent::read);
  CacheListing listing;
  listing.dir = storage.root();
  std::vector<cache::EntryInfo> infos = storage.list(cache::Check::files);
  listing.entries.reserve(infos.size());
  for (const auto& info : infos) {
    listing.entries.push_back(entry_of(info));
  }
  return listing;
}

CacheStatistics Cache::stats() const {
  cache::LocalStorage storage = cache::open_local_storage(m_config, CacheIntent::read);
  CacheStatistics stats;
  stats.dir = storage.root();
  stats.counters = storage.stats().read();
  auto entries = storage.list(cache::Check::files);
  stats.entries = entries.size();
  cache::SharedDiskUse disk; // a blob entries share counted once, as eviction weighs it
  for (const auto& info : entries) {
    disk.add(storage.entry_dir(info.key), info.header, info.bytes);
    ++stats.states[cache::entry_state_name(info.state)];
  }
  stats.bytes = disk.total();
  return stats;
}

void Cache::zero_stats() const {
  cache::open_local_storage(m_config, CacheIntent::modify).stats().zero();
}

CacheVerifyResult Cache::verify(bool fix,
                                const std::function<void(size_t, size_t)>& progress) const {
  cache::LocalStorage storage = cache::open_local_storage(m_config, intent_of(fix));
  cache::VerifyReport report = storage.verify(fix ? cache::Fix::yes : cache::Fix::no, progress);
  CacheVerifyResult result;
  result.entries = report.entries;
  result.bytes = report.bytes;
  for (const auto& finding : report.findings) {
    result.problems.push_back({cache::finding_name(finding.kind), finding.path, finding.detail,
                               finding.fixed, finding.left_alone});
  }
  result.failures = std::move(report.failures);
  return result;
}

CacheRemoval Cache::purge(const PurgeRequest& request) const {
  cache::PurgeOptions options;
  options.all = request.all;
  options.older_than = request.older_than;
  options.max_size = request.max_size;
  cache::PurgeReport report = cache::open_local_storage(m_config, intent_of(!request.dry_run))
                                  .purge(options, dry_run_of(request.dry_run));
  CacheRemoval removal = removal_of(report.removed, std::move(report.failures));
  removal.freed = report.freed;
  removal.temporaries = report.temporaries;
  removal.temporary_bytes = report.temporary_bytes;
  removal.unused_blobs = report.unused_blobs;
  removal.unused_blob_bytes = report.unused_blob_bytes;
  return removal;
}

CacheRemoval Cache::invalidate(const InvalidateRequest& request) const {
  cache::Selection selection{request.compiler_version, request.model, request.key_prefix};
  if (!selection.key_prefix.empty()) {
    selection.key_prefix = cache::check_key_prefix(selection.key_prefix, "key prefix");
  }
  cache::InvalidateReport report = cache::open_local_storage(m_config, intent_of(!request.dry_run))
                                       .invalidate(selection, dry_run_of(request.dry_run));
  return removal_of(report.removed, std::move(report.failures));
}

} // namespace npucc

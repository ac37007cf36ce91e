// `npucc cache ...`: the subcommand table and the listing commands (ls, stats, init).
// Maintenance that deletes lives in cmd_cache_maintenance.cpp, populate in
// cmd_cache_populate.cpp, explain in cmd_cache_explain.cpp. Every command hands off to
// the library: ls, stats, verify, purge and invalidate through npucc::Cache
// (npucc/cache_maintenance.h), as the Python module does.
#include "cache_commands.h"
#include "cache/local_storage.h" // model_matches
#include "npucc/cache_maintenance.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "util/strings.h"
#include "util/text_table.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <map>

namespace npucc::cli {

namespace cache_cli {

namespace {

using nlohmann::json;

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"ls", "list cache entries", setup_ls},
      {"stats", "show hits, misses, bypasses, size and evictions", setup_stats},
      {"verify", "re-hash every entry; report corrupt, truncated, foreign and stray files",
       setup_verify},
      {"invalidate", "remove entries of other compiler versions (or by version, model, key)",
       setup_invalidate},
      {"purge", "remove entries: all, by age, or down to a size (least recently used first)",
       setup_purge},
      {"populate", "compile every model not yet cached (for CI)", setup_populate},
      {"explain", "say whether a compile command would hit the cache, and why not", setup_explain},
      {"init", "create a cache folder", setup_init},
  };
  return table;
}

enum class SortBy { key, model, size, created, used, version, state };

SortBy sort_by(const std::string& name) {
  static const std::map<std::string, SortBy> k_fields = {
      {"key", SortBy::key},         {"model", SortBy::model}, {"size", SortBy::size},
      {"created", SortBy::created}, {"used", SortBy::used},   {"version", SortBy::version},
      {"state", SortBy::state}};
  auto it = k_fields.find(name);
  return it == k_fields.end() ? SortBy::key : it->second;
}

// Compares one field of two entries in place: sorting copies no strings.
int compare_entries(const CacheEntry& a, const CacheEntry& b, SortBy by) {
  auto number = [](int64_t x, int64_t y) { return x < y ? -1 : x > y ? 1 : 0; };
  switch (by) {
  case SortBy::size:
    return number(static_cast<int64_t>(a.bytes), static_cast<int64_t>(b.bytes));
  case SortBy::created:
    return number(a.created, b.created);
  case SortBy::used:
    return number(a.last_used, b.last_used);
  case SortBy::version:
    return a.compiler_version.compare(b.compiler_version);
  case SortBy::state:
    return a.state.compare(b.state);
  case SortBy::model:
    return a.model.compare(b.model);
  case SortBy::key:
    break;
  }
  return a.key.compare(b.key);
}

struct LsArgs {
  OptionValues cache; // the table's cache options given
  bool json = false;
  bool remote = false;
  std::string sort = "model";
  bool reverse = false;
  std::string model;
  std::string version;
};

// --model: the one rule of ls, invalidate and purge (cache::model_matches: the stem, the
// file name or a glob).
bool ls_selects(const CacheEntry& entry, const LsArgs& args) {
  return cache::model_matches(entry.model, args.model) &&
         (args.version.empty() || entry.compiler_version == args.version);
}

// "--model ppocr* --version 0.1.0", or "" without filters.
std::string ls_filters(const LsArgs& args) {
  std::string filters;
  if (!args.model.empty()) {
    filters += "--model " + util::printable(args.model);
  }
  if (!args.version.empty()) {
    filters += (filters.empty() ? "" : " ") + ("--version " + util::printable(args.version));
  }
  return filters;
}

// The line under the table: how many entries were listed, and of how many when a filter
// is active, so "0 entries" never hides a --model that matched nothing.
std::string ls_summary(size_t listed, size_t in_cache, const LsArgs& args,
                       const std::filesystem::path& root) {
  std::string filters = ls_filters(args);
  if (filters.empty()) {
    return count_entries(listed) + " in " + util::printable(root.string());
  }
  return count_entries(listed) + (listed == 1 ? " matches " : " match ") + filters + " (" +
         std::to_string(in_cache) + " in the cache)";
}

} // namespace

std::string format_time(int64_t seconds) {
  if (seconds <= 0) {
    return "-";
  }
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm parts{};
  gmtime_r(&time, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M", &parts);
  return buffer;
}

std::function<int()> setup_ls(CLI::App& command, const GlobalOptions& global) {
  auto args = std::make_shared<LsArgs>();
  add_cache_options(command, args->cache);
  command.add_flag("--json", args->json, "print JSON");
  command
      .add_option("--sort", args->sort, "sort by key, model, size, created, used, version or state")
      ->check(CLI::IsMember({"key", "model", "size", "created", "used", "version", "state"}))
      ->capture_default_str();
  command.add_flag("--reverse", args->reverse, "reverse the order");
  command.add_option("--model", args->model,
                     "only entries of this model: the .onnx file's stem, or a glob (\"ppocr*\")");
  command.add_option("--version", args->version, "only entries of this compiler version");
  command.add_flag("--remote", args->remote,
                   "list the remote cache's objects instead (Redis; plain HTTP cannot list)");
  add_table_options(command, args->cache, {config::OptionGroup::remote});
  return [args, &global] {
    if (args->remote) {
      return list_remote(make_cache_config(args->cache), args->json, global.quiet);
    }
    CacheListing listing = Cache(make_cache_config(args->cache)).listing();
    std::vector<CacheEntry>& entries = listing.entries;
    const size_t in_cache = entries.size();
    size_t other_versions = 0;
    for (const auto& entry : entries) {
      other_versions += entry.state == "other-version" ? 1 : 0;
    }
    entries.erase(
        std::remove_if(entries.begin(), entries.end(),
                       [&](const CacheEntry& entry) { return !ls_selects(entry, *args); }),
        entries.end());
    // Entries are sorted by address: an entry holds a dozen strings, and moving them
    // in a merge sort cost more than the comparisons. The field is chosen once, not
    // by string compares in every comparison.
    const SortBy by = sort_by(args->sort);
    std::vector<const CacheEntry*> sorted;
    sorted.reserve(entries.size());
    for (const auto& entry : entries) {
      sorted.push_back(&entry);
    }
    std::stable_sort(sorted.begin(), sorted.end(), [&](const auto* a, const auto* b) {
      int order = compare_entries(*a, *b, by);
      if (order != 0) {
        return args->reverse ? order > 0 : order < 0;
      }
      return a->key < b->key;
    });
    if (args->json) {
      json listed = json::array();
      for (const auto* entry : sorted) {
        listed.push_back(json::parse(cache_entry_json(*entry))); // the library's presentation
      }
      print_json(k_cache_ls_format,
                 {{"cache_dir", listing.dir.string()}, {"entries", std::move(listed)}});
      return 0;
    }
    // Cells come from entries' headers, which anyone who may write the cache can forge:
    // the table escapes control characters.
    util::TextTable table("", "");
    table.add_row({"KEY", "MODEL", "VARIANTS", "SIZE", "CREATED", "LAST USED", "VERSION", "STATE"});
    for (const auto* entry : sorted) {
      auto or_dash = [](const std::string& text) { return text.empty() ? std::string("-") : text; };
      // Built in place: a braced list would copy each of its strings once more.
      std::vector<std::string> row;
      row.reserve(8);
      row.push_back(entry->key.substr(0, 12));
      row.push_back(or_dash(entry->model));
      row.push_back(or_dash(entry->variants));
      row.push_back(util::format_bytes(entry->bytes));
      row.push_back(format_time(entry->created));
      row.push_back(format_time(entry->last_used));
      row.push_back(or_dash(entry->compiler_version));
      row.push_back(entry->state);
      table.add_row(std::move(row));
    }
    std::cout << table.render();
    if (!global.quiet) {
      std::cout << ls_summary(entries.size(), in_cache, *args, listing.dir) << "\n";
      if (other_versions > 0) {
        std::cout << other_versions_note(other_versions) << " (this is " << k_version
                  << "); `npucc cache invalidate` removes them\n";
      }
    }
    return 0;
  };
}

namespace {

// The "bypass.REASON" counters, by reason, and their total.
std::pair<json, uint64_t> bypass_counts(const CacheStatistics& stats) {
  json bypass = json::object();
  uint64_t total = 0;
  for (const auto& [name, value] : stats.counters) {
    if (util::starts_with(name, "bypass.")) {
      bypass[name.substr(7)] = value;
      total += value;
    }
  }
  return {bypass, total};
}

// A remote hit is neither a local hit nor a miss (nothing was compiled).
uint64_t lookups(const CacheStatistics& stats) {
  return stats.counter("hits") + stats.counter("remote.hits") + stats.counter("misses");
}

// The counters `--json` gives under their own names (the remote ones without "remote.").
constexpr const char* k_json_counters[] = {
    "hits",          "misses",        "stores",   "store_errors", "evictions",
    "invalidations", "evicted_bytes", "cleanups", "last_cleanup", "zeroed"};
constexpr const char* k_json_remote_counters[] = {"hits",       "misses",  "errors",
                                                  "rejected",   "uploads", "refused_credentials",
                                                  "bytes_down", "bytes_up"};

json stats_json(const CacheStatistics& stats, const CacheConfig& config) {
  auto [bypass, bypass_total] = bypass_counts(stats);
  uint64_t looked_up = lookups(stats);
  json out = {
      {"cache_dir", stats.dir.string()},
      {"entries", stats.entries},
      {"bytes", stats.bytes},
      {"max_size", config.max_size ? json(*config.max_size) : json(nullptr)},
      {"states", stats.states},
      {"misses_new_key", stats.counter("misses.new")},
      {"misses_corrupt", stats.counter("misses.corrupt")},
      {"hit_rate", looked_up == 0 ? 0.0 : static_cast<double>(stats.counter("hits")) / looked_up},
      {"bypasses", bypass_total},
      {"bypass_reasons", bypass}};
  for (const char* name : k_json_counters) {
    out[name] = stats.counter(name);
  }
  json remote = {{"url", config.remote.url.empty() ? json(nullptr) : json(config.remote.url)}};
  for (const char* name : k_json_remote_counters) {
    remote[name] = stats.counter(std::string("remote.") + name);
  }
  out["remote"] = remote;
  return out;
}

void print_local_stats(const CacheStatistics& stats, const CacheConfig& config) {
  auto get = [&](const std::string& name) { return stats.counter(name); };
  std::cout << "cache folder         " << util::printable(stats.dir.string()) << "\n";
  std::cout << "entries              " << stats.entries;
  for (const auto& [state, count] : stats.states) {
    std::cout << (state == stats.states.begin()->first ? " (" : ", ") << count << " " << state;
  }
  std::cout << (stats.states.empty() ? "" : ")") << "\n";
  std::cout << "size                 " << util::format_bytes(stats.bytes);
  if (config.max_size) {
    std::cout << " of " << util::format_bytes(*config.max_size);
  }
  std::cout << "\n";
  std::cout << "hits                 " << get("hits");
  if (uint64_t looked_up = lookups(stats); looked_up > 0) {
    std::cout << std::fixed << std::setprecision(1) << " (" << 100.0 * get("hits") / looked_up
              << "%)";
  }
  std::cout << "\n";
  std::cout << "misses               " << get("misses") << " (" << get("misses.new") << " new key, "
            << get("misses.corrupt") << " corrupt entry replaced)\n";
  auto [bypass, bypass_total] = bypass_counts(stats);
  std::cout << "bypasses             " << bypass_total << "\n";
  for (const auto& [reason, value] : bypass.items()) {
    std::cout << "  " << std::left << std::setw(19) << util::printable(reason)
              << value.get<uint64_t>() << "\n";
  }
  std::cout << "stores               " << get("stores") << " (" << get("store_errors")
            << " failed)\n";
  std::cout << "evictions            " << get("evictions") << " (+" << get("invalidations")
            << " invalidated, " << util::format_bytes(get("evicted_bytes")) << ")\n";
}

void print_remote_stats(const CacheStatistics& stats, const CacheConfig& config) {
  auto get = [&](const std::string& name) { return stats.counter(name); };
  std::cout << "remote hits          " << get("remote.hits") << " (" << get("remote.misses")
            << " misses, " << get("remote.errors") << " errors, " << get("remote.rejected")
            << " rejected entries, " << get("remote.refused_credentials") << " refused credentials)"
            << (config.remote.url.empty() ? "" : "  " + util::printable(config.remote.url)) << "\n";
  std::cout << "remote transfers     " << util::format_bytes(get("remote.bytes_down")) << " down, "
            << util::format_bytes(get("remote.bytes_up")) << " up (" << get("remote.uploads")
            << " uploads)\n";
  std::cout << "last cleanup         " << format_time(static_cast<int64_t>(get("last_cleanup")))
            << "\n";
  std::cout << "counters zeroed      " << format_time(static_cast<int64_t>(get("zeroed"))) << "\n";
}

} // namespace

std::function<int()> setup_stats(CLI::App& command, const GlobalOptions&) {
  struct Args {
    OptionValues cache; // the table's cache options given
    bool json = false;
    bool zero = false;
  };
  auto args = std::make_shared<Args>();
  add_cache_options(command, args->cache);
  add_table_options(command, args->cache, {config::OptionGroup::remote});
  command.add_flag("--json", args->json, "print JSON");
  command.add_flag("--zero", args->zero, "reset the counters (entries and size are kept)");
  return [args] {
    CacheConfig config = make_cache_config(args->cache);
    Cache cache(config);
    if (args->zero) {
      cache.zero_stats();
    }
    CacheStatistics stats = cache.stats();
    if (args->json) {
      print_json(k_cache_stats_format, stats_json(stats, config));
      return 0;
    }
    print_local_stats(stats, config);
    print_remote_stats(stats, config);
    return 0;
  };
}

std::function<int()> setup_init(CLI::App& command, const GlobalOptions& global) {
  struct Args {
    std::string dir;
    std::string shared = "auto";
  };
  auto args = std::make_shared<Args>();
  command.add_option("DIR", args->dir, "the folder to create")->required();
  command
      .add_option("--shared", args->shared,
                  "auto: leave the folder's mode as created; group: make the folder setgid and "
                  "group-writable (02770) for a team's shared cache; no: private to you; world: "
                  "readable by all")
      ->check(CLI::IsMember({"auto", "no", "group", "world"}))
      ->capture_default_str();
  return [args, &global] {
    CacheSharing sharing = parse_cache_sharing(args->shared, "--shared");
    init_cache_dir(args->dir, sharing);
    if (!global.quiet) {
      std::cout << "initialised " << (sharing == CacheSharing::group ? "group-shared " : "")
                << "cache folder " << util::printable(args->dir) << "\n";
    }
    return 0;
  };
}

} // namespace cache_cli

std::function<int()> setup_cache(CLI::App& command, const GlobalOptions& global) {
  // A mistyped subcommand is caught before parsing (app.cpp) with a suggestion.
  auto chosen = std::make_shared<std::vector<std::pair<CLI::App*, std::function<int()>>>>();
  std::vector<std::string> names;
  for (const auto& sub : cache_cli::subcommands()) {
    CLI::App* app = command.add_subcommand(sub.name, sub.description);
    if (std::string(sub.name) == "purge") {
      app->alias("clean");
    }
    chosen->emplace_back(app, sub.setup(*app, global));
    names.emplace_back(sub.name);
  }
  return [chosen, names] {
    for (const auto& [app, handler] : *chosen) {
      if (app->parsed()) {
        return handler();
      }
    }
    throw usage_error("no cache command given", "commands: " + util::join(names, ", "));
  };
}

} // namespace npucc::cli

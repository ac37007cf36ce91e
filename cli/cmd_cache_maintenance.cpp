// `npucc cache verify | invalidate | purge`: the subcommands that may delete.
#include "cache/entry_format.h" // check_key_prefix
#include "cache_commands.h"
#include "npucc/cache_maintenance.h"
#include "npucc/config.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "util/strings.h"

#include <algorithm>
#include <unistd.h>

namespace npucc::cli::cache_cli {

namespace {

using nlohmann::json;

json removals_json(const std::vector<RemovedEntry>& removed) {
  json out = json::array();
  for (const auto& removal : removed) {
    out.push_back({{"key", removal.key},
                   {"model", removal.model},
                   {"compiler_version", removal.compiler_version},
                   {"bytes", removal.bytes},
                   {"why", removal.why}});
  }
  return out;
}

void print_removals(const std::vector<RemovedEntry>& removed, bool dry_run,
                    const GlobalOptions& global) {
  uint64_t bytes = 0;
  for (const auto& removal : removed) {
    bytes += removal.bytes;
    if (!global.quiet) {
      std::cout << (dry_run ? "would remove " : "removed ") << removal.key.substr(0, 12) << "  "
                << (removal.model.empty() ? "-" : util::printable(removal.model)) << "  "
                << (removal.compiler_version.empty() ? "-"
                                                     : util::printable(removal.compiler_version))
                << "  " << util::format_bytes(removal.bytes) << "  " << util::printable(removal.why)
                << "\n";
    }
  }
  std::cout << (dry_run ? "would remove " : "removed ") << count_entries(removed.size()) << ", "
            << util::format_bytes(bytes) << "\n";
}

// Each refused removal on its own line; the exit status the command ends with.
int report_failures(const std::vector<std::string>& failures, int status) {
  for (const auto& failure : failures) {
    std::cerr << "npucc: error: " << util::printable(failure) << "\n";
  }
  return failures.empty() ? status : static_cast<int>(ExitStatus::error);
}

json failures_json(const std::vector<std::string>& failures) {
  json out = json::array();
  for (const auto& failure : failures) {
    out.push_back(failure);
  }
  return out;
}

} // namespace

std::function<int()> setup_verify(CLI::App& command, const GlobalOptions& global) {
  struct Args {
    OptionValues cache; // the table's cache options given
    bool fix = false;
    bool dry_run = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  add_cache_options(command, args->cache);
  command.add_flag("--fix", args->fix, "remove what is found (broken entries, stray files)");
  command.add_flag("--dry-run", args->dry_run, "with --fix: only say what would be removed");
  command.add_flag("--json", args->json, "print JSON");
  return [args, &global] {
    bool fix = args->fix && !args->dry_run;
    bool bar = !args->json && !global.quiet && isatty(2) != 0;
    CacheVerifyResult report =
        Cache(make_cache_config(args->cache)).verify(fix, [&](size_t done, size_t total) {
          if (bar) {
            std::cerr << "\rverifying " << done << "/" << total << (done == total ? "\n" : "")
                      << std::flush;
          }
        });
    if (args->json) {
      json findings = json::array();
      for (const auto& problem : report.problems) {
        findings.push_back({{"kind", problem.kind},
                            {"path", problem.path.string()},
                            {"detail", problem.detail},
                            {"fixed", problem.fixed},
                            {"left_alone", problem.left_alone}});
      }
      print_json(k_cache_verify_format, {{"entries", report.entries},
                                         {"bytes", report.bytes},
                                         {"findings", findings},
                                         {"failures", failures_json(report.failures)}});
    } else {
      for (const auto& problem : report.problems) {
        std::cout << problem.kind << "  " << util::printable(problem.path.string());
        if (!problem.detail.empty()) {
          std::cout << ": " << util::printable(problem.detail);
        }
        std::cout << (problem.left_alone ? "  [left alone: not npucc's]"
                      : problem.fixed    ? "  [removed]"
                      : fix              ? "  [not removed]"
                      : args->fix        ? "  [would remove]"
                                         : "")
                  << "\n";
      }
      std::cout << "verified " << count_entries(report.entries) << " ("
                << util::format_bytes(report.bytes) << "): "
                << (report.problems.empty()
                        ? "no problems"
                        : std::to_string(report.problems.size()) + " problem(s)")
                << "\n";
      bool removable = std::any_of(report.problems.begin(), report.problems.end(),
                                   [](const CacheProblem& p) { return !p.left_alone; });
      if (removable && !args->fix) {
        std::cout << "`npucc cache verify --fix` removes them\n";
      }
    }
    // CI runs `verify --fix` to repair a cache: it fails only for what is still there
    // (a finding left alone, or one that could not be removed).
    bool left = std::any_of(report.problems.begin(), report.problems.end(),
                            [](const CacheProblem& p) { return !p.fixed; });
    return report_failures(report.failures, left ? static_cast<int>(ExitStatus::verify_failed) : 0);
  };
}

std::function<int()> setup_invalidate(CLI::App& command, const GlobalOptions& global) {
  struct Args {
    OptionValues cache; // the table's cache options given
    std::string version;
    std::string model;
    std::string key;
    bool dry_run = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  add_cache_options(command, args->cache);
  command.add_option("--version", args->version,
                     std::string("remove entries of this compiler version (default: every "
                                 "version but this one, ") +
                         k_version + ")");
  command.add_option("--model", args->model,
                     "remove entries of this model: its name (the .onnx file's stem), file "
                     "name, or a glob (ppocr*), as for cache ls");
  command.add_option("--key", args->key, "remove the entry whose key starts with K");
  command.add_flag("--dry-run", args->dry_run, "only say what would be removed");
  command.add_flag("--json", args->json, "print JSON");
  return [args, &global] {
    if (!args->key.empty()) {
      args->key = cache::check_key_prefix(args->key, "--key");
    }
    InvalidateRequest request;
    if (!args->version.empty()) {
      request.compiler_version = args->version;
    }
    request.model = args->model;
    request.key_prefix = args->key;
    request.dry_run = args->dry_run;
    CacheRemoval report = Cache(make_cache_config(args->cache)).invalidate(request);
    if (args->json) {
      print_json(k_cache_invalidate_format, {{"dry_run", args->dry_run},
                                             {"removed", removals_json(report.removed)},
                                             {"failures", failures_json(report.failures)}});
    } else {
      print_removals(report.removed, args->dry_run, global);
      if (report.removed.empty() && !args->model.empty()) {
        std::cout << "no entry matches --model " << util::printable(args->model)
                  << " (`npucc cache ls` lists the models)\n";
      }
    }
    return report_failures(report.failures, 0);
  };
}

namespace {

// A size limit that would remove every entry is most likely a unit slip
// (`--max-size 100` is 100 bytes): emptying the cache is what --all says.
void refuse_purging_everything(const Cache& cache, PurgeRequest request,
                               const std::string& max_size) {
  if (!request.max_size) {
    return;
  }
  size_t entries = cache.listing().entries.size();
  request.dry_run = true;
  CacheRemoval plan = cache.purge(request);
  if (entries == 0 || plan.removed.size() < entries) {
    return;
  }
  throw usage_error("--max-size " + util::printable(max_size) + " would remove every entry (" +
                        count_entries(entries) + ", " + util::format_bytes(plan.freed) + ")",
                    "pass --all to empty the cache, or a larger size (10G, 500M); --dry-run "
                    "shows the plan");
}

} // namespace

std::function<int()> setup_purge(CLI::App& command, const GlobalOptions& global) {
  struct Args {
    OptionValues cache; // the table's cache options given
    bool all = false;
    std::string older_than;
    std::string max_size;
    bool dry_run = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  add_cache_options(command, args->cache);
  command.add_flag("--all", args->all, "remove every entry");
  command.add_option("--older-than", args->older_than,
                     "remove entries unused for AGE (7d, 12h, 30m)");
  command.add_option(
      "--max-size", args->max_size,
      "remove least recently used entries until the cache fits SIZE (10G, 500M: powers "
      "of 1024; 10GB: powers of 1000)");
  command.add_flag("--dry-run", args->dry_run, "only say what would be removed");
  command.add_flag("--json", args->json, "print JSON");
  return [args, &global] {
    PurgeRequest options;
    options.all = args->all;
    if (!args->older_than.empty()) {
      options.older_than = parse_age(args->older_than);
    }
    if (!args->max_size.empty()) {
      options.max_size = parse_size_setting(args->max_size, "--max-size");
    }
    options.dry_run = args->dry_run;
    Cache cache(make_cache_config(args->cache));
    if (!options.all && !args->dry_run) {
      refuse_purging_everything(cache, options, args->max_size);
    }
    CacheRemoval report = cache.purge(options);
    if (args->json) {
      print_json(k_cache_purge_format, {{"dry_run", args->dry_run},
                                        {"removed", removals_json(report.removed)},
                                        {"freed_bytes", report.freed},
                                        {"temporaries", report.temporaries},
                                        {"temporary_bytes", report.temporary_bytes},
                                        {"unused_blobs", report.unused_blobs},
                                        {"unused_blob_bytes", report.unused_blob_bytes},
                                        {"failures", failures_json(report.failures)}});
      return report_failures(report.failures, 0);
    }
    print_removals(report.removed, args->dry_run, global);
    if (report.temporaries > 0) {
      std::cout << (args->dry_run ? "would remove " : "removed ") << report.temporaries
                << " stale temporary item(s), " << util::format_bytes(report.temporary_bytes)
                << "\n";
    }
    if (report.unused_blobs > 0) { // weights.data blobs whose last entry went (blob_store.h)
      std::cout << (args->dry_run ? "would remove " : "removed ") << report.unused_blobs
                << " shared weight file(s) no entry uses any more, "
                << util::format_bytes(report.unused_blob_bytes) << "\n";
    }
    if (!options.all && !options.older_than && !options.max_size && !global.quiet) {
      std::cout << "(no --all, --older-than or --max-size: only stale temporary files are "
                   "removed)\n";
    }
    return report_failures(report.failures, 0);
  };
}

} // namespace npucc::cli::cache_cli

// `npucc cache populate MODEL_OR_DIR... [-j N] [--shard K/N]`: pre-compile for CI.
#include "cache_commands.h"
#include "config/compile_request.h"
#include "models_file.h"
#include "npucc/error.h"
#include "pipeline/populate_shard.h"
#include "terminal.h"
#include "util/interrupt.h"
#include "util/strings.h"

#include <thread>
#include <unistd.h>

namespace npucc::cli::cache_cli {

namespace {

using nlohmann::json;

void draw_bar(size_t finished, size_t total, const std::string& name) {
  constexpr size_t width = 30;
  size_t filled = total == 0 ? width : finished * width / total;
  std::string label = util::printable(name);
  label = label.size() > 40 ? "..." + label.substr(label.size() - 37) : label;
  std::cerr << "\r\033[K[" << std::string(filled, '#') << std::string(width - filled, ' ') << "] "
            << finished << "/" << total << " " << label << std::flush;
}

// The --json summary of a populate run.
void print_populate_json(const PopulateSummary& summary) {
  json items = json::array();
  for (const auto& item : summary.items) {
    std::string status = item.failed                            ? "failed"
                         : item.outcome == CacheOutcome::hit    ? "cached"
                         : item.outcome == CacheOutcome::bypass ? "bypassed"
                                                                : "compiled";
    items.push_back({{"model", item.model.string()}, {"status", status}, {"detail", item.detail}});
  }
  json document = {{"compiled", summary.compiled},
                   {"cached", summary.cached},
                   {"bypassed", summary.bypassed},
                   {"failed", summary.failed},
                   {"invalidated", summary.invalidated},
                   {"other_version_entries", summary.other_version_entries},
                   {"models", items}};
  if (summary.shard) {
    document["shard"] = {{"number", summary.shard->index + 1},
                         {"count", summary.shard->count},
                         {"source", summary.shard->source},
                         {"models", summary.items.size()},
                         {"models_total", summary.models_total}};
  }
  print_json(k_cache_populate_format, document);
}

// "shard 2/4 from CI_NODE_INDEX/CI_NODE_TOTAL: 3 of 12 models": the others' models are
// neither failures nor misses, and not listed.
std::string shard_line(const PopulateSummary& summary) {
  const PopulateShard& shard = *summary.shard;
  size_t others = summary.models_total - summary.items.size();
  return "shard " + std::to_string(shard.index + 1) + "/" + std::to_string(shard.count) + " from " +
         shard.source + ": " + std::to_string(summary.items.size()) + " of " +
         std::to_string(summary.models_total) + " models (" + std::to_string(others) +
         " for the other shards)";
}

void print_populate_text(const PopulateSummary& summary, const GlobalOptions& global) {
  if (global.verbose) {
    for (const auto& item : summary.items) {
      std::cout << "  " << util::printable(item.model.string()) << ": "
                << (item.failed ? "failed" : outcome_name(item.outcome))
                << (item.detail.empty() ? "" : " (" + util::printable(item.detail) + ")") << "\n";
    }
  }
  for (const auto& item : summary.items) {
    if (!item.failed && item.outcome == CacheOutcome::bypass && !global.quiet) {
      std::cout << "bypassed " << util::printable(item.model.string()) << ": "
                << util::printable(item.detail) << "\n";
    }
  }
  if (!summary.cache_made.empty()) {
    std::cout << "cache: " << util::printable(summary.cache_made) << "\n";
  }
  if (summary.invalidated > 0) {
    std::cout << "invalidated " << summary.invalidated << " entries of other compiler versions\n";
  }
  if (summary.shard) {
    std::cout << shard_line(summary) << "\n";
  }
  std::cout << "populate: " << summary.compiled << " compiled, " << summary.cached
            << " already cached, " << summary.bypassed << " bypassed, " << summary.failed
            << " failed\n";
  if (summary.other_version_entries > 0 && !global.quiet) {
    std::cout << other_versions_note(summary.other_version_entries)
              << "; `npucc cache invalidate` removes them\n";
  }
}

// --shard K/N, or auto: from the environment.
PopulateShard shard_option(const std::string& text) {
  return text == "auto" ? pipeline::shard_from_environment(process_getenv)
                        : pipeline::parse_shard(text);
}

// What happened to one model, for populate's line per model.
const char* outcome_word(CacheOutcome outcome) {
  switch (outcome) {
  case CacheOutcome::hit:
    return "already cached";
  case CacheOutcome::bypass:
    return "bypassed";
  case CacheOutcome::miss:
  case CacheOutcome::disabled:
    break;
  }
  return "compiled";
}

} // namespace

std::function<int()> setup_populate(CLI::App& command, const GlobalOptions& global) {
  struct Args {
    std::vector<std::string> inputs;
    std::string models_file;
    std::string shard;
    unsigned jobs = 0;
    OptionValues options; // the table's compile and cache options given
    bool invalidate = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("MODEL_OR_DIR", args->inputs, ".onnx models, or folders searched for *.onnx");
  command.add_option("--models", args->models_file,
                     "a TOML file of [[model]] tables: path (relative to the file) and compile "
                     "options by config name (input_shape = [\"x:1,3,48,192\"], "
                     "accelerate_train_mode = \"fast|step|0.9\", ...) for that model only");
  command.add_option(
      "-j,--jobs", args->jobs,
      "use N cores: N models at once in worker processes, one core each (default: the CPU count)");
  CLI::Option* shard =
      command
          .add_option("--shard", args->shard,
                      "compile only shard K of N (K from 1: 1/4 to 4/4), split by a hash of each "
                      "model's path; auto: K and N from the CI's environment "
                      "(NPUCC_SHARD_INDEX/NPUCC_SHARD_COUNT, GitLab, Kubernetes, Slurm)")
          ->type_name("K/N|auto");
  using config::OptionGroup;
  add_table_options(command, args->options,
                    {OptionGroup::compile, OptionGroup::options_file, OptionGroup::cache,
                     OptionGroup::max_size, OptionGroup::digest_cache, OptionGroup::remote});
  command.add_flag("--invalidate", args->invalidate,
                   "first remove the entries of other compiler versions");
  command.add_flag("--json", args->json, "print a JSON summary");
  return [args, shard, &global] {
    util::install_interrupt_handlers();
    PopulateOptions options;
    for (const auto& input : args->inputs) {
      options.inputs.emplace_back(input);
    }
    if (args->inputs.empty() && args->models_file.empty()) {
      throw usage_error("cache populate: no models given",
                        "name .onnx files or folders (MODEL_OR_DIR), or --models FILE");
    }
    if (shard->count() > 0) {
      options.shard = shard_option(args->shard);
    }
    Config settings = load_settings(args->options);
    options.compile = config::build_compile_options(args->options, settings);
    if (!args->models_file.empty()) {
      options.models = read_models_file(args->models_file, args->options, settings);
    }
    options.jobs = args->jobs > 0 ? args->jobs : std::max(1u, std::thread::hardware_concurrency());
    options.invalidate_first = args->invalidate ? InvalidateFirst::yes : InvalidateFirst::no;
    bool bar = !args->json && !global.quiet && is_terminal(STDERR_FILENO);
    // Off a terminal (a CI log) a line per model instead of the bar: a long populate is
    // not silent there.
    bool lines = !args->json && !global.quiet && !bar;
    auto progress = [&](const PopulateItem& item, size_t finished, size_t total) {
      util::set_interrupt_progress(finished, total);
      if (bar) {
        draw_bar(finished, total, item.model.filename().string());
      }
      if (lines && !item.failed) {
        std::cout << "[" << finished << "/" << total << "] " << outcome_word(item.outcome) << " "
                  << util::printable(item.model.string()) << std::endl;
      }
      if (item.failed) {
        if (bar) {
          std::cerr << "\r\033[K";
        }
        std::cerr << "npucc: error: " << util::printable(item.detail) << "\n";
      }
      if (!item.remote_warning.empty()) {
        if (bar) {
          std::cerr << "\r\033[K";
        }
        std::cerr << "npucc: warning: " << util::printable(item.remote_warning) << "\n";
      }
    };
    PopulateSummary summary = populate_cache(resolve_cache_config(settings), options, progress);
    if (bar) {
      std::cerr << "\r\033[K" << std::flush;
    }
    if (args->json) {
      print_populate_json(summary);
    } else {
      print_populate_text(summary, global);
    }
    return summary.failed == 0 ? 0 : static_cast<int>(ExitStatus::error);
  };
}

} // namespace npucc::cli::cache_cli

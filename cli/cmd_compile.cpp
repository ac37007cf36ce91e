#include "accuracy/check.h"
#include "accuracy/drift_report.h"
#include "app.h"
#include "compile_options.h"
#include "output/manifest.h"
#include "npucc/cache.h"
#include "npucc/compile.h"
#include "precision/report.h"
#include "progress.h"
#include "report/drift_plot_file.h"
#include "util/file_io.h"
#include "util/interrupt.h"
#include "util/strings.h"
#include "util/test_point.h"

#include <chrono>
#include <iostream>
#include <set>

namespace npucc::cli {

namespace {

// The short precision report under the compile summary.
void print_precision_summary(const CompileResult& result) {
  if (result.precision_report.empty()) {
    return;
  }
  for (const auto& line :
       precision::format_precision_summary(nlohmann::json::parse(result.precision_report))) {
    std::cout << "  " << util::printable(line) << "\n"; // node names come from the model
  }
}

// The accuracy report under the compile summary, if the compile checked it.
void print_accuracy_summary(const CompileResult& result) {
  if (result.accuracy_report.empty()) {
    return;
  }
  for (const auto& line :
       accuracy::format_accuracy(nlohmann::json::parse(result.accuracy_report))) {
    std::cout << "  " << util::printable(line) << "\n"; // output names come from the model
  }
  if (!result.drift_report.empty()) {
    for (const auto& line : accuracy::format_drift(nlohmann::json::parse(result.drift_report))) {
      std::cout << "  " << util::printable(line) << "\n";
    }
  }
}

// With --json: a collapsing low graph's warnings (accuracy.warnings) on stderr.
void print_accuracy_warnings(const CompileResult& result) {
  if (result.accuracy_report.empty()) {
    return;
  }
  const auto report = nlohmann::json::parse(result.accuracy_report);
  auto warnings = report.find("warnings");
  if (warnings == report.end() || !warnings->is_array()) {
    return;
  }
  for (const auto& warning : *warnings) {
    if (warning.is_string()) {
      std::cerr << "npucc: warning: accuracy: " << util::printable(warning.get<std::string>())
                << "\n";
    }
  }
}

void print_seconds(double seconds) {
  std::cout << std::fixed;
  std::cout.precision(2);
  std::cout << seconds << " s";
}

// The graphs written, the precision summary, the passes and the memory plan: the same
// lines for a compile and for a hit (read back from the entry's manifest).
void print_result(const CompileOptions& options, const CompileResult& result) {
  for (const auto& graph : result.graphs) {
    std::cout << "  " << graph.role << "  " << graph.precision << "  "
              << util::printable((options.output_dir / graph.graph.file).string()) << "  "
              << util::format_bytes(graph.graph.bytes);
    for (const auto& data : graph.external_data) {
      std::cout << " + " << util::printable(data.file) << " " << util::format_bytes(data.bytes);
    }
    std::cout << "  sha256 " << graph.graph.sha256.substr(0, 12) << "\n";
  }
  print_precision_summary(result);
  print_accuracy_summary(result);
  std::vector<std::string> changed;
  for (const auto& pass : result.passes) {
    if (pass.changed > 0) {
      changed.push_back(pass.name + " " + std::to_string(pass.changed) + " " + pass.unit);
    }
  }
  std::cout << "  passes: "
            << (changed.empty() ? "nothing to change" : util::printable(util::join(changed, ", ")))
            << "\n";
  const auto& plan = result.memory_plan;
  if (plan.available) {
    std::cout << "  memory plan: arena " << util::format_bytes(plan.arena_bytes) << " for "
              << plan.tensors.size() << " tensors (lower bound "
              << util::format_bytes(plan.lower_bound_bytes) << ", unshared "
              << util::format_bytes(plan.unshared_bytes) << ")\n";
  } else {
    std::cout << "  memory plan: unavailable: " << util::printable(plan.reason) << "\n";
  }
}

void print_summary(const CompileOptions& options, const CompileResult& result, double seconds) {
  std::cout << "compiled " << util::printable(options.model_path.string()) << " -> "
            << util::printable(options.output_dir.string()) << " in ";
  print_seconds(seconds);
  std::cout << "\n";
  print_result(options, result);
}

size_t files_delivered(const CompileResult& result) {
  std::set<std::string> files{"manifest.json"};
  for (const auto& graph : result.graphs) {
    files.insert(graph.graph.file);
    for (const auto& data : graph.external_data) {
      files.insert(data.file); // weights.data once, though every graph refers to it
    }
  }
  return files.size();
}

// A hit compiled nothing: its first line says where the files came from and how they
// got to OUTDIR; the rest is the stored compile's summary.
void print_hit_summary(const CompileOptions& options, const CachedCompile& cached, double seconds) {
  std::cout << "from the cache: " << util::printable(options.model_path.string()) << " -> "
            << util::printable(options.output_dir.string()) << " in ";
  print_seconds(seconds);
  std::cout << ", " << files_delivered(cached.result) << " files of entry "
            << cached.key.substr(0, 12) << " " << util::printable(cached.reason) << "\n";
  print_result(options, cached.result);
}

// The cache's verdict and why (a hit: how the files got there; a miss: new key or a
// replaced corrupt entry; a bypass: the op that makes the model uncacheable).
std::string cache_line(const CachedCompile& cached) {
  std::string line = std::string("  cache: ") + outcome_name(cached.outcome);
  if (!cached.reason.empty()) {
    line += ": " + util::printable(cached.reason);
  }
  if (!cached.key.empty()) {
    line += " (key " + cached.key.substr(0, 12) + ")";
  }
  return line;
}

// How the key's inputs were known: by the digests recorded for them (no byte read), or
// hashed, and why (cache/input_digests.h).
std::string digests_line(const CachedCompile& cached) {
  size_t stamped = cached.digests_from_stamps;
  size_t hashed = cached.digests_hashed;
  auto files = [](size_t n) { return std::to_string(n) + (n == 1 ? " file" : " files"); };
  std::string line = "  input digests: ";
  if (stamped > 0) {
    line +=
        files(stamped) + " by recorded digest" + (hashed == 0 ? " (unchanged: no byte read)" : "");
  }
  if (hashed > 0) {
    line += std::string(stamped > 0 ? ", " : "") + files(hashed) + " hashed" +
            (hashed > 1 ? " (the first: " : " (") + util::printable(cached.why_hashed) + ")";
  }
  return line;
}

} // namespace

std::function<int()> setup_compile(CLI::App& command, const GlobalOptions& global) {
  auto args = std::make_shared<CompileCommandArgs>();
  add_compile_command_options(command, *args, CompileCommand::compile);
  return [args, &global] {
    util::install_interrupt_handlers();
    util::set_interrupt_progress(0, 1);
    CompileRequest request = make_compile_request(*args);
    const CompileOptions& options = request.options;
    Progress progress(global, "compile " + options.model_path.filename().string());
    LogSink log = progress.log_sink(global.verbose ? Verbose::yes : Verbose::no);
    auto start = std::chrono::steady_clock::now();
    util::test_point("cli:compiling");
    CachedCompile cached =
        compile_cached(options, request.cache, request.use, log, progress.write_progress());
    util::test_point("cli:compiled"); // the output is complete: an interrupt says 1 of 1
    progress.finish();
    const CompileResult& result = cached.result;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (args->json) {
      std::cout << util::read_file(result.manifest_path);
      print_accuracy_warnings(result); // the summary that holds them is not printed
    } else if (!global.quiet && cached.outcome == CacheOutcome::hit) {
      print_hit_summary(options, cached, seconds);
    } else if (!global.quiet) {
      print_summary(options, result, seconds);
    }
    if (!global.quiet) {
      (args->json ? std::cerr : std::cout) << cache_line(cached) << "\n";
      if (!cached.cache_made.empty()) {
        (args->json ? std::cerr : std::cout) << "  cache: " << util::printable(cached.cache_made)
                                             << "\n";
      }
      if (cached.digests_from_stamps + cached.digests_hashed > 0) {
        (args->json ? std::cerr : std::cout) << digests_line(cached) << "\n";
      }
    }
    if (!cached.remote_warning.empty()) {
      std::cerr << "npucc: warning: " << util::printable(cached.remote_warning) << "\n";
    }
    if (!cached.warning.empty()) {
      std::cerr << "npucc: warning: " << util::printable(cached.warning) << "\n";
    }
    if (!args->accuracy_plot.empty()) { // the graphs are written: the picture is drawn from them
      const std::string drawn = report::write_drift_plot_file(
          report::drift_report_of_output(options.output_dir), args->accuracy_plot);
      if (!global.quiet) {
        (args->json ? std::cerr : std::cout) << "  drift picture: " << util::printable(args->accuracy_plot)
                                             << " (" << drawn << ")\n";
      }
    }
    return 0;
  };
}

} // namespace npucc::cli

#include "app.h"

#include "compiler/manifest.h"
#include "npucc/compile.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <chrono>
#include <iostream>

namespace npucc::cli {

namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::string input_shape;
  bool external_data = false;
  std::string passes;
  bool json = false;
  std::string max_memory;
};

void print_summary(const CompileOptions& options, const CompileResult& result, double seconds) {
  std::cout << "compiled " << options.model_path.string() << " -> " << options.output_dir.string()
            << " in " << std::fixed;
  std::cout.precision(2);
  std::cout << seconds << " s\n";
  for (const auto& graph : result.graphs) {
    std::cout << "  " << graph.role << "  " << graph.precision << "  "
              << (options.output_dir / graph.graph.file).string() << "  "
              << util::format_bytes(graph.graph.bytes);
    for (const auto& data : graph.external_data) {
      std::cout << " + " << data.file << " " << util::format_bytes(data.bytes);
    }
    std::cout << "  sha256 " << graph.graph.sha256.substr(0, 12) << "\n";
  }
  std::vector<std::string> changed;
  for (const auto& pass : result.passes) {
    if (pass.changed > 0) {
      changed.push_back(pass.name + " " + std::to_string(pass.changed) + " " + pass.unit);
    }
  }
  std::cout << "  passes: " << (changed.empty() ? "nothing to change" : util::join(changed, ", "))
            << "\n";
  const auto& plan = result.memory_plan;
  if (plan.available) {
    std::cout << "  memory plan: arena " << util::format_bytes(plan.arena_bytes) << " for "
              << plan.tensors.size() << " tensors (lower bound "
              << util::format_bytes(plan.lower_bound_bytes) << ", unshared "
              << util::format_bytes(plan.unshared_bytes) << ")\n";
  } else {
    std::cout << "  memory plan: unavailable: " << plan.reason << "\n";
  }
}

} // namespace

std::function<int()> setup_compile(CLI::App& command, const GlobalOptions& global) {
  auto args = std::make_shared<CompileArgs>();
  command.add_option("MODEL", args->model, "the .onnx model to compile")->required();
  command.add_option("-o,--output", args->output, "folder to write the graph(s) and manifest.json to")
      ->required();
  command.add_option("--input-shape", args->input_shape,
                     "fix dynamic input dims: \"name:d0,d1,...;name2:...\" (-1 keeps a dim dynamic)");
  command.add_flag("--external-data", args->external_data,
                   "store weights in OUTDIR/<graph>.onnx.data (always done past 2 GiB)");
  command.add_option("--passes", args->passes,
                     "comma-separated passes to run instead of the default pipeline");
  command.add_flag("--json", args->json, "print the manifest as JSON instead of a summary");
  command.add_option("--max-memory", args->max_memory,
                     "refuse models whose data would take more memory (e.g. 8G; default: a "
                     "quarter of physical memory)");
  return [args, &global] {
    CompileOptions options;
    options.model_path = args->model;
    options.output_dir = args->output;
    if (!args->input_shape.empty()) {
      options.input_shapes = parse_input_shapes(args->input_shape);
    }
    if (!args->max_memory.empty()) {
      options.limits.max_memory_bytes = parse_memory_size(args->max_memory);
    }
    options.external_data = args->external_data ? ExternalData::always : ExternalData::automatic;
    if (!args->passes.empty()) {
      for (const auto& name : util::split(args->passes, ',')) {
        options.passes.emplace_back(util::trim(name));
      }
    }
    LogSink log;
    if (global.verbose) {
      log = [](const std::string& line) { std::cerr << "npucc: " << line << "\n"; };
    }
    auto start = std::chrono::steady_clock::now();
    CompileResult result = compile(options, log);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (args->json) {
      std::cout << util::read_file(result.manifest_path);
    } else if (!global.quiet) {
      print_summary(options, result, seconds);
    }
    return 0;
  };
}

} // namespace npucc::cli

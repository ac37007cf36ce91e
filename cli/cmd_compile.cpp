#include "app.h"

#include "compiler/manifest.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "precision/keep_dtype.h"
#include "precision/report.h"
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
  // precision
  std::string accelerate_train_mode;
  std::string precision_mode;
  std::string precision_mode_v2;
  std::string modify_mixlist;
  std::string keep_dtype;
  bool keep_io_types = true;
  bool low_precision_weights = false;
  bool emit_emulation = false;
};

void add_precision_options(CLI::App& command, CompileArgs& args) {
  command.add_option("--accelerate-train-mode", args.accelerate_train_mode,
                     "TYPE|TRIGGER[|RATIO], e.g. fast|step|0.9: also emit low.onnx (fast: "
                     "mixed float16, fast1: mixed bfloat16) and the switch schedule");
  command.add_option("--precision-mode", args.precision_mode,
                     "Ascend precision_mode (force_fp32, allow_fp32_to_fp16, force_fp16, "
                     "must_keep_origin_dtype, allow_mix_precision[_fp16|_bf16], "
                     "cube_fp16in_fp32out, allow_fp32_to_bf16); see npucc-compile(1)");
  command.add_option("--precision-mode-v2", args.precision_mode_v2,
                     "Ascend precision_mode_v2 (fp16, origin, cube_fp16in_fp32out, "
                     "mixed_float16, mixed_bfloat16)");
  command.add_option("--modify-mixlist", args.modify_mixlist,
                     "JSON file editing the mixed-precision lists: {\"black-list\"|"
                     "\"white-list\"|\"gray-list\": {\"to-add\": [ONNX ops], \"to-remove\": [...]}}");
  command.add_option("--keep-dtype", args.keep_dtype,
                     "file of node names (one per line) that keep their original precision");
  command.add_flag("--keep-io-types,!--no-keep-io-types", args.keep_io_types,
                   "keep graph input/output types in lowered graphs (default: on)");
  command.add_flag("--low-precision-weights", args.low_precision_weights,
                   "store trainable weights in the low type instead of float32 master weights");
  command.add_flag("--emit-emulation", args.emit_emulation,
                   "also write emulation.onnx: float32 ops with Cast round trips wherever "
                   "low.onnx holds float16/bfloat16");
}

void apply_precision_options(const CompileArgs& args, CompileOptions& options) {
  if (!args.accelerate_train_mode.empty()) {
    options.accelerate_train_mode = parse_accelerate_train_mode(args.accelerate_train_mode);
  }
  options.precision.precision_mode = args.precision_mode;
  options.precision.precision_mode_v2 = args.precision_mode_v2;
  auto read = [](const std::string& option, const std::string& path) {
    try {
      return util::read_file(path);
    } catch (const Error& e) {
      throw usage_error(option + " " + path + ": " + e.what());
    }
  };
  if (!args.modify_mixlist.empty()) {
    options.modify_mixlist = read("--modify-mixlist", args.modify_mixlist);
    options.modify_mixlist_source = args.modify_mixlist;
    if (options.modify_mixlist.empty()) {
      throw usage_error("--modify-mixlist " + args.modify_mixlist + ": the file is empty");
    }
  }
  if (!args.keep_dtype.empty()) {
    options.keep_dtype_nodes = precision::parse_keep_dtype(read("--keep-dtype", args.keep_dtype));
    if (options.keep_dtype_nodes.empty()) {
      throw usage_error("--keep-dtype " + args.keep_dtype + ": the file names no node");
    }
  }
  options.keep_io_types = args.keep_io_types;
  options.low_precision_weights = args.low_precision_weights;
  options.emit_emulation = args.emit_emulation;
}

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
  if (!result.precision_report.empty()) {
    for (const auto& line :
         precision::format_precision_summary(nlohmann::json::parse(result.precision_report))) {
      std::cout << "  " << line << "\n";
    }
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
  add_precision_options(command, *args);
  return [args, &global] {
    CompileOptions options;
    options.model_path = args->model;
    options.output_dir = args->output;
    if (!args->input_shape.empty()) {
      options.input_shapes = parse_input_shapes(args->input_shape);
    }
    options.external_data = args->external_data ? ExternalData::always : ExternalData::automatic;
    if (!args->passes.empty()) {
      for (const auto& name : util::split(args->passes, ',')) {
        options.passes.emplace_back(util::trim(name));
      }
    }
    apply_precision_options(*args, options);
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

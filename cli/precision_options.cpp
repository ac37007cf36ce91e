#include "precision_options.h"

#include "config_options.h"
#include "npucc/error.h"
#include "precision/keep_dtype.h"
#include "precision/report.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <iostream>

namespace npucc::cli {

void add_precision_options(CLI::App& command, PrecisionArgs& args) {
  auto setting = [&args](CLI::Option* option, const char* key) {
    note_empty_value(option, args.empty_settings, key);
  };
  setting(command.add_option("--accelerate-train-mode", args.accelerate_train_mode,
                             "TYPE|TRIGGER[|RATIO], e.g. fast|step|0.9: also emit low.onnx "
                             "(fast: mixed float16, fast1: mixed bfloat16) and the switch "
                             "schedule; '' turns it off"),
          "accelerate_train_mode");
  setting(command.add_option("--precision-mode", args.precision_mode,
                             "Ascend precision_mode (force_fp32, allow_fp32_to_fp16, force_fp16, "
                             "must_keep_origin_dtype, allow_mix_precision[_fp16|_bf16], "
                             "cube_fp16in_fp32out, allow_fp32_to_bf16); see npucc-precision(7)"),
          "precision_mode");
  setting(command.add_option("--precision-mode-v2", args.precision_mode_v2,
                             "Ascend precision_mode_v2 (fp16, origin, cube_fp16in_fp32out, "
                             "mixed_float16, mixed_bfloat16)"),
          "precision_mode_v2");
  setting(command.add_option("--modify-mixlist", args.modify_mixlist,
                             "JSON file editing the mixed-precision lists: {\"black-list\"|"
                             "\"white-list\"|\"gray-list\": {\"to-add\": [ONNX ops], "
                             "\"to-remove\": [...]}}"),
          "modify_mixlist");
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

void apply_precision_options(const PrecisionArgs& args, CompileOptions& options) {
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

void print_precision_summary(const CompileResult& result) {
  if (result.precision_report.empty()) {
    return;
  }
  for (const auto& line :
       precision::format_precision_summary(nlohmann::json::parse(result.precision_report))) {
    std::cout << "  " << util::printable(line) << "\n"; // node names come from the model
  }
}

} // namespace npucc::cli

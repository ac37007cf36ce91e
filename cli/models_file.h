#pragma once

#include "compile_options.h"
#include "npucc/cache.h"

#include <filesystem>
#include <string>
#include <vector>

// `npucc cache populate --models FILE`: the models to compile, each with its own compile
// options. FILE is TOML (src/config/toml_subset.h) of [[model]] tables:
//
//   [[model]]
//   path = "ocr/ppocr_cls.onnx"           # relative to FILE's folder, inside it
//   input_shape = ["x:1,3,48,192"]        # any compile option under its config name:
//   accelerate_train_mode = "fast|step|0.9"   # the long option without "--", "-" -> "_"
//
// The keys are the compile options of the option table (config/option_table.h), so an
// option added there is a key here too; --options FILE is the run's only. A value
// has the option's type: a string (a list option also takes an array of strings), an
// integer, or true/false for a flag. Values that name files are taken from FILE's
// folder. An option a table does not set is the command line's (then --options, NPUCC_*,
// config.toml). Every error names FILE:LINE.
namespace npucc::cli {

// `command_line` and `settings`: the run's options and settings, which a table's keys
// override for its model. Throws usage_error naming FILE:LINE.
std::vector<PopulateModel> read_models_file(const std::filesystem::path& file,
                                            const OptionValues& command_line,
                                            const Config& settings);

} // namespace npucc::cli

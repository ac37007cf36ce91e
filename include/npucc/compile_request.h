#pragma once

// `npucc compile`'s and `npucc cache`'s options for a program that takes them from its own
// user under the CLI's names (the Python module's keywords: npucc.compile(model, out,
// accelerate_train_mode="fast|step")), resolved as the CLI resolves them: the values given
// first, then --options, NPUCC_* variables, config.toml and the defaults (npucc/config.h),
// each checked with the CLI's one-line message naming the option ("--precision-mode: ...").
//
//   npucc::CompileRequest request = npucc::compile_request(
//       "model.onnx", "out", {{"accelerate-train-mode", "fast|step|0.9"}});
//   npucc::compile_cached(request.options, request.cache, request.use);

#include "npucc/cache_config.h"
#include "npucc/compile.h"
#include "npucc/config.h"

#include <filesystem>
#include <string>
#include <vector>

namespace npucc {

// One option by its long name without the dashes ("accelerate-train-mode", "no-cache") and
// its value as text: what follows the option on a command line, or "true" / "false" for a
// flag ("false" also overrides an NPUCC_* variable or config.toml that sets it).
struct OptionValue {
  std::string name;
  std::string value;
  // An empty value given on purpose (`--accelerate-train-mode ''`): the setting goes back
  // to its built-in default over every other source (CommandLineValue::given_empty).
  // Otherwise an empty value is as if the option were not given.
  bool given_empty = false;
};

// The option names compile_request() takes: every option of `npucc compile` but its output
// ones (--output, --json), in `npucc compile --help` order.
const std::vector<std::string>& compile_option_names();

// The option names cache_request() takes: the cache options every `npucc cache` command has.
const std::vector<std::string>& cache_option_names();

// An option as a front door that declares its own needs it (the Python keywords and
// their stub): the name and what its value is: "flag", "integer", "path", "size",
// "seconds", "train_mode", "names" (NAME,NAME,...), "shapes" (NAME:D0,D1;...) or "text".
struct OptionDescription {
  std::string name;
  std::string type;
};

// The named options, described, in the order given; throws npucc::Error for a name that
// is no option.
std::vector<OptionDescription> describe_options(const std::vector<std::string>& names);

struct CompileRequest {
  CompileOptions options; // model_path and output_dir set
  CacheConfig cache;
  CacheUse use = CacheUse::enabled; // disabled: --no-cache, NPUCC_CACHE_DISABLE, ...
  // What the CLI prints as "npucc: warning: ..." (Ascend keys npucc ignores, ...).
  std::vector<std::string> warnings;
};

// Throws usage_error for an unknown name, a flag that is not true/false or a bad value,
// and npucc::Error for a file that cannot be read (both name the option, as the CLI does).
CompileRequest compile_request(const std::filesystem::path& model,
                               const std::filesystem::path& output,
                               const std::vector<OptionValue>& values,
                               const GetEnv& getenv = process_getenv);

struct CacheRequest {
  CacheConfig cache;
  std::vector<std::string> warnings;
};

// The cache a `npucc cache` command with these options works on (Cache(request.cache)).
CacheRequest cache_request(const std::vector<OptionValue>& values,
                           const GetEnv& getenv = process_getenv);

} // namespace npucc

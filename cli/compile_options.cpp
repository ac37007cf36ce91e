#include "compile_options.h"

#include "util/strings.h"

namespace npucc::cli {

void add_compile_options(CLI::App& command, CompileArgs& args) {
  command.add_option(
      "--input-shape", args.input_shape,
      "fix dynamic input dims: \"name:d0,d1,...;name2:...\" (-1 keeps a dim dynamic)");
  command.add_flag("--external-data", args.external_data,
                   "store weights in OUTDIR/<graph>.onnx.data (always done past 2 GiB)");
  command.add_option("--passes", args.passes,
                     "comma-separated passes to run instead of the default pipeline");
  add_precision_options(command, args.precision);
}

CompileOptions make_compile_options(const CompileArgs& args) {
  CompileOptions options;
  if (!args.input_shape.empty()) {
    options.input_shapes = parse_input_shapes(args.input_shape);
  }
  options.external_data = args.external_data ? ExternalData::always : ExternalData::automatic;
  if (!args.passes.empty()) {
    for (const auto& name : util::split(args.passes, ',')) {
      options.passes.emplace_back(util::trim(name));
    }
  }
  apply_precision_options(args.precision, options);
  return options;
}

void add_cache_options(CLI::App& command, CacheArgs& args, MaxSizeOption max_size) {
  command.add_option("--cache-dir,--graph-compiler-cache-dir", args.dir,
                     "the compile cache folder (default: $NPUCC_CACHE_DIR, else "
                     "${XDG_CACHE_HOME:-~/.cache}/npucc)");
  if (max_size == MaxSizeOption::yes) {
    command.add_option("--max-size", args.max_size,
                       "keep the cache under this size after each store, least recently used "
                       "first (e.g. 10G; default: $NPUCC_CACHE_MAX_SIZE, else unbounded)");
  }
}

CacheConfig make_cache_config(const CacheArgs& args) {
  return resolve_cache_config(args.dir, args.max_size);
}

} // namespace npucc::cli

#pragma once

#include "npucc/compile.h"
#include "precision/compile_precision.h"

namespace npucc {

// A compile in two stages, so that a cache can look its key up in between while the
// key's hashing runs beside the first stage (cache/compile_cached.cpp).
// prepare_compile validates, optimises and builds the precision variants in memory;
// write_compile writes them and the manifest into options.output_dir (set
// options.cache_key first: the manifest records it). compile() is the two in a row.
struct PreparedCompile {
  Model model;
  CompileResult result;
  precision::PrecisionBuild variants;
};

PreparedCompile prepare_compile(Model model, const CompileOptions& options, const LogSink& log);
CompileResult write_compile(PreparedCompile prepared, const CompileOptions& options);

} // namespace npucc

#pragma once

#include "npucc/compile.h"
#include "precision/compile_precision.h"

#include <memory>

namespace npucc {

// A compile in two stages, so that a cache can look its key up in between while the
// key's hashing runs beside the first stage (pipeline/compile_cached.cpp).
// prepare_compile validates, optimises and builds the precision variants in memory;
// write_compile writes them and the manifest into options.output_dir (set
// options.cache_key first: the manifest records it). compile() is the two in a row.
struct PreparedCompile {
  Model model;
  CompileResult result;
  precision::PrecisionBuild variants;
};

// `overflow`: the weights' overflow counts a cache key's read made, for the precision
// rewrite (precision/overflow_prescan.h); it must outlive the call.
PreparedCompile prepare_compile(Model model, const CompileOptions& options, const LogSink& log,
                                const precision::OverflowSource& overflow = {});
// Builds prepared.variants again from the optimised model (after a wrong speculation:
// precision::OverflowAssumption).
void rebuild_variants(PreparedCompile& prepared, const CompileOptions& options,
                      const precision::OverflowSource& overflow);
CompileResult write_compile(PreparedCompile prepared, const CompileOptions& options);

// write_compile begun early: the graphs are written on up to thread_budget() threads
// into a staging folder beside options.output_dir while the caller goes on (a cache looks
// its key up meanwhile). finish() waits for them, writes the manifest (options.cache_key
// set by then) and publishes. abandon() or destruction stops the writers within a
// buffer's worth and removes what they wrote. The caller forks no child (the isolated
// checker) while the writers run: they take locks and allocate.
class GraphWriting {
public:
  GraphWriting(PreparedCompile prepared, const CompileOptions& options);
  ~GraphWriting();
  GraphWriting(const GraphWriting&) = delete;
  GraphWriting& operator=(const GraphWriting&) = delete;

  CompileResult finish(const CompileOptions& options);
  // Stops the writers and hands the prepared compile back, as prepared.
  PreparedCompile abandon();

private:
  struct State;
  std::unique_ptr<State> m_state;
};

} // namespace npucc

#pragma once

#include "compiler/overflow_counts.h"
#include "npucc/cache_key.h"
#include "npucc/compile.h"
#include "npucc/file_identity.h"
#include "precision/compile_precision.h"

#include <map>
#include <memory>

namespace npucc {

// A compile in two stages, so that a cache can look its key up in between while the
// key's hashing runs beside the first stage (pipeline/compile_cached.cpp).
// prepare_compile validates, optimises and builds the precision variants in memory;
// write_compile writes them and the manifest into options.output_dir (the manifest records
// the cache key and its components, if any). compile() is the two in a row.
struct PreparedCompile {
  Model model;
  CompileResult result;
  precision::PrecisionBuild variants;
  // The low-graph nodes the accuracy repair kept float32 (accuracy/compile_check.h).
  std::vector<std::string> accuracy_kept_nodes;
  // The low-graph nodes the activation-range rule kept float32, with the numbers.
  std::map<std::string, std::string> activation_range_nodes;
  // The deny-list nodes the accuracy descent lowered (accuracy/descent.h).
  std::vector<std::string> accuracy_lowered_nodes;
};

// `counts`: the weights' overflow counts a read of the input files made, for the precision
// rewrite (compiler/overflow_counts.h); null: the rewrite counts them itself.
PreparedCompile prepare_compile(Model model, const CompileOptions& options, const LogSink& log,
                                const compiler::OverflowCounts* counts = nullptr);
// Builds prepared.variants again from the optimised model (after a wrong speculation:
// OverflowCounts::speculation_held).
void rebuild_variants(PreparedCompile& prepared, const CompileOptions& options,
                      const compiler::OverflowCounts* counts);
// A compile's result, and for the cache's store, each file as its writer left it (by file
// name): while a file still looks so, the store takes the writer's digest instead of
// reading the file again. Neither the key nor these are for the library's users.
struct WrittenCompile {
  CompileResult result;
  std::map<std::string, FileIdentity> written_as;
};
// `model_sha256`: as for GraphWriting::finish.
WrittenCompile write_compile(PreparedCompile prepared, const CompileOptions& options,
                             const CacheKey& cache_key, const WriteProgress& progress = {},
                             const std::string& model_sha256 = {});

// write_compile begun early: the graphs are written on up to thread_budget() threads
// into a staging folder beside options.output_dir while the caller goes on (a cache looks
// its key up meanwhile). finish() waits for them, writes the manifest (with the key,
// known by then) and publishes. abandon() or destruction stops the writers within a
// buffer's worth and removes what they wrote. The caller forks no child (the isolated
// checker) while the writers run: they take locks and allocate.
class GraphWriting {
public:
  GraphWriting(PreparedCompile prepared, const CompileOptions& options);
  ~GraphWriting();
  GraphWriting(const GraphWriting&) = delete;
  GraphWriting& operator=(const GraphWriting&) = delete;

  // `progress` hears of the bytes written while it waits. `model_sha256`, when not empty:
  // the model file's digest, taken beside the writing (the manifest's model.sha256).
  WrittenCompile finish(const CompileOptions& options, const CacheKey& cache_key,
                        const WriteProgress& progress = {}, const std::string& model_sha256 = {});
  // Stops the writers and hands the prepared compile back, as prepared.
  PreparedCompile abandon();

private:
  struct State;
  std::unique_ptr<State> m_state;
};

} // namespace npucc

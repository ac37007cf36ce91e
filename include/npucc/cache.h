#pragma once

// The compile cache (SPEC §3): a content-addressed store of everything one compile
// emits, keyed by a SHA-256 over the model, its external data, the output-changing
// options, the compiler version and the cache format. Maintenance (ls, verify,
// invalidate, purge, stats) is npucc/cache_maintenance.h.

#include "npucc/cache_config.h"
#include "npucc/cache_key.h"
#include "npucc/compile.h"
#include "npucc/config.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace npucc {

// The key of compiling options.model_path with `options` (reads the model).
CacheKey explain_cache_key(const CompileOptions& options);

enum class CacheOutcome { hit, miss, bypass, disabled };
const char* outcome_name(CacheOutcome outcome);

struct CachedCompile {
  CompileResult result;
  CacheOutcome outcome = CacheOutcome::disabled;
  // hit: how the files were materialised; miss: "new key" or "corrupt entry replaced
  // (...)"; bypass: the op and node that make the model uncacheable.
  std::string reason;
  std::string key;
  // Set when the compile succeeded but storing it did not (a full disk): the output is
  // good, the cache unchanged.
  std::string warning;
  // One line when the remote tier failed or sent a bad entry (the compile went on
  // locally); empty otherwise.
  std::string remote_warning;
  // How the key's input files (the model, its external data) were known: by the digests
  // recorded for them as they are (cache.digest_cache: no byte read), or hashed; why the
  // first hashed one was.
  size_t digests_from_stamps = 0;
  size_t digests_hashed = 0;
  std::string why_hashed;
  // Set when this compile made the cache folder a cache (it was empty, or the default
  // folder was missing): one line saying so.
  std::string cache_made;
};

// compile() through the cache: a hit materialises the entry's files into
// options.output_dir (as config.link_mode says) with no compile work; a miss compiles and
// stores the result; a model with uncacheable (resource) ops compiles and is not stored. Counts
// hits, misses and bypasses in the cache's statistics. Throws npucc::Error like compile().
// `write_progress` hears how the write of the compiled graphs goes (compile.h).
CachedCompile compile_cached(const CompileOptions& options, const CacheConfig& config, CacheUse use,
                             const LogSink& log = {}, const WriteProgress& write_progress = {});

// `npucc cache populate`: compile every model not yet cached, for CI.
enum class InvalidateFirst { no, yes };

// A model with options of its own (`cache populate --models FILE`).
struct PopulateModel {
  std::filesystem::path path;
  CompileOptions compile; // model_path and output_dir are set by populate_cache
  // What the shard split hashes: the path as written in the models file, the same on
  // every machine wherever the checkout is (empty: `path`).
  std::string shard_key;
};

// `cache populate --shard K/N`: this run compiles only the models of shard K of N, so N
// machines of a CI matrix each compile about 1/N (src/pipeline/populate_shard.h).
struct PopulateShard {
  unsigned index = 0; // 0-based: shard K of the command line is index K - 1
  unsigned count = 1;
  std::string source; // where it came from, for the summary: "--shard", "CI_NODE_INDEX/..."
};

struct PopulateOptions {
  std::vector<std::filesystem::path> inputs; // .onnx files, or folders searched for *.onnx
  CompileOptions compile;                    // model_path and output_dir are set per model
  std::vector<PopulateModel> models;         // after the inputs' models, each its own options
  unsigned jobs = 1;
  InvalidateFirst invalidate_first = InvalidateFirst::no;
  std::optional<PopulateShard> shard; // none: every model
};

struct PopulateItem {
  std::filesystem::path model;
  CacheOutcome outcome = CacheOutcome::miss; // miss: compiled and stored; hit: already cached
  bool failed = false;
  std::string detail;         // the error, the bypass reason, or a store warning
  std::string remote_warning; // CachedCompile::remote_warning
};

struct PopulateSummary {
  size_t compiled = 0;
  size_t cached = 0;
  size_t bypassed = 0;
  size_t failed = 0;
  size_t invalidated = 0;           // with InvalidateFirst::yes
  size_t other_version_entries = 0; // left in the cache, for the report
  std::vector<PopulateItem> items;  // in input order; with a shard, its models only
  std::optional<PopulateShard> shard;
  size_t models_total = 0; // every model given, this shard's and the others'
  // "made DIR an npucc cache (the folder was empty)" when populate made the cache folder
  // one, as a compile does; empty otherwise.
  std::string cache_made;
};

// Called in the calling process after each model, in completion order. With jobs > 1 the
// compiles run in forked worker processes (the caller must then be single-threaded, else
// they run one at a time in the caller).
using PopulateProgress =
    std::function<void(const PopulateItem& item, size_t finished, size_t total)>;

// The models found in `inputs` (files as given, folders searched recursively for
// *.onnx, sorted); throws npucc::Error for a missing input or an empty folder list.
std::vector<std::filesystem::path> find_models(const std::vector<std::filesystem::path>& inputs);

PopulateSummary populate_cache(const CacheConfig& config, const PopulateOptions& options,
                               const PopulateProgress& progress = {});

} // namespace npucc

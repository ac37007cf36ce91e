#pragma once

// The compile cache (SPEC §3): a content-addressed store of everything one compile
// emits, keyed by a SHA-256 over the model, its external data, the output-changing
// options, the compiler version and the cache format. Maintenance (ls, verify,
// invalidate, purge, stats) lives in src/cache/local_storage.h.

#include "npucc/compile.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace npucc {

// One input of the key, hashed on its own, so `npucc cache explain` can show which
// one differs between two runs that miss each other.
struct KeyComponent {
  std::string name;   // format, compiler, model, external, options
  std::string digest; // SHA-256 of the component's canonical bytes
  std::string value;  // readable form (the version, the options JSON, sizes)
};

struct CacheKey {
  std::string key; // 64 lower-case hex digits
  std::vector<KeyComponent> components;
};

// The key of compiling options.model_path with `options` (reads the model).
CacheKey explain_cache_key(const CompileOptions& options);

enum class CacheDirSource { option, environment, default_location };

// The shared remote tier (--remote-cache URL; src/cache/remote/): a local miss looks it
// up, a remote hit is imported into the local cache, a local compile is uploaded unless
// read-only. An empty URL: no remote tier.
struct RemoteCacheConfig {
  std::string url; // http://host:port/path or redis://host:port/db
  bool read_only = false;
  double connect_timeout = 2.0; // seconds to connect
  double timeout = 5.0;         // seconds without progress before a transfer is abandoned
};

struct CacheConfig {
  std::filesystem::path dir;
  CacheDirSource source = CacheDirSource::default_location;
  // Enforced after each store, least recently used first; unset: unbounded.
  std::optional<uint64_t> max_size;
  // NPUCC_CACHE_DISABLE / `disable = true` in config.toml: as --no-cache.
  bool disabled = false;
  RemoteCacheConfig remote;
};

// The directory is `dir_option`, else $NPUCC_CACHE_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/npucc; the size limit `max_size_option`, else
// $NPUCC_CACHE_MAX_SIZE. Throws usage_error on a bad size.
CacheConfig resolve_cache_config(const std::string& dir_option, const std::string& max_size_option);

// Makes sure the cache directory can be used: the default one is created on first use
// (with a CACHEDIR.TAG); an explicitly configured one must exist (as Ascend's
// graph_compiler_cache_dir), else an error naming it and the fix. Returns the path.
std::filesystem::path open_cache_dir(const CacheConfig& config);

// `npucc cache init DIR`: creates DIR (and parents) with the cache layout and CACHEDIR.TAG.
void init_cache_dir(const std::filesystem::path& dir);

// "10G", "512M", "1.5GiB", "4096" (bytes). Decimal k/M/G/T, binary Ki/Mi/Gi/Ti.
uint64_t parse_size(const std::string& text);
// "7d", "12h", "30m", "45s" -> seconds.
int64_t parse_age(const std::string& text);

enum class CacheUse { enabled, disabled };
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
};

// compile() through the cache: a hit materialises the entry's files into
// options.output_dir (reflink, else a hard link to the read-only cache file, else a
// copy) with no compile work; a miss compiles and stores the result; a model with
// uncacheable (resource) ops compiles and is not stored. Counts hits, misses and
// bypasses in the cache's statistics. Throws npucc::Error like compile().
CachedCompile compile_cached(const CompileOptions& options, const CacheConfig& config, CacheUse use,
                             const LogSink& log = {});

// `npucc cache populate`: compile every model not yet cached, for CI.
enum class InvalidateFirst { no, yes };

struct PopulateOptions {
  std::vector<std::filesystem::path> inputs; // .onnx files, or folders searched for *.onnx
  CompileOptions compile;                    // model_path and output_dir are set per model
  unsigned jobs = 1;
  InvalidateFirst invalidate_first = InvalidateFirst::no;
};

struct PopulateItem {
  std::filesystem::path model;
  CacheOutcome outcome = CacheOutcome::miss; // miss: compiled and stored; hit: already cached
  bool failed = false;
  std::string detail; // the error, the bypass reason, or a store warning
  std::string remote_warning; // CachedCompile::remote_warning
};

struct PopulateSummary {
  size_t compiled = 0;
  size_t cached = 0;
  size_t bypassed = 0;
  size_t failed = 0;
  size_t invalidated = 0;           // with InvalidateFirst::yes
  size_t other_version_entries = 0; // left in the cache, for the report
  std::vector<PopulateItem> items;  // in input order
};

// Called after each model, from worker threads (serialised by populate).
using PopulateProgress =
    std::function<void(const PopulateItem& item, size_t finished, size_t total)>;

// The models found in `inputs` (files as given, folders searched recursively for
// *.onnx, sorted); throws npucc::Error for a missing input or an empty folder list.
std::vector<std::filesystem::path> find_models(const std::vector<std::filesystem::path>& inputs);

PopulateSummary populate_cache(const CacheConfig& config, const PopulateOptions& options,
                               const PopulateProgress& progress = {});

} // namespace npucc

#pragma once

// The compile cache (SPEC §3): a content-addressed store of everything one compile
// emits, keyed by a SHA-256 over the model, its external data, the output-changing
// options, the compiler version and the cache format. Maintenance (ls, verify,
// invalidate, purge, stats) is npucc/cache_maintenance.h.

#include "npucc/compile.h"
#include "npucc/config.h"

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

// Something the request gave that the key leaves out, and why: the schedule (its trigger
// and ratio change no byte of a graph, so the manifest states them when an entry is
// materialised) and options that are no-ops on this model (compiler/key_options.h).
struct KeyOmission {
  std::string name;  // "schedule", "input_shapes", "target_opset", "passes"
  std::string value; // as the request gave it
  std::string why;   // e.g. "equal to the model's declared shape: not part of the key"
};

struct CacheKey {
  std::string key; // 64 lower-case hex digits
  std::vector<KeyComponent> components;
  std::vector<KeyOmission> not_in_key;
};

// The key of compiling options.model_path with `options` (reads the model).
CacheKey explain_cache_key(const CompileOptions& options);

// read_only: hits are used, misses compile into the output folder only; nothing in the
// cache is created, changed or removed (no entry, no statistics, no lock file).
enum class CacheAccess { read_write, read_only };

// Who may use what npucc writes into the cache (cache.shared):
//   none  - private to the writing user: folders 0700 (mutable files 0600);
//   group - a group's shared cache: folders 02770 (setgid, so the group is inherited),
//           mutable files (statistics, locks) 0660, whatever the writer's umask;
//   world - readable by everyone, writable by the writer only: folders 0755, files 0644
//           (one publisher, e.g. CI, and read-only consumers under other user ids);
//   automatic - group when the cache folder itself is setgid and group-writable (as
//           `npucc cache init --shared group` leaves it), else none.
// Entry files are 0444 in every mode (outputs hard-linked to them, LinkMode::hardlink
// below, stay readable by the user's tools); the folders above them decide who can reach
// them.
enum class CacheSharing { automatic, none, group, world };
// "auto", "no", "group", "world".
const char* cache_sharing_name(CacheSharing sharing);
// Throws usage_error for anything else, naming `where`.
CacheSharing parse_cache_sharing(const std::string& text, const std::string& where);
// How a hit's files (and a miss's outputs) are shared between the output folder and the
// cache entry (cache.link_mode). A reflink (copy-on-write) is used first in every mode
// where the filesystem can share blocks: it is a copy to whoever writes.
//   automatic - copies, except hard links to entry files the user cannot change (owned by
//           another user, read-only, and the user not root): no edit of an output can then
//           reach the entry. In a cache of one's own this means copies;
//   copy      - always copies: each output is the user's own file, writable;
//   hardlink  - hard links where possible (the fastest hit: no byte is written); an output
//           edited in place (after a chmod, or by root) edits the entry and every other
//           output linked to it, which the next hit finds corrupt.
// External data files are copied in every mode (ONNX Runtime refuses a data file with more
// than one link), and a read-only cache is never linked to.
enum class LinkMode { automatic, copy, hardlink };
// "auto", "copy", "hardlink".
const char* link_mode_name(LinkMode mode);
// Throws usage_error for anything else, naming `where`.
LinkMode parse_link_mode(const std::string& text, const std::string& where);
// Whether a compile trusts the digests recorded beside its input files' inode, size and
// times (cache.digest_cache; src/cache/input_digests.h has the rules), so that compiling an
// unchanged model again reads none of its bytes:
//   automatic - on local disk file systems (ext4, xfs, btrfs, tmpfs, overlay, ...), not on
//           network ones (NFS, SMB, Ceph, Lustre), FUSE or FAT-like ones;
//   on        - on every file system;
//   off       - never: every input is hashed each time.
enum class DigestCacheMode { automatic, on, off };
// "auto", "on", "off".
const char* digest_cache_mode_name(DigestCacheMode mode);
// Throws usage_error for anything else, naming `where`.
DigestCacheMode parse_digest_cache_mode(const std::string& text, const std::string& where);
// The cache settings of a Config (npucc/config.h), typed: resolve_cache_config() below.
struct CacheConfig {
  std::filesystem::path dir;
  // Where `dir` came from. SettingSource::built_in is the default per-user folder, the only
  // one npucc creates by itself; dir_origin names the source in messages ("--cache-dir",
  // "NPUCC_CACHE_DIR", "/home/u/.config/npucc/config.toml:3"; "" for the default).
  SettingSource dir_source = SettingSource::built_in;
  std::string dir_origin;
  // Enforced after each store, least recently used first; unset: unbounded.
  std::optional<uint64_t> max_size;
  // NPUCC_CACHE_DISABLE / `disable = true` in config.toml: as --no-cache.
  bool disabled = false;
  // NPUCC_CACHE_READ_ONLY / `read_only = true` / --read-only.
  CacheAccess access = CacheAccess::read_write;
  // NPUCC_CACHE_SHARED / `shared = "group"` / --cache-shared.
  CacheSharing sharing = CacheSharing::automatic;
  // NPUCC_CACHE_LINK_MODE / `link_mode = "copy"` / --link-mode.
  LinkMode link_mode = LinkMode::automatic;
  // NPUCC_DIGEST_CACHE / `digest_cache = "off"` / --digest-cache.
  DigestCacheMode digest_cache = DigestCacheMode::automatic;
  // NPUCC_CACHE_KEY_FILE / `key_file` / --cache-key-file: sign entries written and reject
  // entries read without a valid signature (src/cache/entry_signature.h). Empty: none.
  std::filesystem::path key_file;
  RemoteCacheConfig remote;
};

// The cache settings of `config` (every source, npucc/config.h has the order), with the
// source of each kept for messages. Throws usage_error naming the source of a bad value.
CacheConfig resolve_cache_config(const Config& config);

// Makes sure the cache directory can be used: the default one is created on first use
// (with a CACHEDIR.TAG); an explicitly configured one must exist (as Ascend's
// graph_compiler_cache_dir), else an error naming it and the fix, and an empty one becomes
// a cache on first use, as `npucc cache init` would make it. A read-only cache is never
// created or changed: it must exist. Returns the path.
//
// Nothing is written into a folder that is not an npucc cache (is_npucc_cache) and holds
// anything: such a folder is "not an npucc cache: DIR (it is not empty ...)". Only
// CacheIntent::compile creates a cache: in an empty folder, or in the default one where
// it is missing; CacheIntent::read writes nothing at all, not even missing layout folders.
enum class CacheIntent { read, modify, compile };
std::filesystem::path open_cache_dir(const CacheConfig& config,
                                     CacheIntent intent = CacheIntent::compile);

// A cache: CACHEDIR.TAG (a regular file) that starts with the CACHEDIR signature line and
// npucc's own line, and entries/ as a real folder. Caches of earlier npucc versions have both.
bool is_npucc_cache(const std::filesystem::path& dir);

// `npucc cache init DIR`: creates DIR (and parents) with the cache layout and CACHEDIR.TAG.
// DIR must be missing, empty or already a cache (re-running init changes its sharing);
// anything else is "not an npucc cache" and nothing is written.
// With CacheSharing::group, DIR and its layout folders are made setgid and group-writable
// (02770), so later writers follow suit automatically.
void init_cache_dir(const std::filesystem::path& dir,
                    CacheSharing sharing = CacheSharing::automatic);

// Sizes: parse_size_setting in npucc/config.h.
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

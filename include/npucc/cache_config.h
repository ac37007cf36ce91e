#pragma once

// The compile cache's own settings and folder: how it is shared, linked to and trusted
// (CacheConfig), and opening, recognising and creating a cache folder. The storage layer
// (src/cache) needs these and nothing of compiling: the cached compile itself and its key
// are npucc/cache.h, maintenance (ls, verify, invalidate, purge, stats)
// npucc/cache_maintenance.h.

#include "npucc/setting_source.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace npucc {

// The shared remote tier (--remote-cache URL; src/cache/remote/): a local miss looks it
// up, a remote hit is imported into the local cache, a local compile is uploaded unless
// read-only. An empty URL: no remote tier.
struct RemoteCacheConfig {
  std::string url; // http://host:port/path or redis://host:port/db
  bool read_only = false;
  double connect_timeout = 2.0; // seconds to connect
  double timeout = 60.0;        // seconds a whole transfer may take (its total deadline)
  // Authentication (src/cache/remote/credentials.h): files that hold the secrets, read
  // when the transport is made, never the secrets themselves (those stay out of ps and
  // `config show`). Empty: none.
  std::filesystem::path token_file;       // HTTP bearer token / Redis password
  std::filesystem::path credentials_file; // USER:PASSWORD: HTTP basic / Redis ACL user
  std::filesystem::path ca_file;          // https: the certificates to trust
  std::filesystem::path client_cert;      // https: a client certificate and its key
  std::filesystem::path client_key;
};

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

// Whether a compile uses the cache at all: disabled is --no-cache, NPUCC_CACHE_DISABLE or
// `disable = true` (CacheConfig::disabled).
enum class CacheUse { enabled, disabled };

// Sizes: parse_size_setting in npucc/config.h.
// "7d", "12h", "30m", "45s" -> seconds.
int64_t parse_age(const std::string& text);

} // namespace npucc

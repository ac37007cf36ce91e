#pragma once

#include "cache/entry_signature.h"
#include "npucc/cache_config.h"
#include "util/file_stamp.h"

#include <filesystem>
#include <optional>
#include <set>
#include <string>

// The input digest cache: the SHA-256 of each input file (a model, its external data) kept
// beside the file's stamp (util/file_stamp.h), so that compiling an unchanged model again
// reads none of its bytes (as ccache's inode cache and git's index do):
//
//   CACHE_DIR/digests/<kk>/<id>   id = SHA-256 of ("npucc-input-stamp 1 " stamp_text
//                                 [" user " UID])    ; the user part only when unsigned
//   "npucc-input-digest 1" LF "stamp " stamp_text LF "sha256 " HEX LF "recorded " NS LF
//   ["hmac-sha256 " 64HEXDIG LF]  ; with a cache key: record_mac over the lines above
//
// A recorded digest decides which entry a user receives, so it is used only when it is
// authentic (issue 30): with a cache key, only when its MAC checks (written by a key
// holder; shared by all of them); without one, only when it is the user's own file and
// nobody else may write it (each user keeps their own, under an id with their uid; a
// group member can delete it, costing a re-hash, but cannot make it the user's). Any
// other is not used: the file is hashed.
//
// When a digest is recorded and used, and why:
// - recorded only when the file's ctime is k_racy_margin_ns or more before its hashing
//   began: a write within the file system's time granularity of that moment could leave
//   the times as they were (git's "racy" entries). A model written a moment ago is
//   hashed again until it is that old;
// - recorded only when the stamp is the same after hashing as before (a writer meanwhile);
// - used only when the whole stamp matches, ctime included: `touch -r` puts an mtime
//   back but sets the ctime to now, a file renamed over brings its own inode and ctime;
// - not used when the clock now reads earlier than when it was recorded: the clock went
//   back, and a write meanwhile may have been given times already seen;
// - neither on a file system whose stamps cannot be trusted (util::file_system_of) unless
//   the mode is `on`, nor at all when it is `off` (cache.digest_cache).
// What a stamp cannot see (a write through a shared mapping not yet flushed, a disk's bit
// rot) `cache verify` cannot either: it checks entries, not inputs. `--digest-cache off`
// hashes every input every time.
//
// Beside them, a hint for files no digest can be used for (touched since, a fresh checkout):
//
//   CACHE_DIR/digests/<kk>/<id>   id = SHA-256 of ("npucc-input-sample 1 " SAMPLE)
//   "npucc-input-sample 1" LF "sample " SAMPLE LF "sha256 " HEX LF
//
// SAMPLE is the SHA-256 of the file's size and 64 blocks of 4 KiB spread over it
// (sample_of), HEX the digest of the whole file last seen with that sample. A hint never
// stands for a digest: it only says which digest the file most likely has, so that a
// cached compile can tell a likely hit (hash the model first, compile nothing) from a
// likely miss (hash it beside the compile: pipeline/cache_lookup.cpp). A wrong or forged
// hint costs time, never a wrong entry: the key is always the hashed digest's.
namespace npucc::cache {

class LocalStorage;

inline constexpr int64_t k_racy_margin_ns = int64_t{2} * 1000000000;

struct InputDigest {
  std::string sha256;
  bool from_stamp = false;
  std::string why_hashed; // when hashed: "no recorded digest matches its stamp", ...
};

// How the digests of one compile's inputs were found, for its summary: each file once
// (a miss after the lookup by model index reads the external data again, for the compile).
struct DigestTally {
  size_t from_stamp = 0;
  size_t hashed = 0;
  std::string why_hashed; // of the first one hashed
  // `file`: its device and inode; nullopt for a file counted without a descriptor.
  void count(const InputDigest& digest, std::optional<std::pair<uint64_t, uint64_t>> file);

private:
  std::set<std::pair<uint64_t, uint64_t>> m_counted;
};

// What is wrong with the file at `path` (in digests/) as a digest file, for `cache
// verify`: empty when nothing. With a key, a signed digest whose MAC does not check is
// wrong; an unsigned one is a keyless user's own, never used with the key. A well-formed
// sample hint is in order.
std::string input_digest_problem(const std::filesystem::path& path,
                                 const std::optional<SigningKey>& key);

class InputDigests {
public:
  // Without storage: nothing recorded, nothing looked up (a compile without the cache).
  InputDigests(const LocalStorage* storage, DigestCacheMode mode);

  // The digest recorded for the open file `fd` when its stamp matches and may be trusted
  // (counted as found by stamp), or why it must be hashed (not counted: record() does).
  InputDigest use_recorded(int fd);
  // What use_recorded() would find for `fd`, for `cache explain`: counts nothing.
  InputDigest look_up(int fd) const;
  // For a file hashed (key/input_digest.h, pipeline::KeyHashing), `before` and
  // `started` taken before its first byte was read: counts it as hashed (`why`), and
  // records `sha256` when the file may be trusted and looks as it did before.
  void record(int fd, const util::FileStamp& before, int64_t started_ns, const std::string& sha256,
              const std::string& why);

  // The digest the open file `fd` most likely has, by its sampled bytes (the hint above);
  // nullopt without one, or without the cache. Never a digest to key by.
  std::optional<std::string> likely_digest(int fd) const;
  // Records `sha256`, the digest of the open file `fd`, as its sample's hint, unless the
  // same is recorded already (or the cache is read-only).
  void record_likely_digest(int fd, const std::string& sha256) const;

  // Counts a file hashed where no descriptor was at hand (read with the model).
  void count_hashed(const std::string& why);
  const DigestTally& tally() const { return m_tally; }

private:
  // Why a stamp may not be used or recorded for `fd`; empty when it may.
  std::string why_untrusted(int fd) const;
  // The digest recorded for a file that looks like `stamp`, or why there is none to use.
  InputDigest recorded_for(const util::FileStamp& stamp) const;
  // Records `sha256`, hashed from `started_ns` on, unless the file changed too near that
  // moment (or the cache is read-only).
  void store_unless_racy(const util::FileStamp& stamp, int64_t started_ns,
                         const std::string& sha256) const;
  void store(const util::FileStamp& stamp, const std::string& sha256) const;

  const LocalStorage* m_storage;
  DigestCacheMode m_mode;
  DigestTally m_tally;
};

} // namespace npucc::cache

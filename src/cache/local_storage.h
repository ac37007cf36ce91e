#pragma once

#include "cache/entry_signature.h"
#include "cache/model_index.h"
#include "cache/stats.h"
#include "cache/storage.h"

#include <functional>
#include <map>
#include <optional>
#include <sys/types.h>
#include <vector>

// The local cache directory:
//
//   CACHE_DIR/CACHEDIR.TAG                  marks the folder as a cache (backup tools skip it)
//   CACHE_DIR/entries/<kk>/<key>/           one published entry: entry.npucc + its files
//                                           (+ entry.sig when signed: entry_signature.h)
//   CACHE_DIR/blobs/<kk>/<sha256>           external data (weights) by content, hard-linked
//                                           into each entry that holds it (blob_store.h)
//   CACHE_DIR/models/<kk>/<sha256>          a model's external data locations and what its key
//                                           needs of it (model_index.h): a hit need not parse it
//   CACHE_DIR/stamps/<kk>/<key>             inode, size and times of an entry's files when last
//                                           hashed: while they match, a hit skips the hashing
//   CACHE_DIR/digests/<kk>/<id>             an input file's SHA-256 by its inode, size and times
//                                           (input_digests.h): an unchanged model is not re-read
//   CACHE_DIR/tmp/                          staging folders and trash; stale after an hour
//   CACHE_DIR/lock/                         flock files (stats, cleanup)
//   CACHE_DIR/stats                         counters (stats.h)
//
// <key> is 64 hex digits and <kk> its first two. An entry is built in tmp/ and renamed
// into entries/ whole, so it is either absent or complete; it is removed by renaming it
// back into tmp/ first. Nothing in the cache is opened through a symlink: a planted link
// is reported as stray and removed (the link, never its target).
//
// Folders and mutable files are created with the modes of the cache's CacheSharing
// (npucc/cache.h); a read-only LocalStorage creates, changes and removes nothing.
namespace npucc::cache {

enum class EntryState { ok, other_version, corrupt, incomplete, foreign };
const char* entry_state_name(EntryState state);

struct EntryInfo {
  std::string key; // its folder: LocalStorage::entry_dir(key)
  EntryState state = EntryState::ok;
  std::string problem;             // when corrupt, incomplete or foreign
  bool truncated = false;          // corrupt because a file is shorter than recorded
  std::vector<std::string> strays; // names in the entry folder not in its table
  // A listed file whose mode is not 0444; with Check::contents it makes an entry whose
  // bytes and signature check corrupt all the same (empty: none).
  std::string unexpected_mode;
  EntryHeader header; // parsed unless corrupt or foreign
  // Checked only with a signing key and Check::contents; not valid makes the entry corrupt.
  std::optional<SignatureState> signature;
  uint64_t bytes = 0; // on disk
  // The entry folder's mtime in nanoseconds since the epoch: eviction orders by it, since
  // entries used within one second would otherwise tie.
  int64_t last_used_ns = 0;
  int64_t last_used() const { return last_used_ns / 1000000000; } // seconds
};

// How closely to look at an entry:
// - files: the header and the sizes of the files it lists (`cache ls`, `cache stats`);
// - sizes: also every other name in the folder, as strays, and their bytes (what eviction
//   and invalidation remove);
// - contents: also every file's checksum, and the signature with a signing key.
enum class Check { files, sizes, contents };
enum class DryRun { no, yes };
enum class Fix { no, yes };

using Progress = std::function<void(size_t done, size_t total)>;

struct Finding {
  // unsigned_entry, bad_signature: found only with a signing key (entry_signature.h).
  enum class Kind {
    corrupt,
    truncated,
    incomplete,
    foreign_version,
    stray,
    unsigned_entry,
    bad_signature
  };
  Kind kind = Kind::corrupt;
  std::filesystem::path path;
  std::string detail;
  bool fixed = false;
  // Not npucc's to remove (a folder, or a name its layout does not define): reported only.
  bool left_alone = false;
};
const char* finding_name(Finding::Kind kind);

// Each refused removal is one line naming the path and the system's reason; what it
// names is still there, and counted nowhere as removed.
using Failures = std::vector<std::string>;

struct VerifyReport {
  size_t entries = 0;
  uint64_t bytes = 0;
  std::vector<Finding> findings;
  Failures failures; // with Fix::yes
};

// Which entries `cache invalidate` removes: every condition given must hold. With no
// version, model or key, the default is "of any compiler version but this one".
struct Selection {
  std::optional<std::string> version;
  std::string model; // a pattern, as model_matches() reads it
  std::string key_prefix;
};

// The one --model rule of `cache ls` and `cache invalidate`: `pattern` is the model's
// stem ("ppocr_cls"), its file name ("ppocr_cls.onnx"), or a glob of either ("ppocr*");
// an exact stem matches itself even when it holds glob characters ("net[v2]"). An empty
// pattern matches every model.
bool model_matches(const std::string& model, const std::string& pattern);

struct Removal {
  std::string key;
  std::string model;
  std::string version;
  uint64_t bytes = 0;
  std::string why;
};

struct InvalidateReport {
  std::vector<Removal> removed; // really removed (or, dry run, that would be)
  Failures failures;
};

struct PurgeOptions {
  bool all = false;
  std::optional<int64_t> older_than; // seconds since last use
  std::optional<uint64_t> max_size;  // bytes; least recently used go first
  // The entry just stored: the most recently used, whatever its folder's time says. A file
  // system with whole-second times ties it with an entry hit in the same second.
  std::string just_stored;
};

struct PurgeReport {
  std::vector<Removal> removed;
  uint64_t freed = 0;
  size_t temporaries = 0; // stale staging folders and temporary files removed
  uint64_t temporary_bytes = 0;
  size_t unused_blobs = 0; // weights no entry uses any more (blob_store.h)
  uint64_t unused_blob_bytes = 0;
  Failures failures;
};

// CACHE_DIR/CACHEDIR.TAG. Every npucc since the first wrote exactly this.
inline constexpr const char* k_cachedir_tag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by npucc.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n";

// A staging folder or temporary file older than this belongs to a dead process.
inline constexpr int64_t k_stale_temporary_seconds = 3600;
// An input digest (input_digests.h) recorded longer ago than this is purged as stale.
inline constexpr int64_t k_stale_digest_seconds = int64_t{30} * 24 * 3600;

// A folder or file in CACHE_DIR/tmp/ that one operation owns: a staging folder, a scratch
// compile, a bundle on its way to a remote. Removed when dropped (flat, remove_tree), unless
// released: an entry was published from it. Made by LocalStorage::temp_folder / temp_name.
class TempPath {
public:
  TempPath() = default;
  explicit TempPath(std::filesystem::path path) : m_path(std::move(path)) {}
  ~TempPath();
  TempPath(TempPath&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }
  TempPath& operator=(TempPath&& other) noexcept;
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

  const std::filesystem::path& path() const { return m_path; }
  void release() { m_path.clear(); }

private:
  std::filesystem::path m_path;
};

class LocalStorage : public Storage {
public:
  // `root` must exist; the layout folders are created as needed (never when read-only).
  explicit LocalStorage(std::filesystem::path root, CacheAccess access = CacheAccess::read_write,
                        CacheSharing sharing = CacheSharing::automatic);

  // With a key, store() signs every entry and fetch()/verify() reject entries whose
  // signature is missing or wrong (as corrupt).
  void set_signing_key(std::optional<SigningKey> key) { m_key = std::move(key); }
  bool signing() const { return m_key.has_value(); }
  const std::optional<SigningKey>& signing_key() const { return m_key; }
  // After an entry arrived whose files were hashed on the way in (a remote bundle): when
  // its header records exactly those digests, a stamp spares the first hit a re-hash.
  void adopt_verified(const std::string& key, const std::map<std::string, std::string>& sha256);
  // How fetch() delivers and store() takes SourceFiles::link files (npucc/cache.h).
  void set_link_mode(LinkMode mode) { m_link_mode = mode; }
  bool read_only() const { return m_access == CacheAccess::read_only; }
  CacheSharing sharing() const { return m_sharing; }
  const Modes& modes() const { return m_modes; }
  // Creates `dir` (one level, inside the cache) unless it is there, with the cache's folder
  // mode whatever the umask (setgid and group-writable in a group cache): every folder
  // npucc makes in a cache is made here, so no writer's umask can lock the others out.
  void make_dir(const std::filesystem::path& dir) const { make_cache_dir(dir, m_modes); }
  // The same, the error returned: for folders of what is only an optimisation.
  util::Outcome try_make_dir(const std::filesystem::path& dir) const {
    return try_make_cache_dir(dir, m_modes);
  }
  // The layout folders and the tag; safe to run concurrently and on an existing cache.
  void create_layout() const;
  // A new folder in tmp/ ("<stem>.<pid>.<random>"), with the cache's folder mode: it may
  // become an entry folder (publish_staged).
  TempPath temp_folder(const std::string& stem) const;
  // A new name in tmp/ (tmp/ made), for a file or folder the caller creates there.
  TempPath temp_name(const std::string& stem) const;
  // Publishes a folder staged by temp_folder as it is (a remote bundle unpacked: its
  // entry.npucc verbatim) under `key`, first removing the damaged entry there with
  // Replace::yes; its files were hashed on the way in, as `sha256` says (adopt_verified).
  // True when an entry is published under the key now: this one, or one another process
  // published meanwhile (as good). Throws npucc::Error when the entry cannot be removed.
  // Refused (false, nothing removed, shared or published) when staged_problem finds one.
  bool publish_staged(TempPath& staged, const std::string& key, Replace replace,
                      const std::map<std::string, std::string>& sha256);
  // Why a staged entry folder may not be published under `key`: its header is missing,
  // unreadable or for another key, a listed file is missing or of another size, or it holds
  // a file its header does not list (entry.sig aside). Empty when it may.
  std::string staged_problem(const std::filesystem::path& folder, const std::string& key) const;

  std::string describe() const override;
  // Storage::fetch; an empty `into` checks the entry as a fetch does and delivers nothing
  // (populate: an entry known good needs no copy of its files anywhere).
  FetchResult fetch(const std::string& key, const std::filesystem::path& into) override;
  StoreResult store(EntryHeader header, const std::filesystem::path& from,
                    const std::vector<std::string>& names, SourceFiles source, Replace replace,
                    const KnownDigests& known) override;
  // Throws npucc::Error naming the entry when it cannot be removed.
  bool remove(const std::string& key) override;

  std::vector<EntryInfo> list(Check check, const Progress& progress = {}) const;
  // How many entries other compiler versions wrote, from their headers alone (see
  // entry_compiler_version): four system calls per entry, where list(Check::files) makes
  // about seven and list(Check::sizes) a dozen.
  // Damaged entries whose header still reads are counted too.
  size_t count_other_versions() const;
  VerifyReport verify(Fix fix, const Progress& progress = {}) const;
  InvalidateReport invalidate(const Selection& selection, DryRun dry_run) const;
  PurgeReport purge(const PurgeOptions& options, DryRun dry_run) const;
  // After a store: trims to `max_size` unless another process is already cleaning.
  PurgeReport enforce_max_size(uint64_t max_size, const std::string& just_stored = {}) const;

  // The model index (model_index.h) of the model whose bytes hash to `model_sha256`, with
  // the owner and mode of the file read (never through a link, never a FIFO).
  std::optional<ModelIndex> model_index(const std::string& model_sha256) const;
  // Written by this user, writable by no one else (the cache's file mode without the group's
  // and others' write bits): so that its key facts can be this user's own
  // (why_key_facts_not_used). Another member's compile replaces it, never edits it.
  void record_model_index(const std::string& model_sha256, const std::string& text) const;

  const StatsFile& stats() const { return m_stats; }
  const std::filesystem::path& root() const { return m_root; }
  std::filesystem::path entry_dir(const std::string& key) const;

private:
  EntryInfo examine(const std::filesystem::path& dir, const std::string& key, Check check) const;
  // The same, the folder named relative to the open folder `at` (entry_scan.h).
  EntryInfo examine_at(int at, const char* name, const std::filesystem::path& dir,
                       const std::string& key, Check check) const;
  // The one file of a hit fetch() may leave copying (FetchResult::copying), or null.
  const EntryFile* file_to_copy_in_background(const EntryHeader& header) const;
  // fetch()'s delivery of a checked entry's files into `into`, each as the link mode and
  // the access allow; false (result says why) when a signed entry changed meanwhile.
  bool deliver_files(const std::filesystem::path& dir, const EntryHeader& header,
                     const std::filesystem::path& into, FetchResult& result) const;
  // CACHE_DIR/stamps/<kk>/<key>: the entry's files as last hashed (local_storage.cpp).
  std::filesystem::path stamp_path(const std::string& key) const;
  // The owner of the cache's folder: with this user, whom an entry file's owner may be for
  // a stamp to stand for its bytes.
  uid_t owner_uid() const;
  bool stamp_matches(const std::string& key, const std::string& stamp) const;
  void write_stamp(const std::string& key, const std::string& stamp) const;
  // store()'s last steps: the header (and signature) of a staged entry folder, then its
  // rename into place; false when an entry another process published stays.
  void write_entry_header(const std::filesystem::path& stage, const EntryHeader& header) const;
  bool publish(TempPath& stage, const std::string& key, Replace replace) const;
  // Renames an entry folder into tmp/ and removes it there (remove_flat); an entry that
  // holds a folder npucc did not write is left in place.
  Removed remove_dir(const std::filesystem::path& dir) const;
  PurgeReport purge_locked(const PurgeOptions& options, DryRun dry_run) const;
  void purge_temporaries(PurgeReport& report, DryRun dry_run) const;

  // Throws the one-line "read-only" error for `what` ("purge", ...) when read-only.
  void require_writable(const std::string& what) const;

  std::filesystem::path m_root;
  CacheAccess m_access;
  CacheSharing m_sharing; // resolved: none or group
  Modes m_modes;
  StatsFile m_stats;
  std::optional<SigningKey> m_key;
  LinkMode m_link_mode = LinkMode::automatic;
};

// The local storage a CacheConfig describes: open_cache_dir, its access and sharing, and
// its signing key (loaded and checked: load_signing_key throws for a weak key file).
// CacheIntent::read opens it read-only whatever the configuration: a command that only
// looks writes nothing (npucc/cache.h).
LocalStorage open_local_storage(const CacheConfig& config,
                                CacheIntent intent = CacheIntent::compile);

} // namespace npucc::cache

#pragma once

#include "cache/entry_format.h"
#include "cache/file_ops.h"
#include "npucc/file_identity.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

// Where cache entries live. The local directory (LocalStorage) is one backend; a shared
// remote tier (HTTP: GET/PUT of one archive per key, or Redis) implements the same three
// operations, and a two-level storage can try local then remote and back-fill local on a
// remote hit. Maintenance (listing, verifying, eviction) is backend-specific and lives
// on the backend classes, not here.
namespace npucc::cache {

enum class FetchStatus { hit, absent, corrupt, incomplete };
const char* fetch_status_name(FetchStatus status);

struct FetchResult {
  FetchStatus status = FetchStatus::absent;
  std::string problem; // corrupt/incomplete: what is wrong, naming the file
  // corrupt because a signing key is configured and the entry's signature is missing or
  // wrong (entry_signature.h): worth a warning, unlike ordinary damage.
  bool untrusted = false;
  EntryHeader header;              // hit: the entry's header
  std::vector<Transfer> transfers; // hit: how each of header.files was delivered, in order
  std::string note;                // hit: a damaged entry file delivered by copy instead of a link
  // hit: the largest file, still being copied into the folder (local_storage.cpp).
  std::shared_ptr<util::BackgroundTask> copying;

  // Waits until every file is whole in the folder: before anything reads, moves or
  // publishes the large one. Throws what its copy met (a full disk).
  void wait_for_files();
};

// "hard link", or "hard link (2 files), copy (1 file)" when the files went different ways.
std::string describe_transfers(const std::vector<Transfer>& transfers);

enum class StoreStatus { stored, already_present };

struct StoreResult {
  StoreStatus status = StoreStatus::stored;
  uint64_t bytes = 0;
};

// Whether a store may replace an entry already published under the key (one found
// corrupt by fetch); otherwise the first complete entry wins.
enum class Replace { no, yes };
// What a store may do with the source files: move them (a scratch folder), hard-link
// them (a user's output folder on the cache's filesystem: the output then shares the
// entry's read-only inode, as a hit's output does; a copy elsewhere), or only copy them.
enum class SourceFiles { copy, link, move };

// A digest the caller computed while writing a file, and the file as it was then: the
// store takes it instead of hashing again while the file still looks so.
struct KnownDigest {
  std::string sha256;
  FileIdentity written_as;
};
using KnownDigests = std::map<std::string, KnownDigest>;

class Storage {
public:
  virtual ~Storage() = default;
  virtual std::string describe() const = 0;

  // Looks `key` up and, on a hit whose every file matches its checksum, materialises
  // the files into the existing folder `into` (the largest may still be on its way:
  // FetchResult::wait_for_files). Corrupt or incomplete entries are reported, not thrown.
  virtual FetchResult fetch(const std::string& key, const std::filesystem::path& into) = 0;

  // Publishes the files `names` of folder `from` under header.key, atomically: readers
  // see the whole entry or none. `header.files` is filled in by the store, from `known`
  // where it applies, else by hashing.
  virtual StoreResult store(EntryHeader header, const std::filesystem::path& from,
                            const std::vector<std::string>& names, SourceFiles source,
                            Replace replace, const KnownDigests& known) = 0;

  // Removes the entry; false when there was none.
  virtual bool remove(const std::string& key) = 0;
};

} // namespace npucc::cache

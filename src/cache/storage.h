#pragma once

#include "cache/entry_format.h"
#include "cache/file_ops.h"

#include <filesystem>
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
  EntryHeader header;  // hit: the entry's header
  Transfer transfer = Transfer::copy;
};

enum class StoreStatus { stored, already_present };

struct StoreResult {
  StoreStatus status = StoreStatus::stored;
  uint64_t bytes = 0;
};

// Whether a store may replace an entry already published under the key (one found
// corrupt by fetch); otherwise the first complete entry wins.
enum class Replace { no, yes };
// Whether the source files may be moved (a scratch folder) or must be copied (a
// user's output folder).
enum class SourceFiles { copy, move };

class Storage {
public:
  virtual ~Storage() = default;
  virtual std::string describe() const = 0;

  // Looks `key` up and, on a hit whose every file matches its checksum, materialises
  // the files into the existing folder `into`. Corrupt or incomplete entries are
  // reported, not thrown.
  virtual FetchResult fetch(const std::string& key, const std::filesystem::path& into) = 0;

  // Publishes the files `names` of folder `from` under header.key, atomically: readers
  // see the whole entry or none. `header.files` is filled in by the store.
  virtual StoreResult store(EntryHeader header, const std::filesystem::path& from,
                            const std::vector<std::string>& names, SourceFiles source,
                            Replace replace) = 0;

  // Removes the entry; false when there was none.
  virtual bool remove(const std::string& key) = 0;
};

} // namespace npucc::cache

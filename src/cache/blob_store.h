#pragma once

#include "cache/entry_format.h"
#include "cache/file_ops.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

// Weights shared across entries: CACHE_DIR/blobs/<kk>/<sha256>, one read-only (0444) file
// per distinct content of an entry's external data (weights.data, GRAPH.onnx.data), and
// every entry that holds that content has its file as a hard link to the blob. Entries of
// one model that differ in an option (a ratio, an input shape) then hold its weights once.
//
// The link count is the reference count: an entry is still a folder of regular files, so
// reading, hashing, signing, delivering and bundling an entry need not know about blobs;
// removing an entry unlinks its names, and a blob whose count has fallen to 1 (only
// blobs/ holds it) is used by no entry and is removed by the next sweep. A store links
// an existing blob only when no one but the writer or the cache folder's owner can change
// it: owned by one of them, 0444 (only a file's owner may chmod it), its bytes hashing to
// its name, all seen on one descriptor opened without following links, and the inode then
// linked is the one hashed (issue 42). Any other blob (damaged, a group member's, of another
// mode) is replaced by the store's own file; a damaged blob already linked makes
// every entry using it fail its checksum (a miss, never a misread), and verify --fix
// removes those entries and then the blob. Everything is done relative to folders opened
// without following links: a link planted in blobs/ is never followed, only removed.
namespace npucc::cache {

// Whether an entry file of this name is kept as a blob: external data.
bool is_blob_file(const std::string& name);

// Makes each blob file of the staged entry folder `stage` (its table `files`, already
// read-only) a link to the blob of its content, adding the blob when there is none. Each
// failure (another user's blob that may not be linked, a full disk) leaves the entry its
// own copy: sharing saves space, the entry is whole either way.
void share_blobs(const std::filesystem::path& root, const Modes& modes,
                 const std::filesystem::path& stage, const std::vector<EntryFile>& files);

// The disk a set of entries takes, a blob they share counted once: what a size limit
// weighs, and what removing an entry frees (its own files, and each blob only with the last
// entry that links it).
class SharedDiskUse {
public:
  // An entry: its folder, its table, its bytes as its files' sizes add up. Returns its index.
  size_t add(const std::filesystem::path& dir, const EntryHeader& header, uint64_t bytes);
  uint64_t total() const { return m_total; }
  // Takes entry `index` away: the bytes that frees.
  uint64_t remove(size_t index);

private:
  struct Entry {
    uint64_t own = 0;
    std::vector<std::pair<uint64_t, uint64_t>> blobs; // device, inode
  };
  struct Blob {
    uint64_t bytes = 0;
    size_t users = 0;
  };
  std::vector<Entry> m_entries;
  std::map<std::pair<uint64_t, uint64_t>, Blob> m_blobs;
  uint64_t m_total = 0;
};

// What a sweep of blobs/ removed (or, dry run, would remove).
struct BlobSweep {
  size_t removed = 0;
  uint64_t bytes = 0;
  std::vector<std::string> failures;
};

// Removes the blobs no entry links any more, and what blobs/ should not hold (a link, a
// folder's other names: npucc's own temporaries only once stale).
BlobSweep sweep_blobs(const std::filesystem::path& root, bool dry_run);

} // namespace npucc::cache

#pragma once

#include "cache/local_storage.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

// Reading entry folders with few system calls: `cache ls`, `cache stats` and eviction
// examine every entry, so each costs a handful of calls relative to open folders (no
// path walks from the root), one directory read, and one open + read of the header.
namespace npucc::cache {

// One shard of CACHE_DIR/entries: a real folder named by two lower-case hex digits, and
// the names in it that are keys starting with those digits, sorted. Other names are not
// entries (`cache verify` reports them as stray).
struct EntryShard {
  std::string name;
  std::vector<std::string> keys;
};

// The shards under `entries`, sorted by name; none when it is missing or not a real folder.
std::vector<EntryShard> find_entry_shards(const std::filesystem::path& entries);

// What Check::sizes establishes about one entry folder: that it is a real folder, its
// bytes and last use, its header parsed and matching the key, every listed file present,
// regular and of the recorded size, and the names it does not list (strays). `name` is
// the folder relative to the open folder `at` (a shard; or AT_FDCWD and a full path),
// `dir` the same folder as a path (for messages). The state is ok, corrupt,
// incomplete or foreign; whether an ok entry is of another compiler version is for the
// caller to say, after any checks of contents. `header_text` gets the header's bytes
// when they were read (a signature must cover exactly those).
EntryInfo scan_entry(int at, const char* name, const std::filesystem::path& dir,
                     const std::string& key, std::string& header_text);

// What Check::files establishes about the entry `key` in the open shard folder
// `shard_fd`, in about half of scan_entry's system calls: the folder's last use, its
// header parsed and matching the key, and every file the header lists present, regular and
// of the recorded size. The folder is not listed, so names it holds beyond those are
// neither reported as strays nor counted in `bytes` (the header's and the listed files'
// sizes). No link is followed to open the header.
// `shard_path` names the shard folder in messages.
EntryInfo scan_entry_files(int shard_fd, const std::string& key,
                           const std::filesystem::path& shard_path);

// The compiler version that the entry `key` (a folder in the open shard folder
// `shard_fd`) was written by, from its header alone: no listing of the folder, no file
// sizes, a handful of system calls against scan_entry's dozen. nullopt when the header is
// missing, unreadable, not parsed or for another key; links are never followed. For counts
// that Check::sizes would make ten times as costly (`cache populate`'s note on other
// versions' entries).
std::optional<std::string> entry_compiler_version(int shard_fd, const std::string& key);

} // namespace npucc::cache

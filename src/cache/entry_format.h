#pragma once

// The header of one cache entry: the file `entry.npucc` inside the entry's folder
// (CACHE_DIR/entries/<first two hex digits of the key>/<key>/). It is written last, into
// the staging folder, before the folder is renamed into place. Text, UTF-8, LF endings:
//
//   entry      = magic-line field-lines table end-line
//   magic-line = "npucc-cache-entry" SP format-version LF   ; format-version = "1"
//   field-lines= "compiler" SP text LF       ; the npucc version that wrote the entry
//                "created" SP 1*DIGIT LF     ; creation time, seconds since the epoch (UTC)
//                "key" SP 64HEXDIG LF        ; the cache key (lower-case SHA-256)
//                "model" SP text LF          ; model name: the .onnx file's stem
//                "variants" SP text LF       ; role:precision list,
//                "high:float32,low:mixed_float16" "options" SP text LF        ;
//                npucc::canonical_options() JSON (one line)
//   table      = "files" SP 1*DIGIT LF *file-line    ; the count, then one line per file
//   file-line  = "file" SP 64HEXDIG SP 1*DIGIT SP name LF   ; SHA-256, size in bytes, name
//   end-line   = "end" SP 64HEXDIG LF        ; SHA-256 of every byte before "end"
//   text       = *VCHAR-or-SP-or-UTF-8, with "%" LF CR written as %25 %0A %0D
//   name       = a plain file name: no "/", no NUL, not starting with ".", not "entry.npucc"
//
// Fields appear in the order above; readers refuse anything else, so a truncated or
// edited header is "corrupt", and one whose magic is right but whose format version is
// not 1 is "foreign" (written by an npucc with another cache format).
//
// The files of the entry (the compiled graph(s), their external data, manifest.json)
// sit beside the header, read-only (0444); last use is the folder's modification time.

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::cache {

inline constexpr const char* k_entry_magic = "npucc-cache-entry";
inline constexpr int k_entry_format_version = 1;
inline constexpr const char* k_header_file = "entry.npucc";

struct EntryFile {
  std::string name;
  std::string sha256;
  uint64_t bytes = 0;
};

struct EntryHeader {
  int format_version = k_entry_format_version;
  std::string compiler_version;
  int64_t created = 0;
  std::string key;
  std::string model;
  std::string variants;
  std::string options;
  std::vector<EntryFile> files;

  uint64_t total_bytes() const;
};

enum class HeaderProblem { none, corrupt, foreign_format };

struct ParsedHeader {
  HeaderProblem problem = HeaderProblem::none;
  std::string error; // why, when problem != none
  EntryHeader header;
};

std::string serialize_header(const EntryHeader& header);
// Never throws: the result says what is wrong.
ParsedHeader parse_header(const std::string& text);

// A name that may appear in the file table (see `name` in the grammar).
bool is_plain_file_name(const std::string& name);
bool is_key(const std::string& text);

// A key prefix the user typed (`cache invalidate --key K`, Cache::invalidate): 4 to 64
// hex digits, returned in lower case, the spelling of keys. Throws usage_error naming
// `label` ("--key", "key prefix") and what is wrong: not hex, too short, too long.
std::string check_key_prefix(const std::string& prefix, const std::string& label);

} // namespace npucc::cache

#pragma once

// The one object a cache entry travels as between machines: every file of the local
// entry folder (entry.npucc verbatim, so whatever it carries, a signature included,
// arrives untouched) in one length-prefixed, checksummed archive. Binary, integers
// big-endian:
//
//   bundle  = magic count table payload digest
//   magic   = "NPUCCBD1"                       ; 8 bytes: format 1
//   count   = u32                              ; 1 .. k_bundle_max_files
//   table   = count * file-row
//   file-row= name-length:u16 name size:u64 sha256:32   ; name: 1 .. 255 bytes
//   payload = the files' bytes, in table order, sizes as in the table
//   digest  = SHA-256 (32 raw bytes) of every byte before it
//
// A name must be a plain file name (no "/", no NUL, not starting with "."), and the
// header file entry.npucc must be present. A reader checks every length against the
// object's size before it reads or writes anything, then the per-file checksums and the
// digest: a truncated, padded or edited object is refused as a whole.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace npucc::cache::remote {

inline constexpr char k_bundle_magic[] = "NPUCCBD1";
inline constexpr uint32_t k_bundle_max_files = 4096;
inline constexpr size_t k_bundle_max_name = 255;

// Writes the files `names` of folder `dir` as a bundle to `out` (created, must not
// exist). Returns the bundle's size. Throws npucc::Error.
uint64_t write_bundle(const std::filesystem::path& dir, const std::vector<std::string>& names,
                      const std::filesystem::path& out);

struct UnpackResult {
  bool ok = false;
  std::string problem; // when !ok: what is wrong, one line
  std::vector<std::string> names;
};

// Checks the bundle file `bundle` and writes its files into the existing empty folder
// `into`. Never throws for a bad bundle (the result says why); files written before a
// problem was found are left for the caller to remove with the folder.
UnpackResult unpack_bundle(const std::filesystem::path& bundle, const std::filesystem::path& into);

} // namespace npucc::cache::remote

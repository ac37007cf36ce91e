#pragma once

// The one object a cache entry travels as between machines: every file of the local
// entry folder (entry.npucc verbatim, so whatever it carries, a signature included,
// arrives untouched) in one length-prefixed, checksummed archive. Binary, integers
// big-endian:
//
//   bundle  = magic count table payload digest
//   magic   = "NPUCCBD2"                       ; 8 bytes: format 2
//   count   = u32                              ; 1 .. k_bundle_max_files
//   table   = count * file-row
//   file-row= name-length:u16 name size:u64 sha256:32   ; name: 1 .. 255 bytes
//   payload = the files' bytes, in table order, sizes as in the table
//   digest  = SHA-256 (32 raw bytes) of magic, count and table
//
// The table records every file's SHA-256, so the digest of the table covers the payload
// too, and each byte is hashed once on the way in (format 1, "NPUCCBD1", whose digest
// hashed every byte a second time, is still read). A name must be a plain file name (no
// "/", no NUL, not starting with "."), and the header file entry.npucc must be present.
// A reader checks every length against the object's size before it reads or writes
// anything, then the per-file checksums and the digest: a truncated, padded or edited
// object is refused as a whole.

#include "util/sha256.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace npucc::cache::remote {

inline constexpr char k_bundle_magic[] = "NPUCCBD2";
inline constexpr char k_bundle_magic_v1[] = "NPUCCBD1";
inline constexpr uint32_t k_bundle_max_files = 4096;
inline constexpr size_t k_bundle_max_name = 255;
// The most a bundle may hold, whatever a server says or leaves unsaid (an HTTP answer
// without Content-Length): past it a download is refused, so a server cannot fill the
// disk. Above any compile's outputs (a 3.2 GB model's pair with their data is ~10 GB).
inline constexpr uint64_t k_bundle_max_bytes = uint64_t{64} << 30;
// A receiver gathers a file's bytes into pieces of this size, hashed and written whole;
// what it is handed in runs of at least k_bundle_direct_bytes is hashed and written where
// it is.
inline constexpr size_t k_bundle_piece_bytes = size_t{1} << 20;
inline constexpr size_t k_bundle_direct_bytes = size_t{1} << 18;

// Writes the files `names` of folder `dir` as a bundle to `out` (created, must not
// exist). Returns the bundle's size. Throws npucc::Error.
uint64_t write_bundle(const std::filesystem::path& dir, const std::vector<std::string>& names,
                      const std::filesystem::path& out);

struct UnpackResult {
  bool ok = false;
  std::string problem; // when !ok: what is wrong, one line
  std::vector<std::string> names;
  // ok: each file's SHA-256 (hex), as checked while it arrived: name -> digest.
  std::map<std::string, std::string> sha256;
};

// Unpacks a bundle as it arrives (no copy of the whole object on disk or in memory):
// feed() the bytes in order, then finish(). Files are written into the existing empty
// folder `into` (mode 0444, never synced: a cache entry is checksummed, not precious) in
// large writes, each byte hashed once while it is still in the CPU cache, each file
// checked against its checksum when it is complete; with expect_size()
// (Content-Length, a Redis value's length) the table's lengths are checked against the
// object's size before any file is created. A refused bundle leaves partial files for
// the caller to remove with the folder.
class BundleReceiver {
public:
  // `max_bytes`: the most it takes (tests lower it), whether or not expect_size is told;
  // lowered to the free space of `into`'s file system. Checked against the size a server
  // declares (expect_size), against each file's size in the table as soon as it arrives,
  // and against the bytes received.
  explicit BundleReceiver(std::filesystem::path into, uint64_t max_bytes = k_bundle_max_bytes);
  ~BundleReceiver();
  BundleReceiver(const BundleReceiver&) = delete;
  BundleReceiver& operator=(const BundleReceiver&) = delete;

  // The object's size, as the server declared it; more than the limit refuses the bundle
  // (the next feed() returns false).
  void expect_size(uint64_t bytes);
  // False once the bundle is refused (problem() says why): stop sending.
  bool feed(const char* data, size_t size);
  const std::string& problem() const { return m_problem; }
  UnpackResult finish();

private:
  struct Row {
    std::string name;
    uint64_t size = 0;
    std::string sha256;
  };
  static constexpr size_t k_max_table_bytes = 12 + k_bundle_max_files * (2 + 255 + 8 + 32);

  bool refuse(const std::string& problem);
  std::string limit_text() const;
  bool parse_table();
  bool feed_payload(const char* data, size_t size);
  bool open_next();
  bool write_piece();
  bool write_bytes(const char* data, size_t size);
  bool add_to_file(const char* data, size_t size);
  bool close_current();

  std::filesystem::path m_into;
  uint64_t m_max;
  bool m_max_is_room = false; // m_max is the free space, not the format's limit
  uint64_t m_expected = 0;
  bool m_expected_known = false;
  uint64_t m_received = 0;
  std::string m_head; // the magic, count and table until they are complete
  bool m_table_done = false;
  std::vector<Row> m_rows;
  size_t m_file = 0;   // the file being written
  uint64_t m_left = 0; // its bytes still to come
  int m_fd = -1;
  bool m_format_v1 = false;
  util::Sha256 m_whole;      // format 1: every byte before the digest
  std::string m_head_digest; // format 2: hex SHA-256 of magic, count and table
  std::unique_ptr<util::Sha256> m_file_hash;
  std::unique_ptr<char[]> m_piece; // the current file's bytes not yet hashed and written
  size_t m_piece_used = 0;
  std::string m_digest;
  std::vector<std::string> m_names;
  std::string m_problem;
};

// Checks the bundle file `bundle` and writes its files into the existing empty folder
// `into`. Never throws for a bad bundle (the result says why); files written before a
// problem was found are left for the caller to remove with the folder.
UnpackResult unpack_bundle(const std::filesystem::path& bundle, const std::filesystem::path& into);

} // namespace npucc::cache::remote

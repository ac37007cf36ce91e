#pragma once

#include "util/expected.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

// OpenSSL's EVP_MD_CTX, declared here so that the header needs no OpenSSL include.
struct evp_md_ctx_st;

namespace npucc::util {

// Incremental SHA-256 (OpenSSL EVP).
class Sha256 {
public:
  Sha256();
  ~Sha256();
  // A copy continues from the same state: two streams that begin with the same bytes
  // hash those bytes once.
  Sha256(const Sha256& other);
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // Lower-case hex digest; the object cannot be updated afterwards.
  std::string hex_digest();

private:
  evp_md_ctx_st* m_ctx = nullptr;
};

// Loads OpenSSL's configuration and fetches the digest: done once before forking workers,
// each of which would otherwise do it again.
void warm_sha256();

std::string sha256_hex(std::string_view data);

struct FileDigest {
  std::string sha256; // lower-case hex
  uint64_t bytes = 0;
};
// The SHA-256 and size of what `fd` reads from where it is to its end, `buffer_size`
// bytes at a time; throws npucc::Error naming `path` on a read error. The one file hasher
// (the compiler's outputs are hashed as they are written: output/hashed_file.h).
FileDigest sha256_of_fd(int fd, const std::filesystem::path& path,
                        size_t buffer_size = size_t{1} << 20);
// The same, the read error returned: for a caller to whom an unreadable file is a finding
// (a damaged cache entry), not an error.
Expected<FileDigest> try_sha256_of_fd(int fd, const std::filesystem::path& path,
                                      size_t buffer_size = size_t{1} << 20);
// The hex SHA-256 of the file at `path`.
std::string sha256_file_hex(const std::filesystem::path& path);

} // namespace npucc::util

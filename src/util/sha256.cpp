#include "util/sha256.h"

#include "npucc/error.h"
#include "util/disk.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/hex.h"
#include "util/safe_open.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::util {

namespace {

// The digest is fetched from OpenSSL's provider once: EVP_sha256() in EVP_DigestInit_ex
// fetches it anew for every hash (a locked lookup and two allocations, some 2,800
// instructions), and `cache ls` hashes every entry header (tests/bench/PROFILING.md).
const EVP_MD* sha256_method() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
  static const EVP_MD* const k_method = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return k_method;
#else
  return EVP_sha256();
#endif
}

} // namespace

void warm_sha256() {
  Sha256().hex_digest();
}

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new()) {
  const EVP_MD* method = sha256_method();
  if (m_ctx == nullptr || method == nullptr || EVP_DigestInit_ex(m_ctx, method, nullptr) != 1) {
    EVP_MD_CTX_free(m_ctx);
    throw Error("OpenSSL: cannot initialise SHA-256");
  }
}

Sha256::Sha256(const Sha256& other) : m_ctx(EVP_MD_CTX_new()) {
  if (m_ctx == nullptr || EVP_MD_CTX_copy_ex(m_ctx, other.m_ctx) != 1) {
    EVP_MD_CTX_free(m_ctx);
    throw Error("OpenSSL: cannot copy a SHA-256 state");
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(m_ctx);
}

void Sha256::update(const void* data, size_t size) {
  EVP_DigestUpdate(m_ctx, data, size);
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(m_ctx, digest, &length);
  return hex_encode(digest, length);
}

std::string sha256_hex(std::string_view data) {
  Sha256 hash;
  hash.update(data);
  return hash.hex_digest();
}

Expected<FileDigest> try_sha256_of_fd(int fd, const std::filesystem::path& path,
                                      size_t buffer_size) {
  Sha256 hash;
  FileDigest out;
  std::unique_ptr<char[]> buffer(new char[buffer_size]); // not zeroed: read() fills it
  while (true) {
    ssize_t n = retry_on_eintr([&] { return disk().read(fd, buffer.get(), buffer_size, path); });
    if (n < 0) {
      return Error(path.string() + ": read failed: " + std::strerror(errno));
    }
    if (n == 0) {
      break;
    }
    hash.update(buffer.get(), static_cast<size_t>(n));
    out.bytes += static_cast<uint64_t>(n);
  }
  out.sha256 = hash.hex_digest();
  return out;
}

FileDigest sha256_of_fd(int fd, const std::filesystem::path& path, size_t buffer_size) {
  return try_sha256_of_fd(fd, path, buffer_size).value();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  // A file the user named (a library, the executable): a link is followed, a FIFO refused.
  OpenedFile file = open_regular_file(path, OpenRule::named_by_user()).value();
  // Sized to the file (a model's graph file is often a few kilobytes).
  size_t size = file.info.st_size >= 0
                    ? std::min<size_t>(static_cast<size_t>(file.info.st_size) + 1, 1 << 20)
                    : 1 << 20;
  return sha256_of_fd(file.fd.get(), path, size).sha256;
}

} // namespace npucc::util

#include "cache/entry_signature.h"

#include "cache/entry_format.h"
#include "cache/file_ops.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/file_io.h"
#include "util/hex.h"
#include "util/safe_open.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_signature_magic = "npucc-cache-signature 1";
constexpr const char* k_mac_context = "npucc-cache-entry-signature-v1\n";
constexpr size_t k_mac_bytes = 32;

using Mac = std::array<unsigned char, k_mac_bytes>;

Mac mac_over(const SigningKey& key, const std::string& message) {
  Mac mac{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(),
           &length) == nullptr ||
      length != k_mac_bytes) {
    throw Error("OpenSSL: HMAC-SHA-256 failed");
  }
  return mac;
}

Mac compute_mac(const SigningKey& key, const std::string& header_text) {
  return mac_over(key, std::string(k_mac_context) + header_text);
}

// The MAC recorded in a signature file's text; false when the text is not one.
bool parse_signature(const std::string& text, Mac& mac) {
  const std::string prefix = std::string(k_signature_magic) + "\nhmac-sha256 ";
  if (text.size() != prefix.size() + 2 * k_mac_bytes + 1 ||
      text.compare(0, prefix.size(), prefix) != 0 || text.back() != '\n') {
    return false;
  }
  std::optional<std::string> bytes =
      util::hex_decode(std::string_view(text).substr(prefix.size(), 2 * k_mac_bytes));
  if (!bytes) {
    return false;
  }
  std::memcpy(mac.data(), bytes->data(), k_mac_bytes);
  return true;
}

std::string octal_mode(mode_t mode) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%04o", static_cast<unsigned>(mode & 07777));
  return buffer;
}

} // namespace

const char* signature_state_name(SignatureState state) {
  switch (state) {
  case SignatureState::valid:
    return "valid";
  case SignatureState::missing:
    return "unsigned";
  case SignatureState::mismatch:
    return "bad-signature";
  }
  return "unsigned";
}

namespace {

// The key file, opened as util/safe_open.h opens a file the user named: followed if it is
// a link (secret stores mount keys through links), never waited on (a FIFO), a regular
// file on the descriptor read. The errors say why in the key file's own words.
util::OpenedFile open_key_file(const fs::path& file, const std::string& where) {
  util::Expected<util::OpenedFile> opened =
      util::open_regular_file(file, util::OpenRule::named_by_user());
  if (opened) {
    return std::move(*opened);
  }
  const std::string name = file.string();
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    int error = errno;
    throw Error(where + ": cannot open it: " + std::strerror(error),
                error == ENOENT ? "create it (openssl rand -hex 32 > " + name + "; chmod 600 " +
                                      name + ") or unset NPUCC_CACHE_KEY_FILE"
                                : "");
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(where + " is not a regular file", "point NPUCC_CACHE_KEY_FILE at a file");
  }
  throw Error(where + ": cannot open it: " + opened.error().what());
}

} // namespace

SigningKey load_signing_key(const fs::path& file) {
  const std::string name = file.string();
  const std::string where = name + ": cache key file";
  util::OpenedFile key = open_key_file(file, where);
  const int fd = key.fd.get();
  const struct stat& st = key.info;
  if ((st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) != 0) {
    throw Error(where + " is open to others (mode " + octal_mode(st.st_mode) + ")",
                "chmod 600 " + name + " (or chmod 640 to share it with the cache's group)");
  }
  std::string secret;
  char buffer[1024];
  for (;;) {
    ssize_t n = util::read_some(fd, buffer, sizeof buffer);
    if (n < 0) {
      throw Error(where + ": cannot read it: " + std::strerror(errno));
    }
    if (n == 0) {
      break;
    }
    secret.append(buffer, static_cast<size_t>(n));
    if (secret.size() > k_max_key_bytes + 2) {
      break;
    }
  }
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) {
    secret.pop_back();
  }
  if (secret.empty()) {
    throw Error(where + " is empty", "write a random key into it: openssl rand -hex 32 > " + name +
                                         "; chmod 600 " + name);
  }
  if (secret.size() < k_min_key_bytes) {
    throw Error(where + " holds " + std::to_string(secret.size()) + " bytes; at least " +
                    std::to_string(k_min_key_bytes) + " are needed",
                "write a longer random key: openssl rand -hex 32 > " + name);
  }
  if (secret.size() > k_max_key_bytes) {
    throw Error(where + " is larger than " + std::to_string(k_max_key_bytes) +
                " bytes; is it the right file?");
  }
  return {file, std::move(secret)};
}

std::string signature_text(const SigningKey& key, const std::string& header_text) {
  return std::string(k_signature_magic) + "\nhmac-sha256 " +
         util::hex_encode(compute_mac(key, header_text).data(), k_mac_bytes) + "\n";
}

SignatureCheck check_signature(const SigningKey& key, const std::string& header_text,
                               const std::string& signature) {
  SignatureCheck check;
  if (signature.empty()) {
    check.state = SignatureState::missing;
    check.problem =
        std::string("unsigned entry (no ") + k_signature_file + ") but a cache key is configured";
    return check;
  }
  Mac recorded{};
  if (!parse_signature(signature, recorded)) {
    check.state = SignatureState::mismatch;
    check.problem = std::string(k_signature_file) + " is not a signature";
    return check;
  }
  Mac expected = compute_mac(key, header_text);
  if (CRYPTO_memcmp(expected.data(), recorded.data(), k_mac_bytes) != 0) {
    check.state = SignatureState::mismatch;
    check.problem = std::string(k_signature_file) +
                    ": signature does not match (entry tampered with, or signed with another key)";
    return check;
  }
  check.state = SignatureState::valid;
  return check;
}

std::string record_mac(const SigningKey& key, const std::string& context,
                       const std::string& text) {
  return util::hex_encode(mac_over(key, context + "\n" + text).data(), k_mac_bytes);
}

bool record_mac_matches(const SigningKey& key, const std::string& context, const std::string& text,
                        const std::string& hex) {
  std::optional<std::string> recorded = util::hex_decode(hex);
  if (!recorded || recorded->size() != k_mac_bytes) {
    return false;
  }
  Mac expected = mac_over(key, context + "\n" + text);
  return CRYPTO_memcmp(expected.data(), recorded->data(), k_mac_bytes) == 0;
}

void sign_entry(const fs::path& entry_dir, const SigningKey& key) {
  std::string header = read_small_file(entry_dir / k_header_file).value();
  fs::path path = entry_dir / k_signature_file;
  util::AtomicFile file(path, util::Durability::unsynced); // like the entry it signs
  file.write(signature_text(key, header));
  file.commit();
  ::chmod(path.c_str(), 0444);
}

SignatureCheck check_entry_signature(const fs::path& entry_dir, const SigningKey& key,
                                     const std::optional<std::string>& header_text) {
  fs::path path = entry_dir / k_signature_file;
  PathKind kind = path_kind(path);
  if (kind == PathKind::missing) {
    return check_signature(key, "", "");
  }
  SignatureCheck check;
  check.state = SignatureState::mismatch;
  if (kind != PathKind::file) {
    check.problem = std::string(k_signature_file) + " is not a regular file";
    return check;
  }
  util::Expected<std::string> signature = read_small_file(path, 4096);
  util::Expected<std::string> header =
      header_text ? *header_text : read_small_file(entry_dir / k_header_file);
  // Unreadable: the entry's signature does not check.
  if (!signature || !header) {
    check.problem = (!signature ? signature : header).error().what();
    return check;
  }
  if (signature->empty()) {
    check.problem = std::string(k_signature_file) + " is empty";
    return check;
  }
  return check_signature(key, *header, *signature);
}

} // namespace npucc::cache

#pragma once

// Signed cache entries. With a key file configured (cache.key_file, NPUCC_CACHE_KEY_FILE,
// --cache-key-file), every entry written carries `entry.sig` beside its header:
//
//   signature = "npucc-cache-signature" SP "1" LF "hmac-sha256" SP 64HEXDIG LF
//
// The MAC is HMAC-SHA-256 under the key over "npucc-cache-entry-signature-v1" LF followed
// by the exact bytes of entry.npucc. The header holds the key, the model, the options and
// every file's name, size and SHA-256, and readers check each file against it, so the
// MAC covers the whole entry. A reader with a key treats an entry without a valid
// signature as corrupt (not used, compiled again); a reader without a key ignores
// entry.sig and relies on the checksums alone, which only catch accidents.
//
// These functions work on bytes and on entry folders, so any tier that imports entries
// (a remote cache) can check an archive's header and signature before storing it.

#include <filesystem>
#include <optional>
#include <string>

namespace npucc::cache {

inline constexpr const char* k_signature_file = "entry.sig";
inline constexpr size_t k_min_key_bytes = 16;
inline constexpr size_t k_max_key_bytes = 4096;

// The secret, read from a key file. Trailing CR/LF are dropped, so `openssl rand -hex 32
// > key` and the same key written without a newline agree.
struct SigningKey {
  std::filesystem::path file;
  std::string secret;
};

// Reads and checks a key file. Throws npucc::Error naming the file and the fix when it is
// missing, not a regular file, empty, shorter than k_min_key_bytes, longer than
// k_max_key_bytes, or readable or writable by others (world): chmod 600 (or 640 for a
// group that shares the cache).
SigningKey load_signing_key(const std::filesystem::path& file);

// The signature file's text for a header's bytes.
std::string signature_text(const SigningKey& key, const std::string& header_text);

enum class SignatureState { valid, missing, mismatch };
const char* signature_state_name(SignatureState state);

struct SignatureCheck {
  SignatureState state = SignatureState::missing;
  std::string problem; // one line naming the file, unless valid
};

// Checks `signature` (the contents of entry.sig; empty = none) against `header_text`
// with a constant-time comparison.
SignatureCheck check_signature(const SigningKey& key, const std::string& header_text,
                               const std::string& signature);

// HMAC-SHA-256 under the key over `context` LF `text`, as 64 hex digits: for the small
// records beside entries that decide what a reader receives (input digests) and so must
// be as trustworthy as entries. `context` names the record's kind, so that no record's
// MAC is valid as another kind's.
std::string record_mac(const SigningKey& key, const std::string& context, const std::string& text);
// Whether `hex` is record_mac(key, context, text), compared in constant time.
bool record_mac_matches(const SigningKey& key, const std::string& context, const std::string& text,
                        const std::string& hex);

// Writes entry.sig (0444) into `entry_dir`, which must hold entry.npucc. Throws npucc::Error.
void sign_entry(const std::filesystem::path& entry_dir, const SigningKey& key);

// Reads entry.sig of `entry_dir` (never through a symlink) and checks it against
// `header_text`, the entry.npucc bytes the caller parsed and will trust (reading the
// header again here would let it be swapped in between); nullopt: read entry.npucc too.
SignatureCheck check_entry_signature(const std::filesystem::path& entry_dir, const SigningKey& key,
                                     const std::optional<std::string>& header_text = std::nullopt);

} // namespace npucc::cache

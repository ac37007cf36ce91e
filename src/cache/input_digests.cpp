#include "cache/input_digests.h"

#include "cache/file_ops.h"
#include "cache/local_storage.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/file_io.h"
#include "util/safe_open.h"
#include "util/hex.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <cstdint>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_digest_magic = "npucc-input-digest 1";
constexpr const char* k_digest_mac_context = "npucc-input-digest";
constexpr uint64_t k_digest_file_limit = 4096;

// Signed digests are shared by everyone holding the key; unsigned ones are each user's
// own, so one member's digest for a file never replaces another's.
std::string digest_id(const util::FileStamp& stamp, bool signing) {
  std::string text = "npucc-input-stamp 1 " + util::stamp_text(stamp);
  if (!signing) {
    text += " user " + std::to_string(::geteuid());
  }
  return util::sha256_hex(text);
}

fs::path digest_path(const fs::path& root, const std::string& id) {
  return root / "digests" / id.substr(0, 2) / id;
}

std::string digest_text(const util::FileStamp& stamp, const std::string& sha256,
                        int64_t recorded_ns, const std::optional<SigningKey>& key) {
  std::string text = std::string(k_digest_magic) + "\nstamp " + util::stamp_text(stamp) +
                     "\nsha256 " + sha256 + "\nrecorded " + std::to_string(recorded_ns) + "\n";
  if (key) {
    text += "hmac-sha256 " + record_mac(*key, k_digest_mac_context, text) + "\n";
  }
  return text;
}

constexpr const char* k_sample_magic = "npucc-input-sample 1";

// The SHA-256 of the open file's size and of k_blocks blocks spread evenly over it, first
// and last included (the whole file when it is smaller): what a touched copy of the same
// bytes shares and a model with other weights almost never does. 256 KiB read at most.
std::optional<std::string> sample_of(int fd) {
  constexpr uint64_t k_blocks = 64;
  constexpr uint64_t k_block = 4096;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    return std::nullopt;
  }
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  util::Sha256 hash;
  hash.update(std::string(k_sample_magic) + " " + std::to_string(size) + "\n");
  char block[k_block];
  const bool whole = size <= k_blocks * k_block;
  for (uint64_t i = 0; i < (whole ? (size + k_block - 1) / k_block : k_blocks); ++i) {
    const uint64_t offset = whole ? i * k_block : i * (size - k_block) / (k_blocks - 1);
    ssize_t n = util::retry_on_eintr(
        [&] { return ::pread(fd, block, k_block, static_cast<off_t>(offset)); });
    if (n < 0) {
      return std::nullopt;
    }
    hash.update(block, static_cast<size_t>(n));
  }
  return hash.hex_digest();
}

fs::path sample_path(const fs::path& root, const std::string& sample) {
  std::string id = util::sha256_hex(std::string(k_sample_magic) + " " + sample);
  return root / "digests" / id.substr(0, 2) / id;
}

std::string sample_text(const std::string& sample, const std::string& sha256) {
  return std::string(k_sample_magic) + "\nsample " + sample + "\nsha256 " + sha256 + "\n";
}

// The digest a sample hint names; nullopt when `text` is not a hint (of `sample`, if given).
std::optional<std::string> parse_sample(const std::string& text,
                                        const std::optional<std::string>& sample) {
  std::vector<std::string> lines = util::split(text, '\n');
  if (lines.size() != 4 || lines[0] != k_sample_magic || !lines[3].empty() ||
      !util::starts_with(lines[1], "sample ") || !util::is_lower_hex(lines[1].substr(7), 64) ||
      (sample && lines[1] != "sample " + *sample) || !util::starts_with(lines[2], "sha256 ") ||
      !util::is_lower_hex(lines[2].substr(7), 64)) {
    return std::nullopt;
  }
  return lines[2].substr(7);
}

struct RecordedDigest {
  std::string sha256;
  int64_t recorded_ns = 0;
  std::string signed_text; // the four lines the MAC covers
  std::string mac;         // empty when unsigned
};

// A digest file's fields when it is one (for `stamp` unless nullopt); nullopt otherwise.
std::optional<RecordedDigest> parse_digest(const std::string& text,
                                           const std::optional<util::FileStamp>& stamp) {
  std::vector<std::string> lines = util::split(text, '\n');
  bool is_signed = lines.size() == 6 && util::starts_with(lines[4], "hmac-sha256 ");
  if ((lines.size() != 5 && !is_signed) || lines[0] != k_digest_magic || !lines.back().empty() ||
      !util::starts_with(lines[1], "stamp ") ||
      (stamp && lines[1] != "stamp " + util::stamp_text(*stamp)) ||
      !util::starts_with(lines[2], "sha256 ") || !util::starts_with(lines[3], "recorded ")) {
    return std::nullopt;
  }
  RecordedDigest out;
  out.sha256 = lines[2].substr(7);
  uint64_t recorded = 0;
  if (!util::is_lower_hex(out.sha256, 64) || !util::parse_digits(lines[3].substr(9), recorded) ||
      recorded > static_cast<uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  out.recorded_ns = static_cast<int64_t>(recorded);
  out.signed_text = util::join({lines[0], lines[1], lines[2], lines[3]}, "\n") + "\n";
  out.mac = is_signed ? lines[4].substr(12) : std::string();
  return out;
}

// A digest file read as it was opened (never through a symlink, never a FIFO), with its
// owner and mode; nullopt when absent, not a regular file or too large for one.
struct DigestFile {
  std::string text;
  struct stat info {};
};
std::optional<DigestFile> read_digest_file(const fs::path& path) {
  util::OpenRule rule = util::OpenRule::in_cache(); // util/safe_open.h
  rule.max_bytes = k_digest_file_limit;
  util::Expected<util::OpenedFile> file = util::open_regular_file(path, rule);
  if (!file) {
    return std::nullopt;
  }
  DigestFile out;
  out.info = file->info;
  util::Expected<std::string> text = util::read_up_to(file->fd.get(), k_digest_file_limit, path);
  if (!text) {
    return std::nullopt; // unreadable: the input is hashed instead
  }
  out.text = std::move(*text);
  return out;
}

// Why a recorded digest may not decide what this user receives; empty when it may.
// With a key only a signed one counts, whoever wrote it. Without one, only the user's
// own file that nobody else can write: the group may write the cache's folders, but
// whatever a member plants there is theirs, not this user's.
std::string why_not_authentic(const DigestFile& file, const RecordedDigest& digest,
                              const std::optional<SigningKey>& key) {
  if (key) {
    return record_mac_matches(*key, k_digest_mac_context, digest.signed_text, digest.mac)
               ? ""
               : "its recorded digest is not signed with the cache key (not used)";
  }
  if (file.info.st_uid != ::geteuid() || (file.info.st_mode & 022) != 0) {
    return "its recorded digest is another user's, or others may write it (not used)";
  }
  return "";
}

InputDigest hashed_because(std::string why) {
  InputDigest out;
  out.why_hashed = std::move(why);
  return out;
}

} // namespace

std::string input_digest_problem(const fs::path& path, const std::optional<SigningKey>& key) {
  std::optional<DigestFile> file = read_digest_file(path);
  std::optional<RecordedDigest> digest =
      file ? parse_digest(file->text, std::nullopt) : std::nullopt;
  if (!digest) {
    // A sample's hint decides nobody's entry: any well-formed one is in order.
    return file && parse_sample(file->text, std::nullopt) ? "" : "not an input digest";
  }
  // An unsigned one is some user's own (a cache also used without the key): never used
  // with the key, and no damage. One that claims a MAC that does not check is forged.
  if (key && !digest->mac.empty() &&
      !record_mac_matches(*key, k_digest_mac_context, digest->signed_text, digest->mac)) {
    return "an input digest whose signature does not check (forged, or signed with another "
           "key; never used)";
  }
  return "";
}

void DigestTally::count(const InputDigest& digest,
                        std::optional<std::pair<uint64_t, uint64_t>> file) {
  if (file && !m_counted.insert(*file).second) {
    return;
  }
  if (digest.from_stamp) {
    ++from_stamp;
    return;
  }
  if (hashed++ == 0) {
    why_hashed = digest.why_hashed;
  }
}

InputDigests::InputDigests(const LocalStorage* storage, DigestCacheMode mode)
    : m_storage(storage), m_mode(mode) {}

std::string InputDigests::why_untrusted(int fd) const {
  if (m_storage == nullptr) {
    return "the cache is not used";
  }
  if (m_mode == DigestCacheMode::off) {
    return "the digest cache is off: cache.digest_cache";
  }
  util::FileSystem fs = util::file_system_of(fd);
  if (m_mode == DigestCacheMode::automatic && !fs.keeps_stamps) {
    return "its file system, " + fs.name +
           ", may not keep inode times reliably: cache.digest_cache = on trusts it";
  }
  return "";
}

InputDigest InputDigests::look_up(int fd) const {
  std::optional<util::FileStamp> stamp = util::stamp_of(fd);
  if (!stamp) {
    return hashed_because("not a regular file");
  }
  std::string why = why_untrusted(fd);
  return why.empty() ? recorded_for(*stamp) : hashed_because(why);
}

InputDigest InputDigests::recorded_for(const util::FileStamp& stamp) const {
  const std::optional<SigningKey>& key = m_storage->signing_key();
  std::optional<DigestFile> file =
      read_digest_file(digest_path(m_storage->root(), digest_id(stamp, key.has_value())));
  std::optional<RecordedDigest> found = file ? parse_digest(file->text, stamp) : std::nullopt;
  if (!found) {
    return hashed_because("no digest recorded for the file as it is now: new, or changed since");
  }
  std::string why = why_not_authentic(*file, *found, key);
  if (!why.empty()) {
    return hashed_because(why);
  }
  if (found->recorded_ns > util::realtime_ns()) {
    return hashed_because("the clock reads earlier than when its digest was recorded");
  }
  if (stamp.ctime_ns > found->recorded_ns - k_racy_margin_ns) {
    return hashed_because("its digest was recorded too soon after a change");
  }
  InputDigest out;
  out.sha256 = found->sha256;
  out.from_stamp = true;
  return out;
}

InputDigest InputDigests::use_recorded(int fd) {
  InputDigest found = look_up(fd);
  std::optional<util::FileStamp> stamp = util::stamp_of(fd);
  if (found.from_stamp && stamp) {
    m_tally.count(found, std::make_pair(stamp->device, stamp->inode));
  }
  return found;
}

void InputDigests::record(int fd, const util::FileStamp& before, int64_t started_ns,
                          const std::string& sha256, const std::string& why) {
  m_tally.count(hashed_because(why), std::make_pair(before.device, before.inode));
  if (why_untrusted(fd).empty() && util::stamp_of(fd) == before) {
    store_unless_racy(before, started_ns, sha256);
  }
}

std::optional<std::string> InputDigests::likely_digest(int fd) const {
  std::optional<std::string> sample = m_storage ? sample_of(fd) : std::nullopt;
  std::optional<DigestFile> file =
      sample ? read_digest_file(sample_path(m_storage->root(), *sample)) : std::nullopt;
  return file ? parse_sample(file->text, sample) : std::nullopt;
}

void InputDigests::record_likely_digest(int fd, const std::string& sha256) const {
  if (m_storage == nullptr || m_storage->read_only()) {
    return;
  }
  std::optional<std::string> sample = sample_of(fd);
  if (!sample) {
    return;
  }
  const fs::path path = sample_path(m_storage->root(), *sample);
  std::optional<DigestFile> file = read_digest_file(path);
  if ((file && parse_sample(file->text, sample) == sha256) ||
      !m_storage->try_make_dir(m_storage->root() / "digests") ||
      !m_storage->try_make_dir(path.parent_path())) {
    return;
  }
  // Only a hint: one lost in a crash costs a likely hit its early lookup. Its writer's
  // alone to change, as an unsigned digest is.
  util::try_write_file_atomic(path, sample_text(*sample, sha256), util::Durability::unsynced,
                              util::FileMode::exactly(m_storage->modes().mutable_file & 0644));
}

void InputDigests::count_hashed(const std::string& why) {
  m_tally.count(hashed_because(why), std::nullopt);
}

void InputDigests::store_unless_racy(const util::FileStamp& stamp, int64_t started_ns,
                                     const std::string& sha256) const {
  if (m_storage->read_only() || stamp.ctime_ns > started_ns - k_racy_margin_ns) {
    return;
  }
  store(stamp, sha256);
}

void InputDigests::store(const util::FileStamp& stamp, const std::string& sha256) const {
  const std::optional<SigningKey>& key = m_storage->signing_key();
  std::string id = digest_id(stamp, key.has_value());
  // Signed, it may be shared with the group; unsigned, it is this user's alone.
  unsigned mode = m_storage->modes().mutable_file & (key ? 0777 : 0644);
  // Only an optimisation: when it cannot be written, the next compile hashes the file instead.
  if (!m_storage->try_make_dir(m_storage->root() / "digests") ||
      !m_storage->try_make_dir(m_storage->root() / "digests" / id.substr(0, 2))) {
    return;
  }
  // Unsynced: one lost in a crash (or left empty) only costs hashing the file again.
  util::try_write_file_atomic(digest_path(m_storage->root(), id),
                              digest_text(stamp, sha256, util::realtime_ns(), key),
                              util::Durability::unsynced, util::FileMode::exactly(mode));
}

} // namespace npucc::cache

#include "cache/input_digests.h"

#include "cache/file_ops.h"
#include "cache/local_storage.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/hex.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <cstdint>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_digest_magic = "npucc-input-digest 1";

std::string digest_id(const util::FileStamp& stamp) {
  return util::sha256_hex("npucc-input-stamp 1 " + util::stamp_text(stamp));
}

fs::path digest_path(const fs::path& root, const std::string& id) {
  return root / "digests" / id.substr(0, 2) / id;
}

std::string digest_text(const util::FileStamp& stamp, const std::string& sha256,
                        int64_t recorded_ns) {
  return std::string(k_digest_magic) + "\nstamp " + util::stamp_text(stamp) + "\nsha256 " + sha256 +
         "\nrecorded " + std::to_string(recorded_ns) + "\n";
}

struct RecordedDigest {
  std::string sha256;
  int64_t recorded_ns = 0;
};

// A digest file's fields when it is one, for `stamp`; nullopt otherwise.
std::optional<RecordedDigest> parse_digest(const std::string& text, const util::FileStamp& stamp) {
  std::vector<std::string> lines = util::split(text, '\n');
  if (lines.size() != 5 || lines[0] != k_digest_magic || !lines[4].empty() ||
      lines[1] != "stamp " + util::stamp_text(stamp) || !util::starts_with(lines[2], "sha256 ") ||
      !util::starts_with(lines[3], "recorded ")) {
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
  return out;
}

// Which file `fd` is, so the tally counts it once.
std::optional<std::pair<uint64_t, uint64_t>> file_of(int fd) {
  std::optional<util::FileStamp> stamp = util::stamp_of(fd);
  if (!stamp) {
    return std::nullopt;
  }
  return std::make_pair(stamp->device, stamp->inode);
}

} // namespace

bool is_input_digest_file(const fs::path& path) {
  try {
    std::string text = read_small_file(path, 4096);
    std::vector<std::string> lines = util::split(text, '\n');
    return lines.size() == 5 && lines[0] == k_digest_magic && util::starts_with(lines[1], "stamp ");
  } catch (const Error&) {
    return false;
  }
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
  InputDigest out;
  out.why_hashed = why_untrusted(fd);
  std::optional<util::FileStamp> stamp = util::stamp_of(fd);
  if (!out.why_hashed.empty() || !stamp) {
    out.why_hashed = stamp ? out.why_hashed : "not a regular file";
    return out;
  }
  std::optional<RecordedDigest> found;
  try {
    fs::path path = digest_path(m_storage->root(), digest_id(*stamp));
    if (path_kind(path) == PathKind::file) {
      found = parse_digest(read_small_file(path, 4096), *stamp);
    }
  } catch (const Error&) {
    // unreadable: as absent
  }
  if (!found) {
    out.why_hashed = "no digest recorded for the file as it is now: new, or changed since";
    return out;
  }
  if (found->recorded_ns > util::realtime_ns()) {
    out.why_hashed = "the clock reads earlier than when its digest was recorded";
    return out;
  }
  if (stamp->ctime_ns > found->recorded_ns - k_racy_margin_ns) {
    out.why_hashed = "its digest was recorded too soon after a change";
    return out;
  }
  out.sha256 = found->sha256;
  out.from_stamp = true;
  out.why_hashed.clear();
  return out;
}

std::optional<InputDigest> InputDigests::digest(int fd, const fs::path& path) {
  InputDigest found = look_up(fd);
  if (found.from_stamp) {
    m_tally.count(found, file_of(fd));
    return found;
  }
  std::optional<util::FileStamp> before = util::stamp_of(fd);
  int64_t started = util::realtime_ns();
  if (!before || ::lseek(fd, 0, SEEK_SET) != 0) {
    return std::nullopt;
  }
  found.sha256 = util::sha256_of_fd(fd, path).sha256;
  // A write while it was hashed: the digest may stand for no version of the file.
  if (util::stamp_of(fd) != before) {
    return std::nullopt;
  }
  record_if_trusted(fd, *before, started, found.sha256);
  m_tally.count(found, file_of(fd));
  return found;
}

void InputDigests::record(int fd, const util::FileStamp& before, int64_t started_ns,
                          const std::string& sha256, const std::string& why) {
  InputDigest hashed;
  hashed.why_hashed = why;
  m_tally.count(hashed, file_of(fd));
  record_if_trusted(fd, before, started_ns, sha256);
}

void InputDigests::count_hashed(const std::string& why) {
  InputDigest hashed;
  hashed.why_hashed = why;
  m_tally.count(hashed, std::nullopt);
}

void InputDigests::record_if_trusted(int fd, const util::FileStamp& before, int64_t started_ns,
                                     const std::string& sha256) const {
  if (!why_untrusted(fd).empty() || m_storage->read_only() ||
      before.ctime_ns > started_ns - k_racy_margin_ns || util::stamp_of(fd) != before) {
    return;
  }
  store(before, sha256);
}

void InputDigests::store(const util::FileStamp& stamp, const std::string& sha256) const {
  std::string id = digest_id(stamp);
  try {
    m_storage->make_dir(m_storage->root() / "digests");
    m_storage->make_dir(m_storage->root() / "digests" / id.substr(0, 2));
    // Unsynced: one lost in a crash (or left empty) only costs hashing the file again.
    util::write_file_atomic(
        digest_path(m_storage->root(), id), digest_text(stamp, sha256, util::realtime_ns()),
        util::Durability::unsynced, util::FileMode::exactly(m_storage->modes().mutable_file));
  } catch (const Error&) {
    // Only an optimisation: the next compile hashes the file instead.
  }
}

} // namespace npucc::cache

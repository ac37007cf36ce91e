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

InputDigest hashed_because(std::string why) {
  InputDigest out;
  out.why_hashed = std::move(why);
  return out;
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
  std::optional<util::FileStamp> stamp = util::stamp_of(fd);
  if (!stamp) {
    return hashed_because("not a regular file");
  }
  std::string why = why_untrusted(fd);
  return why.empty() ? recorded_for(*stamp) : hashed_because(why);
}

InputDigest InputDigests::recorded_for(const util::FileStamp& stamp) const {
  std::optional<RecordedDigest> found;
  try {
    fs::path path = digest_path(m_storage->root(), digest_id(stamp));
    if (path_kind(path) == PathKind::file) {
      found = parse_digest(read_small_file(path, 4096), stamp);
    }
  } catch (const Error&) {
    // unreadable: as absent
  }
  if (!found) {
    return hashed_because("no digest recorded for the file as it is now: new, or changed since");
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

std::optional<InputDigest> InputDigests::digest(int fd, const fs::path& path) {
  std::optional<util::FileStamp> before = util::stamp_of(fd);
  if (!before) {
    return std::nullopt;
  }
  std::string why = why_untrusted(fd);
  InputDigest found = why.empty() ? recorded_for(*before) : hashed_because(why);
  if (!found.from_stamp) {
    int64_t started = util::realtime_ns();
    if (::lseek(fd, 0, SEEK_SET) != 0) {
      return std::nullopt;
    }
    found.sha256 = util::sha256_of_fd(fd, path).sha256;
    // A write while it was hashed: the digest may stand for no version of the file.
    if (util::stamp_of(fd) != before) {
      return std::nullopt;
    }
    if (why.empty()) {
      store_unless_racy(*before, started, found.sha256);
    }
  }
  m_tally.count(found, std::make_pair(before->device, before->inode));
  return found;
}

void InputDigests::record(int fd, const util::FileStamp& before, int64_t started_ns,
                          const std::string& sha256, const std::string& why) {
  m_tally.count(hashed_because(why), std::make_pair(before.device, before.inode));
  if (why_untrusted(fd).empty() && util::stamp_of(fd) == before) {
    store_unless_racy(before, started_ns, sha256);
  }
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

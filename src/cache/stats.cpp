#include "cache/stats.h"

#include "cache/file_ops.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_stats_magic = "npucc-cache-stats 1";

Counters parse(const std::string& text) {
  Counters counters;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != k_stats_magic) {
    return counters; // damaged: start again rather than fail compiles
  }
  while (std::getline(in, line)) {
    auto parts = util::split(line, ' ');
    int64_t value = 0;
    if (parts.size() == 2 && util::parse_int64(parts[1], value) && value >= 0) {
      counters[parts[0]] = static_cast<uint64_t>(value);
    }
  }
  return counters;
}

std::string serialize(const Counters& counters) {
  std::string out = std::string(k_stats_magic) + "\n";
  for (const auto& [name, value] : counters) {
    out += name + " " + std::to_string(value) + "\n";
  }
  return out;
}

Counters read_unlocked(const fs::path& file) {
  if (path_kind(file) != PathKind::file) {
    return {};
  }
  try {
    return parse(util::read_file(file));
  } catch (const Error&) {
    return {};
  }
}

} // namespace

DirectoryLock::DirectoryLock(const fs::path& root, const std::string& name, Wait wait,
                             const Modes& modes) {
  try {
    make_cache_dir(root / "lock", modes);
  } catch (const Error&) {
    return;
  }
  fs::path path = root / "lock" / name;
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, modes.mutable_file);
  if (m_fd < 0) {
    return;
  }
  struct stat info {};
  if (::fstat(m_fd, &info) == 0 && info.st_uid == ::geteuid() &&
      (info.st_mode & 07777) != modes.mutable_file) {
    ::fchmod(m_fd, modes.mutable_file); // ours, created under a narrower umask
  }
  int operation = LOCK_EX | (wait == Wait::no ? LOCK_NB : 0);
  if (util::retry_on_eintr([&] { return ::flock(m_fd, operation); }) != 0) {
    ::close(m_fd);
    m_fd = -1;
    return;
  }
}

DirectoryLock::~DirectoryLock() {
  if (m_fd >= 0) {
    ::close(m_fd); // releases the flock
  }
}

StatsFile::StatsFile(fs::path root, Modes modes, CacheAccess access)
    : m_root(std::move(root)), m_modes(modes), m_access(access) {}

void StatsFile::update(const Counters& deltas, const Counters& set) const {
  if (m_access == CacheAccess::read_only) {
    return;
  }
  try {
    DirectoryLock lock(m_root, "stats", Wait::yes, m_modes);
    if (!lock.acquired()) {
      return;
    }
    Counters counters = read_unlocked(m_root / "stats");
    for (const auto& [name, delta] : deltas) {
      counters[name] += delta;
    }
    for (const auto& [name, value] : set) {
      counters[name] = value;
    }
    // Without fsync: counters are advisory, and a hit must not wait for the disk.
    util::write_file_atomic(m_root / "stats", serialize(counters), util::Durability::unsynced,
                            util::FileMode::exactly(m_modes.mutable_file));
  } catch (const Error&) {
    // statistics are advisory
  }
}

Counters StatsFile::read() const {
  return read_unlocked(m_root / "stats");
}

void StatsFile::zero() const {
  if (m_access == CacheAccess::read_only) {
    throw Error(m_root.string() + ": the cache is read-only; statistics not reset",
                "drop --read-only (NPUCC_CACHE_READ_ONLY, cache.read_only) to change the cache");
  }
  DirectoryLock lock(m_root, "stats", Wait::yes, m_modes);
  Counters old = read_unlocked(m_root / "stats");
  Counters fresh;
  if (old.count("last_cleanup") != 0) {
    fresh["last_cleanup"] = old["last_cleanup"];
  }
  fresh["zeroed"] = static_cast<uint64_t>(std::time(nullptr));
  util::write_file_atomic(m_root / "stats", serialize(fresh), util::Durability::synced,
                          util::FileMode::exactly(m_modes.mutable_file));
}

} // namespace npucc::cache

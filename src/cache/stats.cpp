#include "cache/stats.h"

#include "cache/file_ops.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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

// Far more than every counter's line.
constexpr uint64_t k_stats_file_limit = uint64_t{1} << 20;

Counters read_unlocked(const fs::path& file) {
  if (path_kind(file) != PathKind::file) {
    return {};
  }
  // Unreadable, a link, a FIFO (read_small_file opens it as util/safe_open.h does, so a
  // member's swap stalls no one) or absurdly large: the counters start again (statistics
  // are advisory).
  return parse(read_small_file(file, k_stats_file_limit).value_or(std::string()));
}

} // namespace

int64_t removal_lock_timeout_ms() {
  const char* text = std::getenv("NPUCC_CACHE_LOCK_TIMEOUT");
  if (text == nullptr || *text == '\0') {
    return k_default_removal_lock_seconds * 1000;
  }
  uint64_t seconds = 0;
  if (!util::parse_digits(text, seconds) || seconds > 86400) {
    throw Error("NPUCC_CACHE_LOCK_TIMEOUT=" + util::cut_for_message(text) +
                    ": not a number of seconds from 0 to 86400",
                "unset it for the default, " + std::to_string(k_default_removal_lock_seconds) +
                    " s");
  }
  return static_cast<int64_t>(seconds) * 1000;
}

namespace {

int64_t monotonic_ms() {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// flock(LOCK_EX) on `fd`, tried at once and then, while it is busy, every few ms up to
// `wait_ms`. A free lock costs one system call, as a blocking flock does.
bool lock_within(int fd, int64_t wait_ms, int64_t& waited_ms) {
  const int64_t start = monotonic_ms();
  int64_t pause_us = 500;
  while (true) {
    if (util::retry_on_eintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) == 0) {
      return true;
    }
    waited_ms = monotonic_ms() - start;
    if (errno != EWOULDBLOCK || waited_ms >= wait_ms) {
      return false;
    }
    struct timespec pause {0, static_cast<long>(pause_us * 1000)};
    ::nanosleep(&pause, nullptr);
    pause_us = std::min<int64_t>(pause_us * 2, 50000);
  }
}

} // namespace

DirectoryLock::DirectoryLock(const fs::path& root, const std::string& name, Wait wait,
                             const Modes& modes)
    : m_name(name) {
  const int64_t wait_ms = wait == Wait::no         ? 0
                          : wait == Wait::advisory ? k_advisory_lock_ms
                                                   : removal_lock_timeout_ms();
  if (!try_make_cache_dir(root / "lock", modes)) {
    return; // not acquired
  }
  fs::path path = root / "lock" / name;
  // O_NONBLOCK: a FIFO planted as a lock file must not stall the open.
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                modes.mutable_file);
  if (m_fd < 0) {
    return;
  }
  struct stat info {};
  if (::fstat(m_fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(m_fd);
    m_fd = -1;
    return;
  }
  if (info.st_uid == ::geteuid() && (info.st_mode & 07777) != modes.mutable_file) {
    ::fchmod(m_fd, modes.mutable_file); // ours, created under a narrower umask
  }
  if (!lock_within(m_fd, wait_ms, m_waited_ms)) {
    m_timed_out = errno == EWOULDBLOCK && wait != Wait::no;
    ::close(m_fd);
    m_fd = -1;
  }
}

std::string DirectoryLock::busy_text() const {
  return "lock/" + m_name + " is held by another process (waited " +
         std::to_string(m_waited_ms / 1000) + " s)";
}

DirectoryLock::~DirectoryLock() {
  if (m_fd >= 0) {
    ::close(m_fd); // releases the flock
  }
}

StatsFile::StatsFile(fs::path root, Modes modes, CacheAccess access)
    : m_root(std::move(root)), m_modes(modes), m_access(access) {}

bool StatsFile::update(const Counters& deltas, const Counters& set) const {
  if (m_access == CacheAccess::read_only) {
    return true;
  }
  // Statistics are advisory: a member holding their lock must not stall a compile.
  DirectoryLock lock(m_root, "stats", Wait::advisory, m_modes);
  if (!lock.acquired()) {
    return !lock.timed_out();
  }
  Counters counters = read_unlocked(m_root / "stats");
  for (const auto& [name, delta] : deltas) {
    counters[name] += delta;
  }
  for (const auto& [name, value] : set) {
    counters[name] = value;
  }
  // Without fsync: counters are advisory, and a hit must not wait for the disk. Not
  // written (a full disk): the counts are lost, the command goes on.
  util::try_write_file_atomic(m_root / "stats", serialize(counters), util::Durability::unsynced,
                              util::FileMode::exactly(m_modes.mutable_file));
  return true;
}

Counters StatsFile::read() const {
  return read_unlocked(m_root / "stats");
}

void StatsFile::zero() const {
  if (m_access == CacheAccess::read_only) {
    throw Error(m_root.string() + ": the cache is read-only; statistics not reset",
                "drop --read-only (NPUCC_CACHE_READ_ONLY, cache.read_only) to change the cache");
  }
  DirectoryLock lock(m_root, "stats", Wait::removal, m_modes);
  if (lock.timed_out()) {
    throw Error("cache stats --zero: " + lock.busy_text() + "; nothing changed",
                "run it again when the other process is done");
  }
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

#include "cache/stats.h"

#include "cache/file_ops.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
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

// Replaces the file by rename, without fsync: counters are advisory, and a hit must not
// wait for the disk.
void replace_file(const fs::path& path, const std::string& text) {
  fs::path tmp = util::temporary_sibling(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return;
  }
  bool written = true;
  try {
    util::write_all(fd, text.data(), text.size(), tmp);
  } catch (const Error&) {
    written = false;
  }
  if (::close(fd) != 0 || !written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
  }
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

DirectoryLock::DirectoryLock(const fs::path& root, const std::string& name, Wait wait) {
  try {
    ensure_real_directory(root / "lock");
  } catch (const Error&) {
    return;
  }
  fs::path path = root / "lock" / name;
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (m_fd < 0) {
    return;
  }
  int operation = LOCK_EX | (wait == Wait::no ? LOCK_NB : 0);
  while (::flock(m_fd, operation) != 0) {
    if (errno == EINTR) {
      continue;
    }
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

StatsFile::StatsFile(fs::path root) : m_root(std::move(root)) {}

void StatsFile::update(const Counters& deltas, const Counters& set) const {
  try {
    DirectoryLock lock(m_root, "stats", Wait::yes);
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
    replace_file(m_root / "stats", serialize(counters));
  } catch (const Error&) {
    // statistics are advisory
  }
}

Counters StatsFile::read() const {
  return read_unlocked(m_root / "stats");
}

void StatsFile::zero() const {
  DirectoryLock lock(m_root, "stats", Wait::yes);
  Counters old = read_unlocked(m_root / "stats");
  Counters fresh;
  if (old.count("last_cleanup") != 0) {
    fresh["last_cleanup"] = old["last_cleanup"];
  }
  fresh["zeroed"] = static_cast<uint64_t>(std::time(nullptr));
  util::write_file_atomic(m_root / "stats", serialize(fresh));
}

} // namespace npucc::cache

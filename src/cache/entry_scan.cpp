#include "cache/entry_scan.h"

#include "cache/file_ops.h"
#include "npucc/error.h"
#include "util/fd.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

using util::Fd;

constexpr int k_dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Calls visit(name) for every name in the open folder `fd` but "." and "..", straight
// from getdents64 (no DIR stream: opendir costs calls of its own). A read error ends the
// listing early, as it ends a directory_iterator.
template <typename Visit> void for_each_name(int fd, Visit visit) {
  alignas(8) char buffer[16384];
  while (true) {
    ssize_t n = ::getdents64(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;
    }
    for (ssize_t at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
      at += entry->d_reclen;
      const char* name = entry->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
        continue;
      }
      visit(name);
    }
  }
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// A name in the entry folder and what lstat said of it (nothing when it vanished).
struct Seen {
  std::string name;
  bool found = false;
  struct stat st {};
};

const Seen* find_seen(const std::vector<Seen>& seen, const std::string& name) {
  for (const auto& item : seen) {
    if (item.name == name) {
      return item.found ? &item : nullptr;
    }
  }
  return nullptr;
}

// What read_small_file requires of a header (no symlink, a regular file, at most 16 MiB),
// from a stat already taken. Throws npucc::Error with read_small_file's messages.
void check_header_stat(const struct stat& st, const fs::path& dir) {
  auto path = [&] { return (dir / k_header_file).string(); };
  if (S_ISLNK(st.st_mode)) {
    throw Error(path() + ": is a symlink; the cache never follows links");
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(path() + ": not a regular file");
  }
  constexpr uint64_t limit = uint64_t{16} << 20;
  if (static_cast<uint64_t>(st.st_size) > limit) {
    throw Error(path() + ": unexpectedly large (" + std::to_string(st.st_size) + " bytes)");
  }
}

// The header's bytes, read as read_small_file reads them but from the lstat already
// taken: one open and one read. Throws npucc::Error with read_small_file's messages.
std::string read_header(int dir_fd, const struct stat& st, const fs::path& dir) {
  check_header_stat(st, dir);
  auto path = [&] { return (dir / k_header_file).string(); };
  // O_NONBLOCK: should the file be swapped for a FIFO since the lstat, the open must
  // not wait for a writer.
  Fd fd(::openat(dir_fd, k_header_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    int error = errno;
    if (error == ELOOP) {
      throw Error(path() + ": is a symlink; the cache never follows links");
    }
    throw Error(path() + ": cannot open: " + std::strerror(error));
  }
  return read_up_to(fd.get(), static_cast<size_t>(st.st_size)); // short: parse says truncated
}

// KEY/entry.npucc under the open shard folder, opened without following any link: one
// openat2() call with RESOLVE_NO_SYMLINKS, or where it is missing the folder, then the
// file. O_NONBLOCK: a FIFO planted as the header must not make the open wait for a writer.
Fd open_header_beneath(int shard_fd, const std::string& key) {
  constexpr int k_flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  std::string path = key + "/" + k_header_file;
  open_how how{};
  how.flags = k_flags;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
  int fd = static_cast<int>(::syscall(SYS_openat2, shard_fd, path.c_str(), &how, sizeof how));
  // ENOSYS: an older kernel; EPERM: a seccomp filter (older container runtimes) that does
  // not know the call.
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
    return Fd(fd);
  }
  Fd dir_fd(::openat(shard_fd, key.c_str(), k_dir_flags));
  return Fd(dir_fd.get() < 0 ? -1 : ::openat(dir_fd.get(), k_header_file, k_flags));
}

} // namespace

std::vector<EntryShard> find_entry_shards(const fs::path& entries) {
  std::vector<EntryShard> shards;
  Fd entries_fd(::open(entries.c_str(), k_dir_flags));
  if (entries_fd.get() < 0) {
    return shards;
  }
  for_each_name(entries_fd.get(), [&](const char* name) {
    if (std::strlen(name) == 2 && is_hex_digit(name[0]) && is_hex_digit(name[1])) {
      shards.push_back({name, {}});
    }
  });
  std::sort(shards.begin(), shards.end(),
            [](const EntryShard& a, const EntryShard& b) { return a.name < b.name; });
  for (auto& shard : shards) {
    // O_NOFOLLOW: a planted link in entries/ is never listed through.
    Fd shard_fd(::openat(entries_fd.get(), shard.name.c_str(), k_dir_flags));
    if (shard_fd.get() < 0) {
      continue;
    }
    for_each_name(shard_fd.get(), [&](const char* name) {
      if (std::strlen(name) == 64 && name[0] == shard.name[0] && name[1] == shard.name[1] &&
          std::all_of(name, name + 64, is_hex_digit)) {
        shard.keys.emplace_back(name);
      }
    });
    std::sort(shard.keys.begin(), shard.keys.end());
  }
  shards.erase(std::remove_if(shards.begin(), shards.end(),
                              [](const EntryShard& shard) { return shard.keys.empty(); }),
               shards.end());
  return shards;
}

EntryInfo scan_entry(int at, const char* name, fs::path dir_path, const std::string& key,
                     std::string& header_text) {
  EntryInfo info;
  info.key = key;
  info.dir = std::move(dir_path);
  const fs::path& dir = info.dir;
  auto broken = [&](EntryState state, const std::string& problem) {
    info.state = state;
    info.problem = problem;
    return std::move(info);
  };
  // The folder itself: opened without following a link, its times from the open folder.
  Fd dir_fd(::openat(at, name, k_dir_flags));
  struct stat dir_stat {};
  if (dir_fd.get() >= 0 ? ::fstat(dir_fd.get(), &dir_stat) != 0
                        : ::fstatat(at, name, &dir_stat, AT_SYMLINK_NOFOLLOW) != 0) {
    return broken(EntryState::corrupt, "the entry is not a folder");
  }
  info.last_used = static_cast<int64_t>(dir_stat.st_mtim.tv_sec);
  if (S_ISLNK(dir_stat.st_mode)) {
    return broken(EntryState::corrupt, "the entry is a symlink");
  }
  if (!S_ISDIR(dir_stat.st_mode)) {
    return broken(EntryState::corrupt, "the entry is not a folder");
  }
  // A real folder that cannot be opened (no permission) lists nothing: incomplete below.
  std::vector<Seen> seen;
  if (dir_fd.get() >= 0) {
    for_each_name(dir_fd.get(), [&](const char* file) {
      Seen item;
      item.name = file;
      item.found = ::fstatat(dir_fd.get(), file, &item.st, AT_SYMLINK_NOFOLLOW) == 0;
      if (item.found) {
        info.bytes += S_ISREG(item.st.st_mode)   ? static_cast<uint64_t>(item.st.st_size)
                      : S_ISDIR(item.st.st_mode) ? tree_bytes(dir / item.name)
                                                 : 0;
      }
      seen.push_back(std::move(item));
    });
  }
  const Seen* header_seen = find_seen(seen, k_header_file);
  if (header_seen == nullptr) {
    return broken(EntryState::incomplete, std::string(k_header_file) + " is missing");
  }
  ParsedHeader parsed;
  try {
    header_text = read_header(dir_fd.get(), header_seen->st, dir);
    parsed = parse_header(header_text);
  } catch (const Error& e) {
    return broken(EntryState::corrupt, e.what());
  }
  if (parsed.problem == HeaderProblem::foreign_format) {
    return broken(EntryState::foreign, parsed.error);
  }
  if (parsed.problem != HeaderProblem::none) {
    return broken(EntryState::corrupt, parsed.error);
  }
  info.header = std::move(parsed.header);
  for (const auto& item : seen) {
    bool listed = item.name == k_header_file || item.name == k_signature_file;
    for (const auto& file : info.header.files) {
      listed = listed || file.name == item.name;
    }
    if (!listed) {
      info.strays.push_back(item.name);
    }
  }
  if (info.header.key != key) {
    return broken(EntryState::corrupt, "the header's key does not match the entry's folder");
  }
  for (const auto& file : info.header.files) {
    const Seen* found = find_seen(seen, file.name);
    if (found == nullptr) {
      return broken(EntryState::incomplete, file.name + " is missing");
    }
    if (!S_ISREG(found->st.st_mode)) {
      return broken(EntryState::corrupt, file.name + " is not a regular file");
    }
    uint64_t size = static_cast<uint64_t>(found->st.st_size);
    if (size != file.bytes) {
      info.truncated = size < file.bytes;
      return broken(EntryState::corrupt,
                    file.name + " has " + std::to_string(size) + " bytes, the header records " +
                        std::to_string(file.bytes) + (info.truncated ? " (truncated)" : ""));
    }
  }
  return info;
}

std::optional<std::string> entry_compiler_version(int shard_fd, const std::string& key) {
  Fd header_fd = open_header_beneath(shard_fd, key);
  struct stat st {};
  if (header_fd.get() < 0 || ::fstat(header_fd.get(), &st) != 0) {
    return std::nullopt;
  }
  try {
    check_header_stat(st, key);
  } catch (const Error&) {
    return std::nullopt;
  }
  ParsedHeader parsed = parse_header(read_up_to(header_fd.get(), static_cast<size_t>(st.st_size)));
  if (parsed.problem != HeaderProblem::none || parsed.header.key != key) {
    return std::nullopt;
  }
  return parsed.header.compiler_version;
}

} // namespace npucc::cache

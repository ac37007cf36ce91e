#include "cache/entry_scan.h"

#include "cache/file_ops.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/safe_open.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <optional>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

using util::Fd;

constexpr int k_entry_dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Calls visit(name) for every name in the open folder `fd` but "." and "..", straight
// from getdents64 (no DIR stream: opendir costs calls of its own). A read error ends the
// listing early, as it ends a directory_iterator.
template <typename Visit> void for_each_name(int fd, Visit visit) {
  alignas(8) char buffer[16384];
  while (true) {
    ssize_t n = util::retry_on_eintr([&] { return ::getdents64(fd, buffer, sizeof buffer); });
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

// The most a header may hold, as read_small_file's default.
constexpr uint64_t k_header_limit = uint64_t{16} << 20;

// What read_small_file requires of a header (no symlink, a regular file, at most 16 MiB),
// from a stat already taken: read_small_file's messages when it is not so.
util::Outcome check_header_stat(const struct stat& st, const fs::path& dir) {
  auto path = [&] { return (dir / k_header_file).string(); };
  if (S_ISLNK(st.st_mode)) {
    return Error(path() + ": is a symlink; the cache never follows links");
  }
  if (!S_ISREG(st.st_mode)) {
    return Error(path() + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > k_header_limit) {
    return Error(path() + ": unexpectedly large (" + std::to_string(st.st_size) + " bytes)");
  }
  return util::success();
}

// read_small_file's message for a header of the folder `dir` that failed to open.
Error open_failure(const fs::path& dir, int error) {
  std::string path = (dir / k_header_file).string();
  if (error == ELOOP) {
    return Error(path + ": is a symlink; the cache never follows links");
  }
  return Error(path + ": cannot open: " + std::strerror(error));
}

// The header's bytes, read as read_small_file reads them but from the lstat already
// taken: one open and one read. The error, with read_small_file's messages, makes the
// entry corrupt.
util::Expected<std::string> read_header(int dir_fd, const struct stat& st, const fs::path& dir) {
  if (util::Outcome fits = check_header_stat(st, dir); !fits) {
    return fits.error();
  }
  // Should the file be swapped for a FIFO or a link since the lstat, the open neither
  // waits for a writer nor follows it (util/safe_open.h), and what is read is what fstat
  // checked.
  util::OpenRule rule = util::OpenRule::in_cache();
  rule.max_bytes = k_header_limit;
  util::Expected<util::OpenedFile> file =
      util::open_regular_file_at(dir_fd, k_header_file, dir / k_header_file, rule);
  if (!file) {
    return file.error();
  }
  // Short: the parse says truncated.
  return util::read_up_to(file->fd.get(), static_cast<size_t>(file->info.st_size),
                          dir / k_header_file);
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
  Fd dir_fd(::openat(shard_fd, key.c_str(), k_entry_dir_flags));
  return Fd(dir_fd.get() < 0 ? -1 : ::openat(dir_fd.get(), k_header_file, k_flags));
}

// The bytes of KEY/entry.npucc under the open shard folder (open_header_beneath), checked
// as read_header checks them; nullopt when there is none. The error, with read_header's
// messages naming the folder under `shard_path`, makes the entry corrupt.
util::Expected<std::optional<std::string>> read_header_beneath(int shard_fd, const std::string& key,
                                                               const fs::path& shard_path) {
  Fd fd = open_header_beneath(shard_fd, key);
  if (fd.get() < 0) {
    if (errno == ENOENT) {
      return std::optional<std::string>();
    }
    return open_failure(shard_path / key, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Error((shard_path / key / k_header_file).string() +
                 ": cannot read: " + std::strerror(errno));
  }
  if (util::Outcome fits = check_header_stat(st, shard_path / key); !fits) {
    return fits.error();
  }
  util::Expected<std::string> text =
      util::read_up_to(fd.get(), static_cast<size_t>(st.st_size), shard_path / key / k_header_file);
  if (!text) {
    return text.error();
  }
  return std::optional<std::string>(std::move(*text));
}

// Sets the state and problem of a damaged entry; returns false, for the judge_* below.
bool mark_broken(EntryInfo& info, EntryState state, std::string problem) {
  info.state = state;
  info.problem = std::move(problem);
  return false;
}

// `info` marked broken: what the scan returns for a damaged entry.
EntryInfo broken(EntryInfo info, EntryState state, std::string problem) {
  mark_broken(info, state, std::move(problem));
  return info;
}

// The entry folder's own (lstat) status: its last use, and whether it is a real folder.
// False, with the state and problem set, when it is not.
bool judge_folder(EntryInfo& info, const struct stat& st) {
  info.last_used_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                      static_cast<int64_t>(st.st_mtim.tv_nsec);
  if (S_ISLNK(st.st_mode)) {
    return mark_broken(info, EntryState::corrupt, "the entry is a symlink");
  }
  if (!S_ISDIR(st.st_mode)) {
    return mark_broken(info, EntryState::corrupt, "the entry is not a folder");
  }
  return true;
}

// The parsed header taken into `info` when it is of this cache format and for `key`.
// False, with the state and problem set, when it is not.
bool judge_header(EntryInfo& info, ParsedHeader& parsed, const std::string& key) {
  if (parsed.problem == HeaderProblem::none && parsed.header.key != key) {
    parsed.problem = HeaderProblem::corrupt;
    parsed.error = "the header's key does not match the entry's folder";
  }
  if (parsed.problem != HeaderProblem::none) {
    return mark_broken(info,
                       parsed.problem == HeaderProblem::foreign_format ? EntryState::foreign
                                                                       : EntryState::corrupt,
                       std::move(parsed.error));
  }
  info.header = std::move(parsed.header);
  return true;
}

// A file the header lists, from its lstat (nullptr: missing): present, regular and of the
// recorded size. False, with the state and problem set, when it is not.
bool judge_file(EntryInfo& info, const EntryFile& file, const struct stat* st) {
  if (st == nullptr) {
    return mark_broken(info, EntryState::incomplete, file.name + " is missing");
  }
  if (!S_ISREG(st->st_mode)) {
    return mark_broken(info, EntryState::corrupt, file.name + " is not a regular file");
  }
  if ((st->st_mode & 07777) != k_entry_file_mode && info.unexpected_mode.empty()) {
    // npucc writes every entry file 0444: another mode is someone's doing, and a file
    // that can change is no entry file (a hard-linked output would change with it).
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st->st_mode & 07777));
    info.unexpected_mode = file.name + " has mode " + mode + ", not 0444 (changed since stored)";
  }
  uint64_t size = static_cast<uint64_t>(st->st_size);
  if (size != file.bytes) {
    info.truncated = size < file.bytes;
    return mark_broken(info, EntryState::corrupt,
                       file.name + " has " + std::to_string(size) + " bytes, the header records " +
                           std::to_string(file.bytes) + (info.truncated ? " (truncated)" : ""));
  }
  return true;
}

} // namespace

std::vector<EntryShard> find_entry_shards(const fs::path& entries) {
  std::vector<EntryShard> shards;
  Fd entries_fd(::open(entries.c_str(), k_entry_dir_flags));
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
    Fd shard_fd(::openat(entries_fd.get(), shard.name.c_str(), k_entry_dir_flags));
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

EntryInfo scan_entry(int at, const char* name, const fs::path& dir, const std::string& key,
                     std::string& header_text) {
  EntryInfo info;
  info.key = key;
  // The folder itself: opened without following a link, its times from the open folder.
  Fd dir_fd(::openat(at, name, k_entry_dir_flags));
  struct stat dir_stat {};
  if (dir_fd.get() >= 0 ? ::fstat(dir_fd.get(), &dir_stat) != 0
                        : ::fstatat(at, name, &dir_stat, AT_SYMLINK_NOFOLLOW) != 0) {
    return broken(std::move(info), EntryState::corrupt, "the entry is not a folder");
  }
  if (!judge_folder(info, dir_stat)) {
    return info;
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
    return broken(std::move(info), EntryState::incomplete,
                  std::string(k_header_file) + " is missing");
  }
  util::Expected<std::string> text = read_header(dir_fd.get(), header_seen->st, dir);
  if (!text) {
    return broken(std::move(info), EntryState::corrupt, text.error().what());
  }
  header_text = std::move(*text);
  ParsedHeader parsed = parse_header(header_text);
  if (!judge_header(info, parsed, key)) {
    return info;
  }
  for (const auto& item : seen) {
    bool listed = item.name == k_header_file || item.name == k_signature_file;
    for (const auto& file : info.header.files) {
      listed = listed || file.name == item.name;
    }
    if (!listed) {
      info.strays.push_back(item.name);
    }
  }
  for (const auto& file : info.header.files) {
    const Seen* found = find_seen(seen, file.name);
    if (!judge_file(info, file, found == nullptr ? nullptr : &found->st)) {
      return info;
    }
  }
  return info;
}

EntryInfo scan_entry_files(int shard_fd, const std::string& key, const fs::path& shard_path) {
  EntryInfo info;
  info.key = key;
  struct stat st {};
  if (::fstatat(shard_fd, key.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return broken(std::move(info), EntryState::corrupt, "the entry is not a folder");
  }
  if (!judge_folder(info, st)) {
    return info;
  }
  util::Expected<std::optional<std::string>> text = read_header_beneath(shard_fd, key, shard_path);
  if (!text) {
    return broken(std::move(info), EntryState::corrupt, text.error().what());
  }
  if (!*text) {
    return broken(std::move(info), EntryState::incomplete,
                  std::string(k_header_file) + " is missing");
  }
  info.bytes += (*text)->size();
  ParsedHeader parsed = parse_header(**text);
  if (!judge_header(info, parsed, key)) {
    return info;
  }
  // Each listed file by its path below the shard: a stat reads sizes, never contents, so
  // the folder swapped for a link since the first stat would mislead only this listing.
  std::string path = key + "/";
  for (const auto& file : info.header.files) {
    path.resize(key.size() + 1);
    path += file.name;
    bool found = ::fstatat(shard_fd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (found && S_ISREG(st.st_mode)) {
      info.bytes += static_cast<uint64_t>(st.st_size);
    }
    if (!judge_file(info, file, found ? &st : nullptr)) {
      return info;
    }
  }
  return info;
}

std::optional<std::string> entry_compiler_version(int shard_fd, const std::string& key) {
  // Damaged or missing: not counted.
  std::optional<std::string> text = read_header_beneath(shard_fd, key, {}).value_or(std::nullopt);
  if (!text) {
    return std::nullopt;
  }
  ParsedHeader parsed = parse_header(*text);
  if (parsed.problem != HeaderProblem::none || parsed.header.key != key) {
    return std::nullopt;
  }
  return parsed.header.compiler_version;
}

} // namespace npucc::cache

#include "util/safe_open.h"

#include "npucc/error.h"
#include "util/disk.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace npucc::util {

namespace {

int open_flags(const OpenRule& rule) {
  int flags = (rule.access & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  return rule.links == OpenRule::Links::refuse ? flags | O_NOFOLLOW : flags;
}

std::string octal(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode & 07777);
  return text;
}

const char* kind_name(mode_t mode) {
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISDIR(mode)) {
    return "a folder";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  return "a special file";
}

// The descriptor `raw` (from open or openat, errno set when negative) checked under `rule`.
Expected<OpenedFile> checked(int raw, const std::filesystem::path& path, const OpenRule& rule) {
  OpenedFile out{Fd(raw)};
  if (raw < 0) {
    int error = errno;
    if (error == ELOOP && rule.links == OpenRule::Links::refuse) {
      return Error(path.string() + ": is a symlink; npucc does not follow links there");
    }
    return Error(path.string() + ": cannot open: " + std::strerror(error));
  }
  if (::fstat(raw, &out.info) != 0) {
    return Error(path.string() + ": cannot stat: " + std::strerror(errno));
  }
  std::string why = why_not_acceptable(out.info, rule);
  if (!why.empty()) {
    return Error(path.string() + ": " + why);
  }
  // A regular file: reads never block anyway, but whoever takes the descriptor (a copy,
  // mmap, a child) should see an ordinary one.
  int flags = ::fcntl(raw, F_GETFL);
  if (flags >= 0) {
    ::fcntl(raw, F_SETFL, flags & ~O_NONBLOCK);
  }
  return out;
}

} // namespace

std::string why_not_acceptable(const struct stat& info, const OpenRule& rule) {
  if (!S_ISREG(info.st_mode)) {
    return std::string("is ") + kind_name(info.st_mode) + ", not a regular file";
  }
  if (!rule.owners.empty() &&
      std::find(rule.owners.begin(), rule.owners.end(), info.st_uid) == rule.owners.end()) {
    return "is owned by user " + std::to_string(info.st_uid) + ", not by a user it may come from";
  }
  const unsigned mode = info.st_mode & 07777;
  if (rule.exact_mode && mode != (*rule.exact_mode & 07777)) {
    return "has mode " + octal(mode) + ", not " + octal(*rule.exact_mode);
  }
  if ((mode & rule.forbidden_bits) != 0) {
    return "has mode " + octal(mode) + ", open to others";
  }
  if (rule.max_bytes && static_cast<uint64_t>(info.st_size) > *rule.max_bytes) {
    return "unexpectedly large (" + std::to_string(info.st_size) + " bytes, at most " +
           std::to_string(*rule.max_bytes) + ")";
  }
  return "";
}

Expected<OpenedFile> open_regular_file(const std::filesystem::path& path, const OpenRule& rule) {
  return checked(disk().open(path, open_flags(rule), 0), path, rule);
}

Expected<OpenedFile> open_regular_file_at(int dir_fd, const char* name,
                                          const std::filesystem::path& path,
                                          const OpenRule& rule) {
  return checked(::openat(dir_fd, name, open_flags(rule)), path, rule);
}

} // namespace npucc::util

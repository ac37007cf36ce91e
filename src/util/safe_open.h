#pragma once

// The one way npucc opens a file it did not create just now and that someone else may
// have named or placed: a file in a cache folder (which a group member may rename,
// replace or swap for a FIFO), in TMPDIR, or named by a user's file (a models file, an
// options file). A FIFO or device opened the usual way blocks in open() until a writer
// comes, and a symlink leads anywhere; so the file is opened
//   O_NOFOLLOW (unless the rule allows a link) | O_NONBLOCK | O_CLOEXEC,
// then fstat'ed on that descriptor: it must be a regular file, of an owner and a mode the
// caller accepts, before a byte is read; O_NONBLOCK is then cleared (it means nothing to
// a regular file, but the descriptor is handed on). What is checked is what is read: no
// lstat before the open, no stat of the path after it.
//
// Who may own the file and which modes are acceptable is the caller's rule (OpenRule): a
// cache's blob must be 0444 and owned by the writer or the cache folder's owner, a key
// file must not be open to others, a recorded digest must be the reader's own.

#include "util/expected.h"
#include "util/fd.h"

#include <cstdint>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>
#include <vector>

namespace npucc::util {

struct OpenRule {
  // Whether a final symlink is followed. Inside a cache or TMPDIR: never. A file the user
  // named on the command line or in a config may be a link (a dotfile manager's, a
  // secret store's), and what it leads to is checked as the file.
  enum class Links { refuse, follow };
  Links links = Links::refuse;
  // The users that may own it; empty: any.
  std::vector<uid_t> owners;
  // When set, the permission bits (07777) must be exactly this.
  std::optional<unsigned> exact_mode;
  // Permission bits that must all be clear (S_IWOTH: nobody else may write it).
  unsigned forbidden_bits = 0;
  // The most bytes it may hold; nullopt: no bound.
  std::optional<uint64_t> max_bytes;
  // For O_WRONLY or O_RDWR opens of an existing file (no O_CREAT here: creation is
  // AtomicFile's and O_EXCL's); O_RDONLY by default.
  int access = O_RDONLY;

  // The rule of a file inside a cache, owned by anyone (checksums or the caller decide).
  static OpenRule in_cache() { return OpenRule{}; }
  // A file the user named (command line, environment, config): followed if a link.
  static OpenRule named_by_user() {
    OpenRule rule;
    rule.links = Links::follow;
    return rule;
  }
};

// A regular file opened under `rule`, with what fstat said of it on the descriptor.
struct OpenedFile {
  Fd fd;
  struct stat info {};
};

// Opens `path` as above. The error (npucc::Error, one line naming the path) says what is
// wrong: missing or unreadable (with errno's text), a symlink, not a regular file (a
// FIFO, a folder), the wrong owner or mode, too large.
Expected<OpenedFile> open_regular_file(const std::filesystem::path& path,
                                       const OpenRule& rule = OpenRule{});

// The same for `name` in the open folder `dir_fd` (openat), `path` naming it in errors.
Expected<OpenedFile> open_regular_file_at(int dir_fd, const char* name,
                                          const std::filesystem::path& path,
                                          const OpenRule& rule = OpenRule{});

// Why an fstat result breaks `rule`; empty when it does not. For a descriptor opened some
// other way (a socket's peer, a file created here), and for tests.
std::string why_not_acceptable(const struct stat& info, const OpenRule& rule);

} // namespace npucc::util

#include "util/file_stamp.h"

#include <cstdio>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

namespace npucc::util {

namespace {

int64_t nanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

struct KnownFileSystem {
  uint64_t magic;
  const char* name;
  bool keeps_stamps;
};

// statfs f_type values (linux/magic.h and the file systems' own headers).
constexpr KnownFileSystem k_file_systems[] = {
    {0xEF53, "ext4", true},
    {0x58465342, "xfs", true},
    {0x9123683E, "btrfs", true},
    {0x01021994, "tmpfs", true},
    {0x858458F6, "ramfs", true},
    {0x2FC12FC1, "zfs", true},
    {0xF2F52010, "f2fs", true},
    {0xCA451A4E, "bcachefs", true},
    {0x3153464A, "jfs", true},
    {0x52654973, "reiserfs", true},
    // A container's file system: its own kernel times; a copy-up gives a new inode and
    // ctime, which only costs a re-hash.
    {0x794C7630, "overlay", true},
    {0x6969, "nfs", false},
    {0x517B, "smb", false},
    {0xFF534D42, "cifs", false},
    {0xFE534D42, "smb2", false},
    {0x65735546, "fuse", false},
    {0x01021997, "9p", false},
    {0x00C36400, "ceph", false},
    {0x0BD00BD0, "lustre", false},
    {0x47504653, "gpfs", false},
    {0x5346414F, "afs", false},
    {0x6B414653, "afs", false},
    {0x4D44, "vfat", false},
    {0x2011BAB0, "exfat", false},
    {0x5346544E, "ntfs", false},
    {0x7366746E, "ntfs3", false},
    {0x9660, "iso9660", false},
    {0x73717368, "squashfs", true}, // read-only: its files never change
};

} // namespace

std::optional<FileStamp> stamp_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  FileStamp out;
  out.device = static_cast<uint64_t>(st.st_dev);
  out.inode = static_cast<uint64_t>(st.st_ino);
  out.size = static_cast<uint64_t>(st.st_size);
  out.mtime_ns = nanoseconds(st.st_mtim);
  out.ctime_ns = nanoseconds(st.st_ctim);
  return out;
}

std::string stamp_text(const FileStamp& stamp) {
  return std::to_string(stamp.device) + " " + std::to_string(stamp.inode) + " " +
         std::to_string(stamp.size) + " " + std::to_string(stamp.mtime_ns) + " " +
         std::to_string(stamp.ctime_ns);
}

FileSystem file_system_of(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) {
    return {"unknown", false};
  }
  // f_type is a signed word on some ABIs: compare the low 32 bits.
  uint64_t magic = static_cast<uint64_t>(fs.f_type) & 0xFFFFFFFFu;
  for (const auto& known : k_file_systems) {
    if (known.magic == magic) {
      return {known.name, known.keeps_stamps};
    }
  }
  char name[32];
  std::snprintf(name, sizeof name, "type 0x%llx", static_cast<unsigned long long>(magic));
  return {name, false};
}

int64_t realtime_ns() {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return nanoseconds(now);
}

} // namespace npucc::util

#pragma once

#include <cstdint>
#include <optional>
#include <string>

// What the kernel says about a regular file's bytes without reading them: any write,
// truncation or replacement changes one of these (a write sets the ctime to the current
// time, and nothing a user runs, `touch -r` included, can set it back). The basis of
// the input digest cache (cache/input_digests.h), as of ccache's inode cache and git's
// index. Unlike npucc::FileIdentity (npucc/file_identity.h), which a hard link or a chmod
// leaves as it is, a stamp holds the ctime: those change it, and cost a re-hash.
namespace npucc::util {

struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileStamp& other) const {
    return device == other.device && inode == other.inode && size == other.size &&
           mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns;
  }
  bool operator!=(const FileStamp& other) const { return !(*this == other); }
};

// fstat of an open file; nullopt unless it is a regular file.
std::optional<FileStamp> stamp_of(int fd);

// "DEV INO SIZE MTIME CTIME", decimal, times in nanoseconds since the epoch.
std::string stamp_text(const FileStamp& stamp);

// The file system holding an open file, and whether its stamps can be trusted: local
// disk file systems whose inode numbers and ctimes this kernel keeps itself. Not network
// file systems (NFS, SMB, Ceph, Lustre, GPFS, AFS: another client's write shows late, or
// the server's clock sets the times), FUSE (whatever the daemon reports), 9p or FAT-like
// ones (no ctime, 2 s times). Unknown types are not trusted either.
struct FileSystem {
  std::string name; // "ext4", "nfs", or "type 0x1234abcd"
  bool keeps_stamps = false;
};
FileSystem file_system_of(int fd);

// CLOCK_REALTIME in nanoseconds: the clock file times are set from.
int64_t realtime_ns();

} // namespace npucc::util

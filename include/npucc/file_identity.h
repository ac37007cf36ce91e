#pragma once

#include <cstdint>

namespace npucc {

// What a regular file looked like at one moment: a write, a truncation or a replacement
// changes it; a hard link or a rename does not.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& other) const {
    return device == other.device && inode == other.inode && size == other.size &&
           mtime_ns == other.mtime_ns;
  }
  bool operator!=(const FileIdentity& other) const { return !(*this == other); }
};

} // namespace npucc

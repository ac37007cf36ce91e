#include "util/disk.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

namespace npucc::util {

namespace {

RealDisk g_real_disk;
std::atomic<Disk*> g_disk{&g_real_disk};

} // namespace

int RealDisk::open(const std::filesystem::path& path, int flags, mode_t mode) {
  return ::open(path.c_str(), flags, mode);
}

ssize_t RealDisk::read(int fd, void* data, size_t size, const std::filesystem::path&) {
  return ::read(fd, data, size);
}

ssize_t RealDisk::pread(int fd, void* data, size_t size, off_t offset,
                        const std::filesystem::path&) {
  return ::pread(fd, data, size, offset);
}

ssize_t RealDisk::write(int fd, const void* data, size_t size, const std::filesystem::path&) {
  return ::write(fd, data, size);
}

ssize_t RealDisk::copy_range(int from, int to, size_t size, const std::filesystem::path&) {
  return ::copy_file_range(from, nullptr, to, nullptr, size, 0);
}

int RealDisk::fsync(int fd, const std::filesystem::path&) {
  return ::fsync(fd);
}

int RealDisk::rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  return ::rename(from.c_str(), to.c_str());
}

int RealDisk::renameat(int from_dir, const char* from, int to_dir, const char* to,
                       const std::filesystem::path&) {
  return ::renameat(from_dir, from, to_dir, to);
}

int RealDisk::unlink(const std::filesystem::path& path) {
  return ::unlink(path.c_str());
}

int RealDisk::unlinkat(int dir, const char* name, int flags, const std::filesystem::path&) {
  return ::unlinkat(dir, name, flags);
}

Disk& disk() {
  return *g_disk.load(std::memory_order_acquire);
}

ScopedDisk::ScopedDisk(Disk& fake) : m_previous(g_disk.exchange(&fake)) {}

ScopedDisk::~ScopedDisk() {
  g_disk.store(m_previous);
}

} // namespace npucc::util

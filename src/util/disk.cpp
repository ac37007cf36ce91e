#include "util/disk.h"

#include <unistd.h>

namespace npucc::util {

namespace {

RealDisk g_real_disk;
std::atomic<Disk*> g_disk{&g_real_disk};

} // namespace

ssize_t RealDisk::write(int fd, const void* data, size_t size, const std::filesystem::path&) {
  return ::write(fd, data, size);
}

ssize_t RealDisk::copy_range(int from, int to, size_t size, const std::filesystem::path&) {
  return ::copy_file_range(from, nullptr, to, nullptr, size, 0);
}

Disk& disk() {
  return *g_disk.load(std::memory_order_acquire);
}

ScopedDisk::ScopedDisk(Disk& fake) : m_previous(g_disk.exchange(&fake)) {}

ScopedDisk::~ScopedDisk() {
  g_disk.store(m_previous);
}

} // namespace npucc::util

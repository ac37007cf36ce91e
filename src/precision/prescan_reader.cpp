#include "precision/prescan_reader.h"

#include "util/eintr.h"

#include <algorithm>
#include <fcntl.h>
#include <string_view>

namespace npucc::precision {

namespace {

constexpr size_t k_read_size = 1 << 20;

} // namespace

bool feed_file(OverflowPrescan& prescan, int file, int fd, char* buffer, size_t size) {
  uint64_t position = 0;
  while (true) {
    ssize_t n = util::read_some(fd, buffer, size);
    if (n <= 0) {
      return n == 0;
    }
    prescan.feed(file, position, std::string_view(buffer, static_cast<size_t>(n)));
    position += static_cast<uint64_t>(n);
  }
}

std::vector<std::pair<util::Fd, int>>
open_prescan_files(const OverflowPrescan& prescan, const std::vector<std::filesystem::path>& skip) {
  std::vector<std::pair<util::Fd, int>> files;
  for (size_t i = 0; i < prescan.paths().size(); ++i) {
    const auto& path = prescan.paths()[i];
    if (std::find(skip.begin(), skip.end(), path) != skip.end()) {
      continue;
    }
    util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() >= 0) {
      files.emplace_back(std::move(fd), static_cast<int>(i));
    }
  }
  return files;
}

PrescanReader::PrescanReader(OverflowPrescan& prescan, bool second_thread)
    : m_prescan(prescan), m_files(open_prescan_files(prescan)), m_buffer(new char[k_read_size]) {
  if (second_thread) {
    m_thread = std::thread([this] { read_all(); });
  } else {
    read_all();
  }
}

PrescanReader::~PrescanReader() {
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

void PrescanReader::read_all() {
  for (auto& [fd, file] : m_files) {
    feed_file(m_prescan, file, fd.get(), m_buffer.get(), k_read_size);
  }
  m_prescan.end();
}

} // namespace npucc::precision

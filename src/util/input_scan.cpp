#include "util/input_scan.h"

#include "npucc/error.h"
#include "util/sha256.h"

#include <cerrno>
#include <cstring>

namespace npucc::util {

namespace {

constexpr size_t k_read_size = 1 << 20;

bool same_file(const InputFile& a, const InputFile& b) {
  return a.stamp().device == b.stamp().device && a.stamp().inode == b.stamp().inode;
}

// The observer's index of `file`, or -1.
int observer_index(const FileObserver* observer, const InputFile& file) {
  if (observer == nullptr) {
    return -1;
  }
  const auto& wanted = observer->files();
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (same_file(*wanted[i], file)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

} // namespace

struct InputScan::File {
  std::shared_ptr<const InputFile> file;
  std::unique_ptr<Sha256> hash; // null: read for the observer alone
  int observed = -1;            // index in the observer's files, or -1
  uint64_t bytes = 0;
  int error = 0; // errno of a failed read
};

InputScan::InputScan(std::vector<std::shared_ptr<const InputFile>> hashed, FileObserver* observer,
                     On on)
    : m_observer(observer), m_buffer(new char[k_read_size]) {
  std::vector<bool> covered(observer != nullptr ? observer->files().size() : 0, false);
  for (auto& input : hashed) {
    File file;
    file.hash = std::make_unique<Sha256>();
    file.observed = observer_index(observer, *input);
    if (file.observed >= 0) {
      covered[static_cast<size_t>(file.observed)] = true;
    }
    file.file = std::move(input);
    m_files.push_back(std::move(file));
  }
  for (size_t i = 0; i < covered.size(); ++i) {
    if (!covered[i]) {
      File file;
      file.file = observer->files()[i];
      file.observed = static_cast<int>(i);
      m_files.push_back(std::move(file));
    }
  }
  m_started_ns = realtime_ns();
  if (on == On::this_thread) {
    read_all();
    return;
  }
  // Only pread(), SHA-256 updates and feeding from here on: no allocation, no lock.
  m_thread = std::thread([this] { read_all(); });
}

InputScan::~InputScan() {
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

void InputScan::read_all() {
  for (File& file : m_files) {
    bool read = file.file->read_all(m_buffer.get(), k_read_size,
                                    [&](uint64_t position, std::string_view chunk) {
                                      if (file.hash) {
                                        file.hash->update(chunk.data(), chunk.size());
                                      }
                                      if (file.observed >= 0) {
                                        m_observer->feed(file.observed, position, chunk);
                                      }
                                      file.bytes += chunk.size();
                                    });
    file.error = read ? 0 : errno;
  }
  if (m_observer != nullptr) {
    m_observer->end();
  }
}

Expected<std::vector<InputScan::Hashed>> InputScan::try_wait() {
  if (m_thread.joinable()) {
    m_thread.join();
  }
  std::vector<Hashed> out;
  for (File& file : m_files) {
    if (!file.hash) {
      continue; // the observer counts what it lacks itself
    }
    if (file.error != 0) {
      return Error(file.file->path().string() + ": read failed: " + std::strerror(file.error));
    }
    out.push_back({file.hash->hex_digest(), file.bytes});
  }
  return out;
}

} // namespace npucc::util

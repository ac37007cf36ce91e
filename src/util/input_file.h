#pragma once

#include "util/expected.h"
#include "util/fd.h"
#include "util/file_stamp.h"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

// The input files of one compile (the model, its external data), each opened once.
//
// Before, the model file was opened four times on a cache miss (its digest, its mapping,
// the cut of its weights, the overflow prescan) and each external file twice, each time by
// path: a rename between two opens could hand two readers two different files. Now one
// open and one fstat stand for the file, and every reader uses that descriptor: the
// digest and the key's hash read it with pread(), the mapping maps it, the cut and the
// prescan pread it. Whoever needs a file asks the compile's InputFiles, which gives the one
// already open.
namespace npucc::util {

class InputFile {
public:
  // Whether the last component of the path may be a symbolic link. External data is
  // resolved inside the model's folder first (model/external_data.h), so its resolved path
  // has no link left to follow: one appearing there now was put there meanwhile.
  enum class Links { follow, refuse };

  // Opened read-only and non-blocking (a FIFO named as a model must not hang the open),
  // then checked to be a regular file. The error names the path and the reason.
  static Expected<std::shared_ptr<InputFile>> open(const std::filesystem::path& path, Links links);

  int fd() const { return m_fd.get(); }
  const std::filesystem::path& path() const { return m_path; }
  // The file as the open found it (one fstat).
  const FileStamp& stamp() const { return m_stamp; }

  // The SHA-256 of the bytes, once a reader has it (the digest cache or a hash): the
  // others take it from here instead of reading the file again. Set from one thread,
  // before the file is handed to another.
  const std::optional<std::string>& sha256() const { return m_sha256; }
  void set_sha256(std::string sha256) { m_sha256 = std::move(sha256); }

  // Reads the whole file from offset 0 with pread() through `buffer` (`size` bytes),
  // handing each chunk to `each(offset, chunk)`. pread leaves the descriptor's offset
  // alone, so readers never disturb each other. No allocation, no lock: safe on a thread
  // while the process forks. False on a read error (errno says which).
  template <typename Each> bool read_all(char* buffer, size_t size, Each&& each) const {
    uint64_t offset = 0;
    while (true) {
      ssize_t n = read_at(buffer, size, offset);
      if (n <= 0) {
        return n == 0;
      }
      each(offset, std::string_view(buffer, static_cast<size_t>(n)));
      offset += static_cast<uint64_t>(n);
    }
  }

private:
  InputFile(std::filesystem::path path, Fd fd, const FileStamp& stamp)
      : m_path(std::move(path)), m_fd(std::move(fd)), m_stamp(stamp) {}
  ssize_t read_at(char* buffer, size_t size, uint64_t offset) const;

  std::filesystem::path m_path;
  Fd m_fd;
  FileStamp m_stamp;
  std::optional<std::string> m_sha256;
};

// The files one compile has opened, by path: asking again for a path gives the file
// already open. Any thread (a lock guards the table).
class InputFiles {
public:
  // The open's npucc::Error when it fails.
  Expected<std::shared_ptr<InputFile>> try_open(const std::filesystem::path& path,
                                                InputFile::Links links);
  // try_open, throwing its error.
  std::shared_ptr<InputFile> open(const std::filesystem::path& path, InputFile::Links links) {
    return try_open(path, links).value();
  }
  // The file already open at `path`, or nullptr.
  std::shared_ptr<InputFile> find(const std::filesystem::path& path) const;

private:
  mutable std::mutex m_mutex;
  std::map<std::filesystem::path, std::shared_ptr<InputFile>> m_files;
};

} // namespace npucc::util

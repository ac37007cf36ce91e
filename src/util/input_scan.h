#pragma once

#include "util/expected.h"
#include "util/file_observer.h"
#include "util/input_file.h"

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

// The one read of a compile's input files: each file whose SHA-256 is wanted (the cache
// key's external data) is read once from its start and hashed, and every chunk read is
// handed to an observer that wants that file (FileObserver); the files the observer wants
// that nobody hashes are read for it alone. On a second thread the compile's first stages
// go on meanwhile.
namespace npucc::util {

class InputScan {
public:
  enum class On { this_thread, second_thread };

  // Whatever allocates or may take a lock happens here, before the thread starts; the
  // thread only reads (pread), hashes and feeds, so a fork() meanwhile (the isolated
  // ONNX checker) cannot copy a lock it holds. `observer` may be null; it and the files
  // must outlive the scan.
  InputScan(std::vector<std::shared_ptr<const InputFile>> hashed, FileObserver* observer, On on);
  ~InputScan();
  InputScan(const InputScan&) = delete;
  InputScan& operator=(const InputScan&) = delete;

  struct Hashed {
    std::string sha256;
    uint64_t bytes = 0;
  };
  // Waits for the read; the hashes in the order given, or the npucc::Error naming a file
  // whose read failed.
  Expected<std::vector<Hashed>> try_wait();
  // try_wait, throwing its error.
  std::vector<Hashed> wait() { return try_wait().value(); }
  // The clock (util::realtime_ns) before the first byte was read.
  int64_t started_ns() const { return m_started_ns; }

private:
  struct File;
  void read_all();

  std::vector<File> m_files;
  FileObserver* m_observer;
  std::unique_ptr<char[]> m_buffer;
  int64_t m_started_ns = 0;
  std::thread m_thread;
};

} // namespace npucc::util

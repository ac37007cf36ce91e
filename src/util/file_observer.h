#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace npucc::util {

class InputFile;

// Something that wants to see the bytes of some input files as they are read anyway: the
// mixed-precision rewrite's overflow prescan (precision/overflow_prescan.h) counts the
// weights in the chunks the cache key's hash reads (util/input_scan.h). Through this the
// reader knows nothing of what is counted, or why.
class FileObserver {
public:
  virtual ~FileObserver() = default;
  // The files it wants, each once; a file's index here is `file` in feed(). It holds them,
  // so they stay open while a reader may still be reading them for it.
  virtual const std::vector<std::shared_ptr<const InputFile>>& files() const = 0;
  // The bytes of file `file` from `position`: in order, from position 0, from one thread.
  // No allocation, no lock (the thread may run while the process forks).
  virtual void feed(int file, uint64_t position, std::string_view chunk) = 0;
  // Every file read, or given up: nothing more will come.
  virtual void end() = 0;
};

} // namespace npucc::util

#pragma once

#include "util/file_io.h"

#include <atomic>
#include <cstdint>

namespace npucc::output {

// What the writers of one compile share with the thread that waits for them
// (GraphWriting): a flag that stops them (a cache hit, an error in another writer), and
// the bytes they have written so far, for a long write's progress; and the mode of the
// files they create (a graph for the runtime child is private: runtime_graph_file.h).
struct WriteControl {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bytes_written{0};
  util::FileMode file_mode = util::FileMode::from_umask();
};

} // namespace npucc::output

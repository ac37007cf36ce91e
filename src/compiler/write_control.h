#pragma once

#include <atomic>
#include <cstdint>

namespace npucc::compiler {

// What the writers of one compile share with the thread that waits for them
// (GraphWriting): a flag that stops them (a cache hit, an error in another writer), and
// the bytes they have written so far, for a long write's progress.
struct WriteControl {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bytes_written{0};
};

} // namespace npucc::compiler

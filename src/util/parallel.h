#pragma once

#include <cstddef>
#include <functional>

namespace npucc::util {

// The most threads one process's parallel work may use (parallel_for, the cache key's
// background hashing): one per core unless set lower, as `cache populate -j N` does to
// share N cores among its worker processes. 0 is the default. Returns the previous setting.
unsigned thread_budget();
unsigned set_thread_budget(unsigned threads);

// Runs work(0..count-1) on up to thread_budget() threads (the calling thread is one of
// them); indexes are handed out one at a time, so uneven items balance. The first
// exception a work item throws is rethrown here once every thread has stopped.
void parallel_for(size_t count, const std::function<void(size_t)>& work);

} // namespace npucc::util

#pragma once

#include <cstddef>
#include <functional>

namespace npucc::util {

// Runs work(0..count-1) on up to one thread per core (the calling thread is one of
// them); indexes are handed out one at a time, so uneven items balance. The first
// exception a work item throws is rethrown here once every thread has stopped.
void parallel_for(size_t count, const std::function<void(size_t)>& work);

} // namespace npucc::util

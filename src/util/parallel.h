#pragma once

#include <cstddef>
#include <functional>

namespace npucc::util {

// Runs work(0..count-1) on up to one thread per core (the calling thread included) and
// returns when all are done. If some throw, the first exception is rethrown here after
// every thread has finished; the other items still run.
void parallel_for(size_t count, const std::function<void(size_t)>& work);

} // namespace npucc::util

#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace npucc::util {

namespace {

std::atomic<unsigned> g_budget{0};

} // namespace

unsigned thread_budget() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  unsigned budget = g_budget.load();
  return budget == 0 ? cores : std::min(budget, cores);
}

unsigned set_thread_budget(unsigned threads) {
  return g_budget.exchange(threads);
}

void parallel_for(size_t count, const std::function<void(size_t)>& work) {
  size_t threads = std::min<size_t>(count, thread_budget());
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) {
      work(i);
    }
    return;
  }
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) {
          failure = std::current_exception();
        }
        next = count; // the others stop at their next item
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& thread : pool) {
    thread.join();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
}

} // namespace npucc::util

#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <utility>

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

// One job run on a second thread while the caller goes on (the job may own move-only
// things, as open files). finish() waits and rethrows what the job threw; the destructor
// waits too, dropping the error (a caller that unwinds has one already).
class BackgroundTask {
public:
  template <typename Job>
  explicit BackgroundTask(Job job)
      : m_thread([this, job = std::move(job)]() mutable {
          try {
            job();
          } catch (...) {
            m_error = std::current_exception();
          }
        }) {}
  ~BackgroundTask() { wait(); }
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  void finish() {
    wait();
    if (m_error) {
      std::rethrow_exception(std::exchange(m_error, nullptr));
    }
  }

private:
  void wait() {
    if (m_thread.joinable()) {
      m_thread.join();
    }
  }

  std::exception_ptr m_error; // before m_thread: set by it
  std::thread m_thread;
};

} // namespace npucc::util

#include "cache/remote/hash_worker.h"

namespace npucc::cache::remote {

HashWorker::HashWorker(util::Sha256* also)
    : m_also(also), m_file(std::make_unique<util::Sha256>()) {
  for (size_t i = 0; i < k_pieces; ++i) {
    // Not value-initialised: zeroing megabytes that are overwritten at once is waste.
    m_storage.emplace_back(new char[k_piece_bytes]);
    m_free.push_back(m_storage.back().get());
  }
  m_thread = std::thread([this] { run(); });
}

HashWorker::~HashWorker() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  m_thread.join();
}

bool HashWorker::hash_next(std::unique_lock<std::mutex>& lock) {
  if (m_hashing || m_queue.empty()) {
    return false;
  }
  auto [piece, bytes] = m_queue.front();
  m_queue.pop_front();
  m_hashing = true; // pieces are hashed in queue order, by one thread at a time
  lock.unlock();
  m_file->update(piece, bytes);
  if (m_also != nullptr) {
    m_also->update(piece, bytes);
  }
  lock.lock();
  m_hashing = false;
  m_free.push_back(piece);
  m_changed.notify_all();
  return true;
}

char* HashWorker::take() {
  std::unique_lock<std::mutex> lock(m_mutex);
  while (m_free.empty()) {
    // On a busy machine the worker may not get a core for a while: rather than wait
    // for it, the caller hashes the next piece itself.
    if (!hash_next(lock)) {
      m_changed.wait(lock);
    }
  }
  char* piece = m_free.back();
  m_free.pop_back();
  return piece;
}

void HashWorker::submit(char* piece, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_queue.emplace_back(piece, bytes);
  }
  m_changed.notify_all();
}

void HashWorker::wait() {
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_queue.empty() || m_hashing) {
    if (!hash_next(lock)) {
      m_changed.wait(lock);
    }
  }
}

std::string HashWorker::file_digest() {
  wait();
  // Nothing is queued or being hashed until the next submit(): m_file is ours meanwhile.
  std::string digest = m_file->hex_digest();
  m_file = std::make_unique<util::Sha256>();
  return digest;
}

void HashWorker::run() {
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_stop) {
    if (!hash_next(lock)) {
      m_changed.wait(lock);
    }
  }
}

} // namespace npucc::cache::remote

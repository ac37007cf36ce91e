#pragma once

// Hashes a received bundle's files on a second thread, so the SHA-256 of a download
// costs no time of its own: the receiving thread fills a piece, submits it, writes it to
// disk and takes the next free piece while this thread hashes the one before. A fixed
// pool of pieces bounds the memory (k_pieces * k_piece_bytes) and how far the hash may
// fall behind. When it is that far behind (the machine is busy and the worker gets no
// core), the receiving thread hashes pieces itself instead of waiting: never slower than
// hashing inline.
#include "util/sha256.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace npucc::cache::remote {

class HashWorker {
public:
  static constexpr size_t k_piece_bytes = size_t{1} << 20;
  static constexpr size_t k_pieces = 16;

  // `also`, when given, is fed every byte too (format 1's whole-object digest); the
  // caller reads it only after wait().
  explicit HashWorker(util::Sha256* also = nullptr);
  ~HashWorker();
  HashWorker(const HashWorker&) = delete;
  HashWorker& operator=(const HashWorker&) = delete;

  // A free piece of k_piece_bytes; while every piece is queued or being hashed, hashes
  // queued pieces itself.
  char* take();
  // Queues the first `bytes` of `piece` (from take()) as the current file's next bytes.
  // The piece stays readable by the caller (to write it out) until its next take().
  void submit(char* piece, size_t bytes);
  // Waits for every queued piece, then returns the hex SHA-256 of all bytes submitted
  // since the previous call (or since the start) and begins the next file.
  std::string file_digest();
  // Returns once every queued piece is hashed (hashing them itself if need be).
  void wait();

private:
  void run();
  // Hashes the first queued piece unless another thread is hashing or nothing is
  // queued; `lock` (held) is released meanwhile. True when it hashed one.
  bool hash_next(std::unique_lock<std::mutex>& lock);

  util::Sha256* m_also;
  std::vector<std::unique_ptr<char[]>> m_storage;
  std::unique_ptr<util::Sha256> m_file; // the worker's while pieces are queued
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::pair<char*, size_t>> m_queue;
  std::vector<char*> m_free;
  bool m_hashing = false; // a piece is out of the queue, not yet back in m_free
  bool m_stop = false;
  std::thread m_thread; // last: started once the rest is ready
};

} // namespace npucc::cache::remote

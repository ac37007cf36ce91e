#pragma once

// The two Redis commands whose values are bundles, spoken in RESP (the Redis protocol) on
// the connected socket that hiredis opened, authenticated and selected: a GET whose value
// streams into a BundleReceiver as it arrives, and a SET whose value streams from the
// bundle file. hiredis's redisCommand gathers a whole reply, and takes a whole argument,
// in memory (a 150 MB bundle cost 320 MB of RSS on a hit); these hold one 1 MiB buffer.
//
//   command = "*" count CRLF 1*( "$" length CRLF bytes CRLF )
//   reply   = "$" length CRLF bytes CRLF      ; a value
//           | "$-1" CRLF                      ; no such key
//           | "+" text CRLF | "-" text CRLF   ; a status, an error ("-NOAUTH ...")
//           | ":" number CRLF | "*" ...       ; anything else: unexpected here
//
// One command is in flight at a time, so every byte read belongs to its reply. Each wait
// is bounded by the socket's timeouts (SO_RCVTIMEO/SO_SNDTIMEO, which redisSetTimeout
// sets), and all of them by the transfer's deadline: a server trickling a value (or an
// endless reply line) a few bytes a second is cut off there. A false return means the
// connection is out of step with the protocol: close it.
#include "cache/remote/bundle.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace npucc::cache::remote::resp {

enum class ReplyKind { value, nil, status, error, other };

struct Reply {
  ReplyKind kind = ReplyKind::other;
  std::string text;   // status, error: the line after "+" or "-"
  uint64_t bytes = 0; // value: its length
};

using Deadline = std::chrono::steady_clock::time_point;

class Connection {
public:
  // `fd` stays the caller's (hiredis's context owns it). Nothing is sent or read past
  // `deadline`.
  Connection(int fd, Deadline deadline);

  // Sends a command of `words` (AUTH, SELECT) and reads its one-line reply: a status or
  // an error. False with `problem` as for get().
  bool command(std::initializer_list<std::string_view> words, Reply& reply, std::string& problem);

  // Sends GET `name` and reads the reply's first line; with a value, feeds its bytes to
  // `receiver` (with their count first) until they are all there or it refuses them.
  // `received` counts the value's bytes read. False with `problem` on an I/O error, a
  // timeout, a malformed reply or a refusal by the receiver.
  bool get(const std::string& name, BundleReceiver& receiver, Reply& reply, uint64_t& received,
           std::string& problem);
  // Sends SET `name` with the contents of the file `from` as the value, then reads the
  // reply (status "OK", or an error). False with `problem` as for get().
  bool set(const std::string& name, const std::filesystem::path& from, Reply& reply,
           std::string& problem);

private:
  bool send_bytes(const char* data, size_t size, std::string& problem);
  bool fill(std::string& problem);
  bool read_head(Reply& reply, std::string& problem);
  bool read_value(uint64_t bytes, BundleReceiver& receiver, uint64_t& received,
                  std::string& problem);
  bool io_failed(const char* what, std::string& problem) const;
  bool wait_for(short events, const char* what, std::string& problem) const;

  int m_fd;
  Deadline m_deadline;
  std::unique_ptr<char[]> m_buffer;
  size_t m_begin = 0; // unread bytes: [m_begin, m_end)
  size_t m_end = 0;
};

} // namespace npucc::cache::remote::resp

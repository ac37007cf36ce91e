#include "cache/remote/resp_stream.h"

#include "util/eintr.h"
#include "util/fd.h"
#include "util/safe_open.h"
#include "util/strings.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cache::remote::resp {

namespace {

constexpr size_t k_buffer_bytes = size_t{1} << 20;
// Far past any bundle, short of overflowing the arithmetic.
constexpr uint64_t k_max_value_bytes = uint64_t{1} << 50;

// "$<length>\r\n<bytes>\r\n" for each argument but the last, whose bytes the caller sends
// after its length line.
std::string command_head(std::initializer_list<std::string_view> words, uint64_t last_bytes) {
  std::string out = "*" + std::to_string(words.size() + 1) + "\r\n";
  for (std::string_view word : words) {
    out += "$" + std::to_string(word.size()) + "\r\n";
    out.append(word.data(), word.size());
    out += "\r\n";
  }
  out += "$" + std::to_string(last_bytes) + "\r\n";
  return out;
}

// The decimal length of "$<length>"; false unless it is all digits and in range.
bool parse_length(std::string_view text, uint64_t& value) {
  return util::parse_digits(text, value) && value <= k_max_value_bytes;
}

} // namespace

Connection::Connection(int fd, Deadline deadline)
    : m_fd(fd), m_deadline(deadline), m_buffer(new char[k_buffer_bytes]) {}

// Until the socket is ready for `events`, at most until the deadline: past it, false with
// the problem. The socket's own timeout still bounds the recv or send that follows.
bool Connection::wait_for(short events, const char* what, std::string& problem) const {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        m_deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      problem = std::string(what) + ": not done within the timeout (a total for the transfer)";
      return false;
    }
    pollfd ready{m_fd, events, 0};
    int n = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (n > 0) {
      return true;
    }
    if (n < 0 && errno != EINTR) {
      return io_failed(what, problem);
    }
  }
}

bool Connection::io_failed(const char* what, std::string& problem) const {
  if (errno == EAGAIN || errno == EWOULDBLOCK) {
    problem = std::string(what) + ": no answer within the timeout";
  } else {
    problem = std::string(what) + " failed: " + std::strerror(errno);
  }
  return false;
}

bool Connection::send_bytes(const char* data, size_t size, std::string& problem) {
  while (size > 0) {
    if (!wait_for(POLLOUT, "sending", problem)) {
      return false;
    }
    ssize_t n = util::retry_on_eintr([&] { return ::send(m_fd, data, size, MSG_NOSIGNAL); });
    if (n <= 0) {
      return io_failed("sending", problem);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads what the socket has into the free end of the buffer (moved to the front first).
bool Connection::fill(std::string& problem) {
  if (m_begin > 0) {
    std::memmove(m_buffer.get(), m_buffer.get() + m_begin, m_end - m_begin);
    m_end -= m_begin;
    m_begin = 0;
  }
  if (!wait_for(POLLIN, "receiving", problem)) {
    return false;
  }
  ssize_t n = util::retry_on_eintr(
      [&] { return ::recv(m_fd, m_buffer.get() + m_end, k_buffer_bytes - m_end, 0); });
  if (n == 0) {
    problem = "the server closed the connection in the middle of a reply";
    return false;
  }
  if (n < 0) {
    return io_failed("receiving", problem);
  }
  m_end += static_cast<size_t>(n);
  return true;
}

bool Connection::read_head(Reply& reply, std::string& problem) {
  const char* line_end = nullptr;
  while ((line_end = static_cast<const char*>(
              ::memmem(m_buffer.get() + m_begin, m_end - m_begin, "\r\n", 2))) == nullptr) {
    if (m_end - m_begin == k_buffer_bytes) {
      problem = "a reply line longer than " + std::to_string(k_buffer_bytes) + " bytes";
      return false;
    }
    if (!fill(problem)) {
      return false;
    }
  }
  std::string_view line(m_buffer.get() + m_begin,
                        static_cast<size_t>(line_end - (m_buffer.get() + m_begin)));
  m_begin += line.size() + 2;
  reply = Reply{};
  if (line.empty()) {
    problem = "an empty reply line";
    return false;
  }
  char type = line[0];
  std::string_view rest = line.substr(1);
  if (type == '$') {
    if (rest == "-1") {
      reply.kind = ReplyKind::nil;
      return true;
    }
    reply.kind = ReplyKind::value;
    if (!parse_length(rest, reply.bytes)) {
      problem = "a malformed value length \"" + std::string(rest.substr(0, 20)) + "\"";
      return false;
    }
    return true;
  }
  reply.kind = type == '+' ? ReplyKind::status : type == '-' ? ReplyKind::error : ReplyKind::other;
  reply.text.assign(rest.data(), rest.size());
  return true;
}

bool Connection::read_value(uint64_t bytes, BundleReceiver& receiver, uint64_t& received,
                            std::string& problem) {
  receiver.expect_size(bytes);
  received = 0;
  // The value's bytes, then its CRLF: nothing past them is read.
  while (received < bytes) {
    if (m_begin == m_end) {
      m_begin = m_end = 0;
      if (!fill(problem)) {
        return false;
      }
    }
    size_t take = static_cast<size_t>(std::min<uint64_t>(bytes - received, m_end - m_begin));
    bool accepted = receiver.feed(m_buffer.get() + m_begin, take);
    m_begin += take;
    received += take;
    if (!accepted) {
      problem = "the value was refused: " + receiver.problem();
      return false;
    }
  }
  while (m_end - m_begin < 2) {
    if (!fill(problem)) {
      return false;
    }
  }
  if (std::memcmp(m_buffer.get() + m_begin, "\r\n", 2) != 0) {
    problem = "a value not followed by CRLF";
    return false;
  }
  m_begin += 2;
  return true;
}

bool Connection::command(std::initializer_list<std::string_view> words, Reply& reply,
                         std::string& problem) {
  std::string out = "*" + std::to_string(words.size()) + "\r\n";
  for (std::string_view word : words) {
    out += "$" + std::to_string(word.size()) + "\r\n";
    out.append(word.data(), word.size());
    out += "\r\n";
  }
  return send_bytes(out.data(), out.size(), problem) && read_head(reply, problem);
}

bool Connection::get(const std::string& name, BundleReceiver& receiver, Reply& reply,
                     uint64_t& received, std::string& problem) {
  received = 0;
  std::string head = command_head({"GET"}, name.size()) + name + "\r\n";
  if (!send_bytes(head.data(), head.size(), problem) || !read_head(reply, problem)) {
    return false;
  }
  return reply.kind != ReplyKind::value || read_value(reply.bytes, receiver, received, problem);
}

bool Connection::set(const std::string& name, const std::filesystem::path& from, Reply& reply,
                     std::string& problem) {
  util::Expected<util::OpenedFile> opened = util::open_regular_file(from);
  if (!opened) {
    problem = std::string("cannot read the bundle: ") + opened.error().what();
    return false;
  }
  util::Fd in = std::move(opened->fd);
  uint64_t left = static_cast<uint64_t>(opened->info.st_size);
  std::string head = command_head({"SET", name}, left);
  if (!send_bytes(head.data(), head.size(), problem)) {
    return false;
  }
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, k_buffer_bytes));
    ssize_t got = util::read_full(in.get(), m_buffer.get(), want);
    if (got != static_cast<ssize_t>(want)) {
      // The server waits for the rest of the command: the caller drops the connection, and
      // with it the half-sent value, which is never stored.
      problem = from.string() + ": changed while it was being uploaded";
      return false;
    }
    if (!send_bytes(m_buffer.get(), want, problem)) {
      return false;
    }
    left -= want;
  }
  return send_bytes("\r\n", 2, problem) && read_head(reply, problem);
}

} // namespace npucc::cache::remote::resp

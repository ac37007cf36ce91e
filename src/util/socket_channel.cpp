#include "util/socket_channel.h"

#include "npucc/error.h"
#include "util/eintr.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <sys/socket.h>
#include <sys/wait.h>

namespace npucc::util {

bool send_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = retry_on_eintr(
        [&] { return ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL); });
    if (n <= 0) {
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool receive_some(int fd, std::string& buffer) {
  // Straight into the buffer's end: into the room a caller reserved for a message whose
  // length it knows, else in large reads (a graph of tens of MB crosses in a few hundred).
  constexpr size_t k_read = 1 << 18;
  const size_t had = buffer.size();
  const size_t room = buffer.capacity() - had;
  const size_t want = room >= 4096 ? std::min(room, k_read) : k_read; // resize() zero-fills
  buffer.resize(had + want);
  ssize_t n = retry_on_eintr([&] { return ::recv(fd, buffer.data() + had, want, 0); });
  buffer.resize(had + (n > 0 ? static_cast<size_t>(n) : 0));
  return n > 0;
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    const char* name = ::strsignal(signal);
    return "was killed by signal " + std::to_string(signal) +
           (name != nullptr ? std::string(" (") + name + ")" : std::string());
  }
  if (WIFEXITED(status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return "stopped";
}

std::string encode_fields(const std::vector<std::string>& fields) {
  std::string out;
  size_t size = 0;
  for (const auto& field : fields) {
    size += field.size() + 21; // the header: at most 20 digits and a colon
  }
  out.reserve(size); // one allocation: a request carries a whole graph
  for (const auto& field : fields) {
    append_field(out, field);
  }
  return out;
}

namespace {

// The length in the header at `at` ("<decimal length>:"), and where its bytes start; nullopt
// while the header is incomplete.
std::optional<std::pair<size_t, size_t>> field_header(std::string_view buffer, size_t at) {
  size_t colon = buffer.find(':', at);
  if (colon == std::string_view::npos) {
    if (buffer.size() - at > 20) {
      throw Error("a field length is not a number");
    }
    return std::nullopt;
  }
  if (colon == at || colon - at > 19 || buffer.find_first_not_of("0123456789", at) < colon) {
    throw Error("a field length is not a number");
  }
  return std::pair(static_cast<size_t>(std::stoull(std::string(buffer.substr(at, colon - at)))),
                   colon + 1);
}

// How many bytes the message of `count` fields at the front of `buffer` is known to take:
// up to the end of the last field whose header has arrived. `complete` says whether all of
// it is there. Copies nothing: a caller that receives a large message in pieces asks after
// each piece, and only the complete message is copied out.
size_t message_extent(std::string_view buffer, size_t count, bool& complete) {
  size_t at = 0;
  complete = false;
  for (size_t i = 0; i < count; ++i) {
    const auto header = field_header(buffer, at);
    if (!header) {
      return at;
    }
    at = header->second + header->first;
    if (buffer.size() < at) {
      return at;
    }
  }
  complete = true;
  return at;
}

} // namespace

void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

bool next_field(std::string_view buffer, size_t& at, std::string_view& field) {
  const auto header = field_header(buffer, at);
  if (!header || buffer.size() - header->second < header->first) {
    return false;
  }
  field = buffer.substr(header->second, header->first);
  at = header->second + header->first;
  return true;
}

bool send_fields(int fd, const std::vector<std::string_view>& fields) {
  for (const auto field : fields) {
    if (!send_all(fd, std::to_string(field.size()) + ":") || !send_all(fd, field)) {
      return false;
    }
  }
  return true;
}

bool decode_fields(std::string& buffer, size_t count, std::vector<std::string>& fields) {
  bool complete = false;
  const size_t end = message_extent(buffer, count, complete);
  if (!complete) {
    return false;
  }
  std::vector<std::string> out;
  size_t at = 0;
  std::string_view field;
  while (out.size() < count && next_field(buffer, at, field)) {
    out.emplace_back(field);
  }
  buffer.erase(0, end);
  fields = std::move(out);
  return true;
}


bool receive_message(int fd, size_t count, std::string& buffer,
                     std::vector<std::string_view>& fields) {
  buffer.clear();
  for (;;) {
    bool complete = false;
    const size_t known = message_extent(buffer, count, complete);
    if (complete) {
      fields.clear();
      size_t at = 0;
      std::string_view field;
      while (fields.size() < count && next_field(buffer, at, field)) {
        fields.push_back(field);
      }
      return true;
    }
    // One allocation for a large field once its length is known, not a doubling series:
    // each fresh page costs a fault, and a graph is hundreds of MB.
    buffer.reserve(known);
    if (!receive_some(fd, buffer)) {
      return false;
    }
  }
}

bool receive_message(int fd, size_t count, std::vector<std::string>& fields) {
  std::string buffer;
  std::vector<std::string_view> views;
  if (!receive_message(fd, count, buffer, views)) {
    return false;
  }
  fields.assign(views.begin(), views.end());
  return true;
}

} // namespace npucc::util

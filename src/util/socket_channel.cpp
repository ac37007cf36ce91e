#include "util/socket_channel.h"

#include "npucc/error.h"
#include "util/eintr.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>

namespace npucc::util {

bool send_all(int fd, const std::string& data) {
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
  char chunk[1 << 14];
  ssize_t n = retry_on_eintr([&] { return ::recv(fd, chunk, sizeof(chunk), 0); });
  if (n <= 0) {
    return false;
  }
  buffer.append(chunk, static_cast<size_t>(n));
  return true;
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
  for (const auto& field : fields) {
    out += std::to_string(field.size()) + ":" + field;
  }
  return out;
}

bool decode_fields(std::string& buffer, size_t count, std::vector<std::string>& fields) {
  std::vector<std::string> out;
  size_t at = 0;
  while (out.size() < count) {
    size_t colon = buffer.find(':', at);
    if (colon == std::string::npos) {
      if (buffer.size() - at > 20) {
        throw Error("a field length is not a number");
      }
      return false;
    }
    if (colon == at || colon - at > 19 || buffer.find_first_not_of("0123456789", at) < colon) {
      throw Error("a field length is not a number");
    }
    size_t length = std::stoull(buffer.substr(at, colon - at));
    if (buffer.size() - colon - 1 < length) {
      return false;
    }
    out.push_back(buffer.substr(colon + 1, length));
    at = colon + 1 + length;
  }
  buffer.erase(0, at);
  fields = std::move(out);
  return true;
}

} // namespace npucc::util

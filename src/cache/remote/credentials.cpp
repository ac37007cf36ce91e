#include "cache/remote/credentials.h"

#include "npucc/error.h"
#include "util/file_io.h"

namespace npucc::cache::remote {

namespace {

std::string first_line(const std::filesystem::path& path, const char* what) {
  std::string text;
  try {
    text = util::read_file(path);
  } catch (const Error& e) {
    throw Error(std::string(what) + " " + path.string() + ": cannot be read",
                "check the path and that this user may read it");
  }
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  if (line.empty()) {
    throw Error(std::string(what) + " " + path.string() + ": the first line is empty");
  }
  return line;
}

} // namespace

Credentials load_credentials(const RemoteCacheConfig& config) {
  Credentials out;
  if (!config.token_file.empty()) {
    out.token = first_line(config.token_file, "remote.token_file");
  }
  if (!config.credentials_file.empty()) {
    std::string line = first_line(config.credentials_file, "remote.credentials_file");
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw Error("remote.credentials_file " + config.credentials_file.string() +
                      ": the first line is not USER:PASSWORD",
                  "write the user, a colon and the password on one line");
    }
    out.user = line.substr(0, colon);
    out.password = line.substr(colon + 1);
  }
  return out;
}

} // namespace npucc::cache::remote

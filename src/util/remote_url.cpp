#include "util/remote_url.h"

#include "npucc/error.h"

namespace npucc::util {

ParsedUrl parse_url(const std::string& url) {
  ParsedUrl parsed;
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return parsed;
  }
  parsed.scheme = url.substr(0, scheme_end);
  std::string rest = url.substr(scheme_end + 3);
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  parsed.path = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string::npos || authority.empty()) {
    return parsed; // credentials in URLs are not supported
  }
  size_t colon = authority.rfind(':');
  parsed.host = authority.substr(0, colon);
  if (colon != std::string::npos) {
    std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) == 0 ||
        std::stoi(port) > 65535) {
      return parsed;
    }
    parsed.port = std::stoi(port);
  }
  parsed.valid = !parsed.host.empty();
  return parsed;
}

void check_remote_url(const std::string& url, const std::string& where) {
  ParsedUrl parsed = parse_url(url);
  const char* hint = "write http://host:port/path or redis://host:port/db";
  if (!parsed.valid) {
    throw usage_error(where + ": \"" + url + "\" is not a remote cache URL", hint);
  }
  if (parsed.scheme == "redis") {
    std::string db = parsed.path.empty() ? "" : parsed.path.substr(1);
    if (!db.empty() && (db.size() > 4 || db.find_first_not_of("0123456789") != std::string::npos)) {
      throw usage_error(where + ": \"" + url + "\": the Redis database must be a number", hint);
    }
    return;
  }
  if (parsed.scheme != "http" && parsed.scheme != "https") {
    throw usage_error(where + ": \"" + url + "\": unsupported scheme \"" + parsed.scheme + "\"",
                      hint);
  }
}

} // namespace npucc::util

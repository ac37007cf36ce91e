#pragma once

// Remote cache URLs (src/cache/remote/): parsed by the transports and checked where a
// setting is read, so both agree on what a valid URL is.

#include <string>

namespace npucc::util {

// scheme://host[:port][/path]; no credentials.
struct ParsedUrl {
  bool valid = false;
  std::string scheme;
  std::string host;
  int port = 0; // 0: the scheme's default
  std::string path;
};

ParsedUrl parse_url(const std::string& url);

// Throws usage_error for a URL of another scheme than http, https or redis, or a
// malformed one, naming `where`.
void check_remote_url(const std::string& url, const std::string& where);

} // namespace npucc::util

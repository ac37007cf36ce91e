#pragma once

#include <string>

namespace npucc::cache::remote {

// scheme://host[:port][/path]; no credentials.
struct ParsedUrl {
  bool valid = false;
  std::string scheme;
  std::string host;
  int port = 0; // 0: the scheme's default
  std::string path;
};

ParsedUrl parse_url(const std::string& url);

} // namespace npucc::cache::remote

#pragma once

#include "npucc/cache_config.h"

#include <string>

// The remote cache's secrets, read from the files RemoteCacheConfig names (never from the
// command line or the URL, where ps and logs would show them). A secret is kept here and
// handed to the client library only: no message, log line, statistic or entry holds it.
//
//   token file        first line: an HTTP bearer token, or a Redis password (AUTH pass)
//   credentials file  first line: USER:PASSWORD: HTTP basic, or a Redis ACL user (AUTH user pass)
namespace npucc::cache::remote {

struct Credentials {
  std::string token;
  std::string user;
  std::string password;
  bool empty() const { return token.empty() && user.empty(); }
};

// Throws npucc::Error naming the file (never its contents) when it cannot be read, is
// empty, or (credentials) has no colon.
Credentials load_credentials(const RemoteCacheConfig& config);

} // namespace npucc::cache::remote

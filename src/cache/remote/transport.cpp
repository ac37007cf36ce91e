#include "cache/remote/transport.h"

#include "npucc/error.h"
#include "util/remote_url.h"

namespace npucc::cache::remote {

std::unique_ptr<Transport> make_transport(const RemoteCacheConfig& config) {
  util::check_remote_url(config.url, "remote cache");
  if (util::parse_url(config.url).scheme == "redis") {
    return make_redis_transport(config);
  }
  return make_http_transport(config);
}

} // namespace npucc::cache::remote

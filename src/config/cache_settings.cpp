// The cache's settings, typed: what every command that opens a cache reads from the one
// Config (load_config.cpp), with the source of each kept so that a later error (a missing
// folder, a bad size) names the flag, variable or file line the value came from.
#include "npucc/config.h"
#include "npucc/config.h"

namespace npucc {

CacheConfig resolve_cache_config(const Config& config) {
  CacheConfig cache;
  const Setting& dir = config.get("cache.dir");
  cache.dir = dir.value;
  cache.dir_source = dir.source;
  cache.dir_origin = dir.origin;
  cache.max_size = config.cache_max_size();
  cache.disabled = config.cache_disabled();
  cache.access = config.cache_read_only() ? CacheAccess::read_only : CacheAccess::read_write;
  const Setting& shared = config.get("cache.shared");
  if (shared.is_set()) {
    cache.sharing = parse_cache_sharing(shared.value, shared.describe_source());
  }
  const Setting& link_mode = config.get("cache.link_mode");
  if (link_mode.is_set()) {
    cache.link_mode = parse_link_mode(link_mode.value, link_mode.describe_source());
  }
  const Setting& digest_cache = config.get("cache.digest_cache");
  if (digest_cache.is_set()) {
    cache.digest_cache =
        parse_digest_cache_mode(digest_cache.value, digest_cache.describe_source());
  }
  cache.key_file = config.value("cache.key_file");
  cache.remote = config.remote_cache();
  return cache;
}

} // namespace npucc

#pragma once

// How bundles (bundle.h) move to and from a shared remote cache: one object per cache
// key, read and written whole. Two backends, each through a well-kept client library:
//
//   http://host:port/path   GET, PUT, HEAD of PATH/<key>.bundle (libcurl): what nginx's
//                           WebDAV module (dav_methods PUT) or a plain HTTP cache serves
//   redis://host:port/db    GET, SET of "npucc:bundle:<key>" in database DB (hiredis)
//
// A transport never throws for the network: a server that is down, slow or refusing
// gives Status::error with a one-line reason, after at most the timeout: each transfer's
// total deadline (connect, log in, request, headers, body), however slowly bytes come.
#include "cache/remote/bundle.h"
#include "npucc/cache_config.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace npucc::cache::remote {

// refused: the server refused the credentials (HTTP 401/403, Redis NOAUTH/WRONGPASS).
enum class Status { ok, absent, error, refused };

struct TransferResult {
  Status status = Status::error;
  std::string problem; // error: why (one line, names the URL)
  uint64_t bytes = 0;  // moved over the network
};

struct RemoteObject {
  std::string key;
  uint64_t bytes = 0;
};

class Transport {
public:
  virtual ~Transport() = default;
  // The URL, for messages.
  virtual std::string describe() const = 0;
  // Downloads the object of `key`, feeding it to `receiver` as it arrives (with its size
  // first when known). Stops early when the receiver refuses the bytes.
  virtual TransferResult get(const std::string& key, BundleReceiver& receiver) = 0;
  // Uploads the file `from` as the object of `key`, replacing any.
  virtual TransferResult put(const std::string& key, const std::filesystem::path& from) = 0;
  // Every object, or nullopt when the backend cannot list (plain HTTP); `problem` is set
  // on an error.
  virtual std::optional<std::vector<RemoteObject>> list(std::string& problem) = 0;
};

// The URL is checked by util::check_remote_url (util/remote_url.h).
std::unique_ptr<Transport> make_transport(const RemoteCacheConfig& config);

std::unique_ptr<Transport> make_http_transport(const RemoteCacheConfig& config);
std::unique_ptr<Transport> make_redis_transport(const RemoteCacheConfig& config);

} // namespace npucc::cache::remote

#include "cache/remote/circuit_breaker.h"

#include <mutex>
#include <set>

namespace npucc::cache::remote {

namespace {

std::mutex& breaker_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::set<std::string>& down_urls() {
  static std::set<std::string> urls;
  return urls;
}

} // namespace

bool remote_is_down(const std::string& url) {
  std::lock_guard<std::mutex> lock(breaker_mutex());
  return down_urls().count(url) != 0;
}

bool mark_remote_down(const std::string& url) {
  std::lock_guard<std::mutex> lock(breaker_mutex());
  return down_urls().insert(url).second;
}

} // namespace npucc::cache::remote

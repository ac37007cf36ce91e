// `npucc cache ls --remote`: the objects of the shared remote cache, where the backend can
// list them (Redis: SCAN). Plain HTTP (GET/PUT) has no listing: said so, exit 1.
#include "cache/remote/transport.h"
#include "cache_commands.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <algorithm>

namespace npucc::cli::cache_cli {

int list_remote(const CacheConfig& config, bool json, bool quiet) {
  if (config.remote.url.empty()) {
    throw usage_error("cache ls --remote: no remote cache configured",
                      "pass --remote-cache URL or set NPUCC_REMOTE_CACHE");
  }
  auto transport = cache::remote::make_transport(config.remote);
  std::string problem;
  auto objects = transport->list(problem);
  if (!objects) {
    throw Error(config.remote.url + ": this remote cache cannot list its objects",
                "plain HTTP (GET/PUT) has no listing; a Redis remote (redis://) can");
  }
  if (!problem.empty()) {
    throw Error(problem);
  }
  std::sort(objects->begin(), objects->end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  if (json) {
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& object : *objects) {
      listed.push_back({{"key", object.key}, {"bytes", object.bytes}});
    }
    print_json(k_cache_ls_remote_format, {{"url", config.remote.url}, {"entries", listed}});
    return 0;
  }
  uint64_t total = 0;
  std::cout << "KEY                                                               SIZE\n";
  for (const auto& object : *objects) {
    std::cout << util::printable(object.key) << "  " << util::format_bytes(object.bytes) << "\n";
    total += object.bytes;
  }
  if (!quiet) {
    std::cout << count_entries(objects->size()) << " (" << util::format_bytes(total) << ") in "
              << config.remote.url << "\n";
  }
  return 0;
}

} // namespace npucc::cli::cache_cli

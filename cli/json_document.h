#pragma once

// The one convention of every document npucc prints with --json (npucc(1) OUTPUT): an
// object whose "format" names the document and whose "format_version" (an integer) is raised
// only by a change that would break a reader of the old shape; within one version keys are
// only ever added. Values are typed: booleans, numbers, arrays and objects, never JSON or
// lists inside strings. tests/schemas/FORMAT.schema.json holds each document's shape and
// tests/e2e/test_json_schemas.sh checks every document against it.

#include <nlohmann/json.hpp>

namespace npucc::cli {

struct JsonFormat {
  const char* name;
  int version;
};

inline constexpr JsonFormat k_cache_ls_format{"npucc-cache-ls", 1};
inline constexpr JsonFormat k_cache_ls_remote_format{"npucc-cache-ls-remote", 1};
inline constexpr JsonFormat k_cache_stats_format{"npucc-cache-stats", 1};
inline constexpr JsonFormat k_cache_verify_format{"npucc-cache-verify", 1};
inline constexpr JsonFormat k_cache_invalidate_format{"npucc-cache-invalidate", 1};
inline constexpr JsonFormat k_cache_purge_format{"npucc-cache-purge", 1};
inline constexpr JsonFormat k_cache_populate_format{"npucc-cache-populate", 1};
inline constexpr JsonFormat k_config_show_format{"npucc-config-show", 1};
inline constexpr JsonFormat k_schedule_format{"npucc-schedule", 1};

// `body`, an object, with the document's "format" and "format_version".
template <typename Json> Json json_document(const JsonFormat& format, Json body) {
  body["format"] = format.name;
  body["format_version"] = format.version;
  return body;
}

} // namespace npucc::cli

#pragma once

#include "app.h"
#include "compile_options.h"
#include "json_document.h"

#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

// Shared by the `npucc cache` subcommand files (cmd_cache*.cpp).
namespace npucc::cli::cache_cli {

// Each `cache` subcommand: name, description, setup (adds options, returns the handler).
struct Subcommand {
  const char* name;
  const char* description;
  std::function<std::function<int()>(CLI::App& command, const GlobalOptions& global)> setup;
};

std::function<int()> setup_ls(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_stats(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_verify(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_invalidate(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_purge(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_populate(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_explain(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_init(CLI::App& command, const GlobalOptions& global);

// `cache ls --remote` (cmd_cache_remote.cpp).
int list_remote(const CacheConfig& config, bool json, bool quiet);

// "1 entry", "3 entries".
inline std::string count_entries(size_t count) {
  return std::to_string(count) + (count == 1 ? " entry" : " entries");
}

// What `ls` and `populate` say of other compiler versions' entries: "1 entry belongs to
// other compiler versions".
inline std::string other_versions_note(size_t count) {
  return std::to_string(count) + (count == 1 ? " entry belongs" : " entries belong") +
         " to other compiler versions";
}

// "2026-11-29 17:59" in UTC, or "-" for 0.
std::string format_time(int64_t seconds);

inline void print_json(const nlohmann::json& value) {
  std::cout << value.dump(2) << "\n";
}

// `body` as the document `format` (json_document.h).
inline void print_json(const JsonFormat& format, nlohmann::json body) {
  print_json(json_document(format, std::move(body)));
}

} // namespace npucc::cli::cache_cli

#pragma once

// The subset of TOML that npucc's config file uses (config.toml):
//
//   file    = { line }
//   line    = [ ws ] [ table | pair ] [ ws ] [ comment ] newline
//   table   = "[" key "]"                  (one level; a table may appear only once)
//   pair    = key ws? "=" ws? value
//   key     = bare { "." bare }            (bare = A-Z a-z 0-9 _ -)
//   value   = basic-string | literal-string | integer | boolean
//   comment = "#" anything
//
// Basic strings take the escapes \" \\ \n \t \r \b \f \uXXXX \UXXXXXXXX; literal strings
// ('...') none. Integers are decimal with an optional sign and "_" between digits.
// Everything else TOML has (floats, dates, arrays, inline tables, multi-line strings,
// quoted keys, arrays of tables) is refused with the line it is on, so a config file
// never means something other than what it says.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace npucc::config {

enum class TomlType { string, integer, boolean };

struct TomlEntry {
  std::string key;   // full dotted key: "cache.dir" (table name + key)
  std::string value; // string contents; integer as canonical decimal; "true" / "false"
  TomlType type = TomlType::string;
  size_t line = 0; // 1-based
};

// Throws npucc::Error "FILE:LINE: what is wrong" on anything outside the subset and on a
// key given twice. `file` only names the source in messages.
std::vector<TomlEntry> parse_toml_subset(std::string_view text, const std::string& file);

const char* toml_type_name(TomlType type);

} // namespace npucc::config

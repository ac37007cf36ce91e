#pragma once

// The subset of TOML that npucc reads (config.toml; `cache populate --models FILE`):
//
//   file    = { line }
//   line    = [ ws ] [ table | array-table | pair ] [ ws ] [ comment ] newline
//   table   = "[" key "]"                  (a table may appear only once)
//   array-table = "[[" key "]]"            (each one a new table of the array; only where
//                                           the reader allows them: parse_toml_document)
//   pair    = key ws? "=" ws? value
//   key     = bare { "." bare }            (bare = A-Z a-z 0-9 _ -)
//   value   = basic-string | literal-string | integer | boolean | string-array
//   string-array = "[" [ string { "," string } [ "," ] ] "]"   (on one line)
//   comment = "#" anything
//
// Basic strings take the escapes \" \\ \n \t \r \b \f \uXXXX \UXXXXXXXX; literal strings
// ('...') none. Integers are decimal with an optional sign and "_" between digits.
// Everything else TOML has (floats, dates, arrays of other values, arrays over several
// lines, inline tables, multi-line strings, quoted keys, tables inside an array of tables)
// is refused with the line it is on, so a file never means something other than what it
// says.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace npucc::config {

enum class TomlType { string, integer, boolean, string_array };

struct TomlEntry {
  std::string key;                // full dotted key: "cache.dir" (table name + key), "model.path"
  std::string value;              // string contents; integer as canonical decimal; "true" / "false"
  std::vector<std::string> items; // string_array: the strings
  TomlType type = TomlType::string;
  size_t line = 0; // 1-based
  // Under an array-table header ([[model]]): its name and which of its tables (0-based).
  std::string array_table;
  size_t array_index = 0;
};

// One [[name]] header: the table it opens, even when no key follows.
struct TomlArrayTable {
  std::string name;
  size_t index = 0; // 0-based, among the tables of `name`
  size_t line = 0;
};

struct TomlDocument {
  std::vector<TomlEntry> entries;
  std::vector<TomlArrayTable> array_tables;
};

// Throws npucc::Error "FILE:LINE: what is wrong" on anything outside the subset and on a
// key given twice (in one table). `file` only names the source in messages.
TomlDocument parse_toml_document(std::string_view text, const std::string& file);
// The same for a file with no array tables (config.toml): [[...]] is refused.
std::vector<TomlEntry> parse_toml_subset(std::string_view text, const std::string& file);

const char* toml_type_name(TomlType type);

} // namespace npucc::config

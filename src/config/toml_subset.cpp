#include "config/toml_subset.h"

#include "npucc/error.h"
#include "util/strings.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace npucc::config {

namespace {

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

constexpr const char* k_unclosed_array =
    "an array must end on the line it starts on (\"]\" missing)";

// Reads one line; every error names the file and line.
class LineReader {
public:
  LineReader(std::string_view line, const std::string& file, size_t number)
      : m_line(line), m_file(file), m_number(number) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(m_file + ":" + std::to_string(m_number) + ": " + message,
                "npucc reads a TOML subset: key = \"string\", integers, true/false, "
                "[\"strings\"] on one line, # comments and [table] headers");
  }

  void skip_space() {
    while (m_pos < m_line.size() && (m_line[m_pos] == ' ' || m_line[m_pos] == '\t')) {
      ++m_pos;
    }
  }
  bool at_end_or_comment() const { return m_pos >= m_line.size() || m_line[m_pos] == '#'; }
  bool peek(char c) const { return m_pos < m_line.size() && m_line[m_pos] == c; }
  void expect(char c, const char* what) {
    if (!peek(c)) {
      fail(std::string("expected ") + what + rest_for_message());
    }
    ++m_pos;
  }

  std::string rest_for_message() const {
    if (m_pos >= m_line.size()) {
      return " at the end of the line";
    }
    return " before \"" + std::string(m_line.substr(m_pos, 20)) + "\"";
  }

  std::string key() {
    std::string key;
    while (true) {
      skip_space();
      if (peek('"') || peek('\'')) {
        fail("quoted keys are not supported");
      }
      size_t start = m_pos;
      while (m_pos < m_line.size() && is_bare_key_char(m_line[m_pos])) {
        ++m_pos;
      }
      if (m_pos == start) {
        fail("expected a key (letters, digits, _ or -)" + rest_for_message());
      }
      key += m_line.substr(start, m_pos - start);
      skip_space();
      if (!peek('.')) {
        return key;
      }
      ++m_pos;
      key += '.';
    }
  }

  TomlEntry value() {
    TomlEntry entry;
    if (peek('"') || peek('\'')) {
      entry.value = string_value();
    } else if (m_line.substr(m_pos, 4) == "true" && !word_continues(m_pos + 4)) {
      entry.type = TomlType::boolean;
      entry.value = "true";
      m_pos += 4;
    } else if (m_line.substr(m_pos, 5) == "false" && !word_continues(m_pos + 5)) {
      entry.type = TomlType::boolean;
      entry.value = "false";
      m_pos += 5;
    } else if (peek('[')) {
      entry.type = TomlType::string_array;
      entry.items = string_array();
    } else if (peek('{')) {
      fail("inline tables are not supported");
    } else if (peek('+') || peek('-') || (m_pos < m_line.size() && is_digit(m_line[m_pos]))) {
      entry.type = TomlType::integer;
      entry.value = integer();
    } else if (at_end_or_comment()) {
      fail("missing value after \"=\"");
    } else {
      fail("expected a value (\"string\", 'string', integer, true or false)" + rest_for_message());
    }
    return entry;
  }

private:
  // A basic or literal string, at its opening quote.
  std::string string_value() {
    if (peek('"')) {
      if (m_line.substr(m_pos, 3) == "\"\"\"") {
        fail("multi-line strings are not supported");
      }
      return basic_string();
    }
    if (m_line.substr(m_pos, 3) == "'''") {
      fail("multi-line strings are not supported");
    }
    ++m_pos;
    size_t end = m_line.find('\'', m_pos);
    if (end == std::string_view::npos) {
      fail("unterminated string");
    }
    std::string out(m_line.substr(m_pos, end - m_pos));
    m_pos = end + 1;
    return out;
  }

  // ["a", 'b', ] on one line.
  std::vector<std::string> string_array() {
    ++m_pos; // "["
    std::vector<std::string> items;
    while (true) {
      skip_space();
      if (peek(']')) {
        ++m_pos;
        return items;
      }
      if (at_end_or_comment()) {
        fail(k_unclosed_array);
      }
      if (!peek('"') && !peek('\'')) {
        fail("only arrays of strings are supported" + rest_for_message());
      }
      items.push_back(string_value());
      skip_space();
      if (at_end_or_comment()) {
        fail(k_unclosed_array);
      }
      if (peek(',')) {
        ++m_pos;
      } else if (!peek(']')) {
        fail("expected \",\" or \"]\" in the array" + rest_for_message());
      }
    }
  }

  bool word_continues(size_t pos) const {
    return pos < m_line.size() && is_bare_key_char(m_line[pos]);
  }

  std::string integer() {
    std::string digits;
    if (peek('+') || peek('-')) {
      if (peek('-')) {
        digits += '-';
      }
      ++m_pos;
    }
    bool last_was_digit = false;
    while (m_pos < m_line.size() && (is_digit(m_line[m_pos]) || m_line[m_pos] == '_')) {
      if (m_line[m_pos] == '_') {
        if (!last_was_digit) {
          fail("\"_\" in a number must sit between digits");
        }
        last_was_digit = false;
      } else {
        digits += m_line[m_pos];
        last_was_digit = true;
      }
      ++m_pos;
    }
    if (!last_was_digit) {
      fail("malformed integer");
    }
    if (m_pos < m_line.size() &&
        (m_line[m_pos] == '.' || m_line[m_pos] == 'e' || m_line[m_pos] == 'E')) {
      fail("floating-point numbers are not supported");
    }
    if (word_continues(m_pos) || peek(':')) {
      fail("malformed number (a string needs quotes)");
    }
    std::string_view magnitude = std::string_view(digits).substr(digits[0] == '-' ? 1 : 0);
    if (magnitude.size() > 1 && magnitude[0] == '0') {
      fail("leading zeros are not allowed in integers");
    }
    if (magnitude.size() > 18) {
      fail("integer out of range");
    }
    return digits;
  }

  uint32_t hex_digits(size_t count) {
    if (m_pos + count > m_line.size()) {
      fail("truncated \\u escape");
    }
    uint32_t code = 0;
    for (size_t i = 0; i < count; ++i) {
      char c = m_line[m_pos + i];
      uint32_t digit = 0;
      if (is_digit(c)) {
        digit = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail("bad hex digit in a \\u escape");
      }
      code = code * 16 + digit;
    }
    m_pos += count;
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      fail("\\u escape is not a Unicode scalar value");
    }
    return code;
  }

  std::string basic_string() {
    ++m_pos; // opening quote
    std::string out;
    while (true) {
      if (m_pos >= m_line.size()) {
        fail("unterminated string");
      }
      char c = m_line[m_pos++];
      if (c == '"') {
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
        fail("control character in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (m_pos >= m_line.size()) {
        fail("unterminated string");
      }
      char escape = m_line[m_pos++];
      switch (escape) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u':
        util::append_utf8(out, hex_digits(4));
        break;
      case 'U':
        util::append_utf8(out, hex_digits(8));
        break;
      default:
        fail(std::string("unknown escape \\") + escape + " in a string");
      }
    }
  }

  std::string_view m_line;
  const std::string& m_file;
  size_t m_number;
  size_t m_pos = 0;
};

} // namespace

const char* toml_type_name(TomlType type) {
  switch (type) {
  case TomlType::string:
    return "a string";
  case TomlType::integer:
    return "an integer";
  case TomlType::boolean:
    return "a boolean";
  case TomlType::string_array:
    return "an array of strings";
  }
  return "?";
}

namespace {

enum class ArrayTables { refuse, allow };

// The document so far and the table the next pair belongs to.
class DocumentBuilder {
public:
  explicit DocumentBuilder(ArrayTables array_tables) : m_arrays_allowed(array_tables) {}

  void table_header(LineReader& reader, size_t line) {
    reader.expect('[', "\"[\"");
    if (reader.peek('[')) {
      array_table_header(reader, line);
      return;
    }
    m_table = reader.key();
    reader.expect(']', "\"]\" to close the table header");
    m_array.reset();
    if (m_array_names.count(m_table) != 0 || m_array_names.count(first_part(m_table)) != 0) {
      reader.fail("[" + m_table + "]: tables inside an array of tables are not supported");
    }
    if (!m_seen_tables.insert(m_table).second) {
      reader.fail("table [" + m_table + "] is defined twice");
    }
    if (m_seen_keys.count(m_table) != 0) {
      reader.fail("[" + m_table + "] was already given a value");
    }
  }

  void pair(LineReader& reader, size_t line) {
    std::string key = reader.key();
    std::string full = m_table.empty() ? key : m_table + "." + key;
    reader.skip_space();
    reader.expect('=', "\"=\" after the key");
    reader.skip_space();
    TomlEntry entry = reader.value();
    entry.key = full;
    entry.line = line;
    std::string scoped = full;
    if (m_array) {
      entry.array_table = m_array->name;
      entry.array_index = m_array->index;
      scoped = m_table + "[" + std::to_string(m_array->index) + "]." + key;
    }
    if (!m_seen_keys.insert(scoped).second) {
      reader.fail("key \"" + full + "\" is given twice" +
                  (m_array ? " in this [[" + m_table + "]]" : ""));
    }
    m_document.entries.push_back(std::move(entry));
  }

  TomlDocument take() { return std::move(m_document); }

private:
  static std::string first_part(const std::string& key) { return key.substr(0, key.find('.')); }

  void array_table_header(LineReader& reader, size_t line) {
    if (m_arrays_allowed == ArrayTables::refuse) {
      reader.fail("arrays of tables ([[...]]) are not supported in this file");
    }
    reader.expect('[', "\"[\"");
    m_table = reader.key();
    reader.expect(']', "\"]]\" to close the array-table header");
    reader.expect(']', "\"]]\" to close the array-table header");
    if (m_seen_tables.count(m_table) != 0 || m_seen_keys.count(m_table) != 0) {
      reader.fail("[[" + m_table + "]]: " + m_table + " is already a table or a value");
    }
    if (m_table.find('.') != std::string::npos) {
      reader.fail("[[" + m_table + "]]: only top-level arrays of tables are supported");
    }
    size_t index = m_array_names[m_table]++;
    m_array = TomlArrayTable{m_table, index, line};
    m_document.array_tables.push_back(*m_array);
  }

  ArrayTables m_arrays_allowed;
  TomlDocument m_document;
  std::set<std::string> m_seen_keys;
  std::set<std::string> m_seen_tables;
  std::map<std::string, size_t> m_array_names; // tables so far per array
  std::string m_table;
  std::optional<TomlArrayTable> m_array; // the array table pairs go to, if any
};

TomlDocument parse_document(std::string_view text, const std::string& file,
                            ArrayTables array_tables) {
  DocumentBuilder builder(array_tables);
  size_t number = 0;
  size_t start = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    start = 3; // a UTF-8 byte order mark, as some editors write
  }
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    start = end == std::string_view::npos ? text.size() + 1 : end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    LineReader reader(line, file, number);
    reader.skip_space();
    if (reader.at_end_or_comment()) {
      continue;
    }
    if (reader.peek('[')) {
      builder.table_header(reader, number);
    } else {
      builder.pair(reader, number);
    }
    reader.skip_space();
    if (!reader.at_end_or_comment()) {
      reader.fail("unexpected text" + reader.rest_for_message());
    }
  }
  return builder.take();
}

} // namespace

TomlDocument parse_toml_document(std::string_view text, const std::string& file) {
  return parse_document(text, file, ArrayTables::allow);
}

std::vector<TomlEntry> parse_toml_subset(std::string_view text, const std::string& file) {
  return parse_document(text, file, ArrayTables::refuse).entries;
}

} // namespace npucc::config

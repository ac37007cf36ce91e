#include "config/toml_subset.h"

#include "npucc/error.h"

#include <cstdint>
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

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Reads one line; every error names the file and line.
class LineReader {
public:
  LineReader(std::string_view line, const std::string& file, size_t number)
      : m_line(line), m_file(file), m_number(number) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(m_file + ":" + std::to_string(m_number) + ": " + message,
                "the config file takes key = \"string\", numbers, true/false, # comments and "
                "[table] headers");
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
    if (peek('"')) {
      if (m_line.substr(m_pos, 3) == "\"\"\"") {
        fail("multi-line strings are not supported");
      }
      entry.value = basic_string();
    } else if (peek('\'')) {
      if (m_line.substr(m_pos, 3) == "'''") {
        fail("multi-line strings are not supported");
      }
      ++m_pos;
      size_t end = m_line.find('\'', m_pos);
      if (end == std::string_view::npos) {
        fail("unterminated string");
      }
      entry.value = std::string(m_line.substr(m_pos, end - m_pos));
      m_pos = end + 1;
    } else if (m_line.substr(m_pos, 4) == "true" && !word_continues(m_pos + 4)) {
      entry.type = TomlType::boolean;
      entry.value = "true";
      m_pos += 4;
    } else if (m_line.substr(m_pos, 5) == "false" && !word_continues(m_pos + 5)) {
      entry.type = TomlType::boolean;
      entry.value = "false";
      m_pos += 5;
    } else if (peek('[') || peek('{')) {
      fail("arrays and inline tables are not supported");
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
        append_utf8(out, hex_digits(4));
        break;
      case 'U':
        append_utf8(out, hex_digits(8));
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
  }
  return "?";
}

std::vector<TomlEntry> parse_toml_subset(std::string_view text, const std::string& file) {
  std::vector<TomlEntry> entries;
  std::set<std::string> seen_keys;
  std::set<std::string> seen_tables;
  std::string table;
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
      reader.expect('[', "\"[\"");
      if (reader.peek('[')) {
        reader.fail("arrays of tables ([[...]]) are not supported");
      }
      table = reader.key();
      reader.expect(']', "\"]\" to close the table header");
      if (!seen_tables.insert(table).second) {
        reader.fail("table [" + table + "] is defined twice");
      }
      if (seen_keys.count(table) != 0) {
        reader.fail("[" + table + "] was already given a value");
      }
    } else {
      std::string key = reader.key();
      std::string full = table.empty() ? key : table + "." + key;
      reader.skip_space();
      reader.expect('=', "\"=\" after the key");
      reader.skip_space();
      TomlEntry entry = reader.value();
      entry.key = full;
      entry.line = number;
      if (!seen_keys.insert(full).second) {
        reader.fail("key \"" + full + "\" is given twice");
      }
      entries.push_back(std::move(entry));
    }
    reader.skip_space();
    if (!reader.at_end_or_comment()) {
      reader.fail("unexpected text" + reader.rest_for_message());
    }
  }
  return entries;
}

} // namespace npucc::config

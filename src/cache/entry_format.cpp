#include "cache/entry_format.h"

#include "npucc/error.h"
#include "util/hex.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>
#include <string_view>

namespace npucc::cache {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '%':
      out += "%25";
      break;
    case '\n':
      out += "%0A";
      break;
    case '\r':
      out += "%0D";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string unescape(std::string_view text) {
  if (text.find('%') == std::string_view::npos) {
    return std::string(text); // the usual case: `cache ls` unescapes every entry's fields
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      std::string_view code = text.substr(i + 1, 2);
      if (code == "25" || code == "0A" || code == "0D") {
        out += code == "25" ? '%' : code == "0A" ? '\n' : '\r';
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// Splits "name rest-of-line".
bool field(std::string_view line, std::string_view name, std::string_view& value) {
  if (line.size() <= name.size() || line.compare(0, name.size(), name) != 0 ||
      line[name.size()] != ' ') {
    return false;
  }
  value = line.substr(name.size() + 1);
  return true;
}

} // namespace

uint64_t EntryHeader::total_bytes() const {
  uint64_t total = 0;
  for (const auto& file : files) {
    total += file.bytes;
  }
  return total;
}

bool is_key(const std::string& text) {
  return util::is_lower_hex(text, 64);
}

std::string check_key_prefix(const std::string& prefix, const std::string& label) {
  std::string lower;
  for (char c : prefix) {
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const std::string what = label + " " + prefix + ": ";
  const char* hint = "give at least 4 of the key's 64 hex digits, as `npucc cache ls` shows them";
  if (!util::is_lower_hex(lower, lower.size())) {
    throw usage_error(what + "not hex (a key is written with 0-9 and a-f)", hint);
  }
  if (lower.size() < 4) {
    throw usage_error(what + "too short", hint);
  }
  if (lower.size() > 64) {
    throw usage_error(what + "longer than a key (64 hex digits)", hint);
  }
  return lower;
}

bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name[0] != '.' &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos &&
         name.find('\n') == std::string::npos && name.find('\r') == std::string::npos &&
         name != k_header_file;
}

std::string serialize_header(const EntryHeader& header) {
  std::ostringstream out;
  out << k_entry_magic << " " << header.format_version << "\n";
  out << "compiler " << escape(header.compiler_version) << "\n";
  out << "created " << header.created << "\n";
  out << "key " << header.key << "\n";
  out << "model " << escape(header.model) << "\n";
  out << "variants " << escape(header.variants) << "\n";
  out << "options " << escape(header.options) << "\n";
  out << "files " << header.files.size() << "\n";
  for (const auto& file : header.files) {
    out << "file " << file.sha256 << " " << file.bytes << " " << file.name << "\n";
  }
  std::string body = out.str();
  return body + "end " + util::sha256_hex(body) + "\n";
}

namespace {

// parse_header's steps return why the header is corrupt, or "" when the step holds.

// The lines of `all`, views into it: `cache ls` parses every entry's header.
std::string split_lines(std::string_view all, std::vector<std::string_view>& lines) {
  lines.reserve(16);
  size_t start = 0;
  while (start < all.size()) {
    size_t newline = all.find('\n', start);
    if (newline == std::string_view::npos) {
      return "header is truncated (no final newline)";
    }
    lines.push_back(all.substr(start, newline - start));
    start = newline + 1;
  }
  return lines.empty() ? "header is empty" : "";
}

// The checksum covers everything before the last line, so it is checked before fields.
std::string check_end_line(std::string_view all, const std::vector<std::string_view>& lines) {
  std::string_view last = lines.back();
  std::string_view value;
  if (!field(last, "end", value) || !util::is_lower_hex(value, 64)) {
    return "header is truncated (no end checksum)";
  }
  std::string_view body = all.substr(0, all.size() - last.size() - 1);
  return util::sha256_hex(body) != value ? "header checksum mismatch" : "";
}

// The field lines, lines[1] to lines[7] (the grammar's order).
std::string parse_fields(const std::vector<std::string_view>& lines, EntryHeader& header) {
  const char* names[] = {"compiler", "created", "key", "model", "variants", "options", "files"};
  std::string_view values[7];
  if (lines.size() < 9) {
    return "header has too few lines";
  }
  for (size_t i = 0; i < 7; ++i) {
    if (!field(lines[i + 1], names[i], values[i])) {
      return std::string("header line ") + std::to_string(i + 2) + " should be \"" + names[i] +
             "\"";
    }
  }
  header.compiler_version = unescape(values[0]);
  uint64_t number = 0;
  // created is an int64_t: 19 digits can exceed it, and would be written back negative.
  if (!util::parse_digits(values[1], number) || number > static_cast<uint64_t>(INT64_MAX)) {
    return "header's creation time is not a number";
  }
  header.created = static_cast<int64_t>(number);
  if (!util::is_lower_hex(values[2], 64)) {
    return "header's key is not 64 hex digits";
  }
  header.key = std::string(values[2]);
  header.model = unescape(values[3]);
  header.variants = unescape(values[4]);
  header.options = unescape(values[5]);
  uint64_t count = 0;
  if (!util::parse_digits(values[6], count) || count != lines.size() - 9) {
    return "header's file count does not match its table";
  }
  return "";
}

// "file" SP sha256 SP bytes SP name, the name the rest of the line; `number` names it.
std::string parse_file_line(std::string_view line, size_t number, EntryFile& file) {
  size_t first = line.find(' ');
  size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  size_t third = second == std::string_view::npos ? second : line.find(' ', second + 1);
  if (third == std::string_view::npos || line.substr(0, first) != "file" ||
      !util::is_lower_hex(line.substr(first + 1, second - first - 1), 64) ||
      !util::parse_digits(line.substr(second + 1, third - second - 1), file.bytes)) {
    return "header line " + std::to_string(number) + " is not a file line";
  }
  file.sha256 = std::string(line.substr(first + 1, second - first - 1));
  file.name = std::string(line.substr(third + 1));
  if (!is_plain_file_name(file.name)) {
    return "header names an unsafe file \"" + file.name + "\"";
  }
  return "";
}

// The file table, lines[8] up to the end line.
std::string parse_file_table(const std::vector<std::string_view>& lines, EntryHeader& header) {
  header.files.reserve(lines.size() - 9);
  for (size_t i = 8; i + 1 < lines.size(); ++i) {
    EntryFile file;
    std::string problem = parse_file_line(lines[i], i + 1, file);
    if (!problem.empty()) {
      return problem;
    }
    for (const auto& other : header.files) {
      if (other.name == file.name) {
        return "header names \"" + file.name + "\" twice";
      }
    }
    header.files.push_back(std::move(file));
  }
  return "";
}

} // namespace

ParsedHeader parse_header(const std::string& text) {
  ParsedHeader parsed;
  auto fail = [&](const std::string& why) {
    parsed.problem = HeaderProblem::corrupt;
    parsed.error = why;
    return parsed;
  };
  std::string_view all(text);
  std::vector<std::string_view> lines;
  if (std::string problem = split_lines(all, lines); !problem.empty()) {
    return fail(problem);
  }
  std::string_view value;
  if (!field(lines[0], k_entry_magic, value)) {
    return fail("header has no npucc-cache-entry magic");
  }
  uint64_t version = 0;
  if (!util::parse_digits(value, version)) {
    return fail("header's format version is not a number");
  }
  if (version != static_cast<uint64_t>(k_entry_format_version)) {
    parsed.problem = HeaderProblem::foreign_format;
    parsed.error = "entry format version " + std::string(value) + " (this npucc reads version " +
                   std::to_string(k_entry_format_version) + ")";
    parsed.header.format_version = static_cast<int>(std::min<uint64_t>(version, 1u << 30));
    return parsed;
  }
  if (std::string problem = check_end_line(all, lines); !problem.empty()) {
    return fail(problem);
  }
  if (std::string problem = parse_fields(lines, parsed.header); !problem.empty()) {
    return fail(problem);
  }
  if (std::string problem = parse_file_table(lines, parsed.header); !problem.empty()) {
    return fail(problem);
  }
  return parsed;
}

} // namespace npucc::cache

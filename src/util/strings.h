#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npucc::util {

std::vector<std::string> split(std::string_view text, char separator);
std::string_view trim(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
// ASCII lower case (locale-independent).
std::string ascii_lower(std::string text);

// Parses a whole decimal integer; false on anything else (sign allowed).
bool parse_int64(std::string_view text, int64_t& value);
// Parses digits alone (no sign, no space) into an unsigned 64-bit value; false on anything
// else, an empty text or an overflow. For the fields of npucc's own file formats.
bool parse_digits(std::string_view text, uint64_t& value);

// Appends `code` (a Unicode scalar value, at most U+10FFFF) to `out` as UTF-8.
void append_utf8(std::string& out, uint32_t code);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, or "" when none is close enough to suggest.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// 1234567 -> "1,234,567".
std::string group_digits(uint64_t value);
// "1.5 MiB", "312 B".
std::string format_bytes(uint64_t bytes);
// `text` for a terminal: control characters (C0, DEL, and the C1 range U+0080-U+009F as
// UTF-8) written as \xNN, so a name from a model, a file or a cache entry can neither break
// a line nor send escape sequences. Every such string goes through it on its way to text
// output or an error message; JSON output has its own escaping and does not.
std::string printable(std::string_view text);

// printable(text), cut to its first `limit` bytes (never inside a UTF-8 sequence) and
// marked "...(N bytes)" when longer: a value a user or a server sent, echoed in an error,
// costs a line, not megabytes.
inline constexpr size_t k_echo_limit = 80;
std::string cut_for_message(std::string_view text, size_t limit = k_echo_limit);

// First line of a possibly multi-line message, whitespace-trimmed.
std::string first_line(std::string_view text);

} // namespace npucc::util

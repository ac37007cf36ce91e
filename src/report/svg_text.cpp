#include "report/svg_text.h"

#include "util/strings.h"

#include <cmath>
#include <cstdio>

namespace npucc::report {

namespace {

constexpr char32_t k_replacement = 0xFFFD;

// The code point of the UTF-8 sequence at `text[at]` and its length in bytes; a byte that
// does not start a well-formed sequence (a stray continuation, an overlong form, a
// surrogate, beyond U+10FFFF) is one byte of U+FFFD.
std::pair<char32_t, size_t> decode_utf8(std::string_view text, size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) {
    return {lead, 1};
  }
  const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || at + length > text.size()) {
    return {k_replacement, 1};
  }
  char32_t code = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xC0) != 0x80) {
      return {k_replacement, 1};
    }
    code = (code << 6) | (next & 0x3F);
  }
  static constexpr char32_t k_smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < k_smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return {k_replacement, 1};
  }
  return {code, length};
}

void append_xml_char(std::string& out, char32_t code) {
  switch (code) {
  case '&': out += "&amp;"; return;
  case '<': out += "&lt;"; return;
  case '>': out += "&gt;"; return;
  case '"': out += "&quot;"; return;
  case '\'': out += "&apos;"; return;
  default: break;
  }
  if (code < 0x20 || (code >= 0x7F && code <= 0x9F)) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned>(code));
    out += hex;
  } else if (code == 0xFFFE || code == 0xFFFF) {
    util::append_utf8(out, k_replacement);
  } else {
    util::append_utf8(out, code);
  }
}

} // namespace

std::string svg_text(std::string_view text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t at = 0; at < text.size(); ++chars) {
    if (chars == max_chars) {
      out += "\u2026"; // the rest cut: the label stays a label
      break;
    }
    const auto [code, length] = decode_utf8(text, at);
    append_xml_char(out, code);
    at += length;
  }
  return out;
}

std::string svg_number(double value, int digits) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

std::string svg_coordinate(double value) {
  char text[32];
  // A coordinate far outside the canvas means a bug above; clamped, it stays valid SVG.
  std::snprintf(text, sizeof text, "%.1f", std::isfinite(value) ? value : 0.0);
  return text;
}

} // namespace npucc::report

#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Text and numbers as an SVG document holds them. Names in a drift report are user data
// (node and value names come from the model): they reach the picture only through
// svg_text, so no name can break the XML or smuggle markup into it.
namespace npucc::report {

// `text` as XML 1.0 character data or attribute value: & < > " ' as entities; control
// characters (C0, DEL, C1), which XML 1.0 cannot hold or a reader cannot see, as \xNN;
// bytes that are not UTF-8, and the non-characters U+FFFE/U+FFFF, as U+FFFD. Longer than
// `max_chars` characters: cut there and ended with an ellipsis, never inside a character.
std::string svg_text(std::string_view text, size_t max_chars = 1000);

// A figure for a label, `digits` significant digits ("0.000123", "1.5e+05"); a threshold
// such as cosine 0.9999 needs more than the default.
std::string svg_number(double value, int digits = 3);

// A coordinate: one decimal, no exponent ("412.5").
std::string svg_coordinate(double value);

} // namespace npucc::report

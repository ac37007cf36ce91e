#pragma once

#include <optional>
#include <string>

namespace npucc::util {

// 1/0, true/false, yes/no, on/off (any case, surrounding blanks ignored); nullopt for
// anything else. How environment variables and flags spell a boolean.
std::optional<bool> parse_bool_text(const std::string& text);

} // namespace npucc::util

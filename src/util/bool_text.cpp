#include "util/bool_text.h"

#include "util/strings.h"

namespace npucc::util {

std::optional<bool> parse_bool_text(const std::string& text) {
  std::string word = ascii_lower(std::string(trim(text)));
  if (word == "1" || word == "true" || word == "yes" || word == "on") {
    return true;
  }
  if (word == "0" || word == "false" || word == "no" || word == "off") {
    return false;
  }
  return std::nullopt;
}

} // namespace npucc::util

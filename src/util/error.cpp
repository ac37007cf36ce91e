#include "npucc/error.h"

#include "util/strings.h"

namespace npucc {

std::string error_line(const std::string& message, const std::string& hint) {
  std::string line = util::printable(message);
  if (!hint.empty()) {
    line += " (" + util::printable(hint) + ")";
  }
  return line;
}

} // namespace npucc

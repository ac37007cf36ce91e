#include "precision/keep_dtype.h"

#include "util/strings.h"

#include <set>

namespace npucc::precision {

std::vector<std::string> parse_keep_dtype(const std::string& text) {
  std::set<std::string> names;
  for (const auto& line : util::split(text, '\n')) {
    std::string name(util::trim(line));
    if (!name.empty() && name[0] != '#') {
      names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

} // namespace npucc::precision

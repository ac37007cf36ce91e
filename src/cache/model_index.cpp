#include "cache/model_index.h"

#include "util/strings.h"

#include <set>

namespace npucc::cache {

namespace {
constexpr const char* k_model_index_magic = "npucc-model-index 1";
} // namespace

std::string serialize_model_index(const std::vector<std::string>& external_locations) {
  std::set<std::string> locations(external_locations.begin(), external_locations.end());
  std::string out = std::string(k_model_index_magic) + "\n";
  for (const auto& location : locations) {
    out += "external " + location + "\n";
  }
  return out;
}

std::optional<std::vector<std::string>> parse_model_index(const std::string& text) {
  auto lines = util::split(text, '\n');
  if (lines.empty() || lines[0] != k_model_index_magic || !lines.back().empty()) {
    return std::nullopt;
  }
  std::vector<std::string> locations;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    if (!util::starts_with(lines[i], "external ") || lines[i].size() <= 9) {
      return std::nullopt;
    }
    locations.push_back(lines[i].substr(9));
  }
  return locations;
}

} // namespace npucc::cache

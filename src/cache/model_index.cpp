#include "cache/model_index.h"

#include "util/strings.h"

#include <set>
#include <string_view>

namespace npucc::cache {

namespace {
constexpr const char* k_model_index_magic = "npucc-model-index 1";
constexpr std::string_view k_external = "external ";
constexpr std::string_view k_key_facts = "key-facts ";
} // namespace

std::string serialize_model_index(const std::vector<std::string>& external_locations,
                                  const std::string& key_facts) {
  std::set<std::string> locations(external_locations.begin(), external_locations.end());
  std::string out = std::string(k_model_index_magic) + "\n";
  for (const auto& location : locations) {
    out.append(k_external).append(location).append("\n");
  }
  if (!key_facts.empty() && key_facts.find('\n') == std::string::npos) {
    out.append(k_key_facts).append(key_facts).append("\n");
  }
  return out;
}

std::optional<ModelIndex> parse_model_index(const std::string& text) {
  auto lines = util::split(text, '\n');
  if (lines.empty() || lines[0] != k_model_index_magic || !lines.back().empty()) {
    return std::nullopt;
  }
  ModelIndex index;
  const size_t end = lines.size() - 1;
  for (size_t i = 1; i < end; ++i) {
    const std::string& line = lines[i];
    if (util::starts_with(line, k_external) && line.size() > k_external.size()) {
      index.external_locations.push_back(line.substr(k_external.size()));
    } else if (i + 1 == end && util::starts_with(line, k_key_facts) &&
               line.size() > k_key_facts.size()) {
      index.key_facts = line.substr(k_key_facts.size()); // the last line, once
    } else {
      return std::nullopt;
    }
  }
  return index;
}

} // namespace npucc::cache

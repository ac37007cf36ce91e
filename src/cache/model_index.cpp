#include "cache/model_index.h"

#include "util/hex.h"
#include "util/strings.h"

#include <cstdio>
#include <set>
#include <string_view>
#include <unistd.h>

namespace npucc::cache {

namespace {
constexpr const char* k_model_index_magic = "npucc-model-index 1";
constexpr std::string_view k_external = "external ";
constexpr std::string_view k_key_facts = "key-facts ";
} // namespace

std::string serialize_model_index(const std::vector<std::string>& external_locations,
                                  const std::string& model_sha256, const std::string& key_facts) {
  std::set<std::string> locations(external_locations.begin(), external_locations.end());
  std::string out = std::string(k_model_index_magic) + "\n";
  for (const auto& location : locations) {
    out.append(k_external).append(location).append("\n");
  }
  if (!key_facts.empty() && key_facts.find('\n') == std::string::npos &&
      util::is_lower_hex(model_sha256, 64)) {
    out.append(k_key_facts).append(model_sha256).append(" ").append(key_facts).append("\n");
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
      // An older npucc's facts name no model: they stay unbound (never used).
      if (index.key_facts.size() > 65 && index.key_facts[64] == ' ' &&
          util::is_lower_hex(index.key_facts.substr(0, 64), 64)) {
        index.key_facts_model = index.key_facts.substr(0, 64);
        index.key_facts.erase(0, 65);
      }
    } else {
      return std::nullopt;
    }
  }
  return index;
}

std::string why_key_facts_not_used(const ModelIndex& index, const std::string& model_sha256,
                                   bool signing_key) {
  if (index.key_facts.empty()) {
    return "the index records no key facts (an older npucc's)";
  }
  if (signing_key) {
    return "the cache has a signing key, and the index is not signed";
  }
  if (index.key_facts_model != model_sha256) {
    return index.key_facts_model.empty()
               ? "its facts name no model (an older npucc's index)"
               : "its facts name another model's SHA-256 (an index moved from another name)";
  }
  if (index.owner_uid != ::geteuid()) {
    return "the index is another user's (uid " + std::to_string(index.owner_uid) + ")";
  }
  if ((index.mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", index.mode & 07777);
    return std::string("others may write the index (mode ") + mode + ")";
  }
  return "";
}

} // namespace npucc::cache

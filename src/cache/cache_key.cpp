#include "cache/cache_key.h"

#include "cache/file_ops.h"
#include "npucc/version.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <set>

namespace npucc::cache {

namespace {
constexpr const char* k_model_index_magic = "npucc-model-index 1";
} // namespace

CacheKey compute_key(const Model& model, const CompileOptions& options) {
  ModelIdentity identity;
  identity.file_name = model.path.filename().string();
  identity.bytes = model.file_bytes;
  identity.sha256 = model.sha256;
  for (const auto& file : model.external_files) {
    identity.external.emplace_back(file.location, file.path);
  }
  return compute_key(identity, options);
}

CacheKey compute_key(const ModelIdentity& model, const CompileOptions& options) {
  CacheKey key;
  key.components.push_back({"format", util::sha256_hex(k_key_salt), k_key_salt});
  key.components.push_back({"compiler", util::sha256_hex(k_version), k_version});
  key.components.push_back(
      {"model", model.sha256, model.file_name + ", " + std::to_string(model.bytes) + " bytes"});

  auto external = model.external;
  std::sort(external.begin(), external.end());
  external.erase(std::unique(external.begin(), external.end()), external.end());
  util::Sha256 external_hash;
  uint64_t external_bytes = 0;
  for (const auto& [location, path] : external) {
    std::string digest = util::sha256_file_hex(path);
    external_bytes += std::filesystem::file_size(path);
    external_hash.update(location + "\n" + digest + "\n");
  }
  key.components.push_back(
      {"external", external_hash.hex_digest(),
       std::to_string(external.size()) + " file(s), " + std::to_string(external_bytes) + " bytes"});

  std::string canonical = canonical_options(options);
  key.components.push_back({"options", util::sha256_hex(canonical), canonical});

  std::string text = "npucc-cache-key\n";
  for (const auto& component : key.components) {
    text += component.name + ":" + component.digest + "\n";
  }
  key.key = util::sha256_hex(text);
  return key;
}

std::string serialize_model_index(const Model& model) {
  std::set<std::string> locations;
  for (const auto& file : model.external_files) {
    locations.insert(file.location);
  }
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

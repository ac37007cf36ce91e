#include "cache/cache_key.h"

#include "cache/file_ops.h"
#include "npucc/version.h"
#include "util/sha256.h"

#include <algorithm>

namespace npucc::cache {

CacheKey compute_key(const Model& model, const CompileOptions& options) {
  CacheKey key;
  key.components.push_back({"format", util::sha256_hex(k_key_salt), k_key_salt});
  key.components.push_back({"compiler", util::sha256_hex(k_version), k_version});
  key.components.push_back(
      {"model", model.sha256, model.path.filename().string() + ", " +
                                  std::to_string(model.file_bytes) + " bytes"});

  std::vector<std::pair<std::string, std::filesystem::path>> external;
  for (const auto& file : model.external_files) {
    external.emplace_back(file.location, file.path);
  }
  std::sort(external.begin(), external.end());
  external.erase(std::unique(external.begin(), external.end()), external.end());
  util::Sha256 external_hash;
  uint64_t external_bytes = 0;
  for (const auto& [location, path] : external) {
    FileDigest digest = digest_file(path);
    external_bytes += digest.bytes;
    external_hash.update(location + "\n" + digest.sha256 + "\n");
  }
  key.components.push_back({"external", external_hash.hex_digest(),
                            std::to_string(external.size()) + " file(s), " +
                                std::to_string(external_bytes) + " bytes"});

  std::string canonical = canonical_options(options);
  key.components.push_back({"options", util::sha256_hex(canonical), canonical});

  std::string text = "npucc-cache-key\n";
  for (const auto& component : key.components) {
    text += component.name + ":" + component.digest + "\n";
  }
  key.key = util::sha256_hex(text);
  return key;
}

} // namespace npucc::cache

#include "pipeline/cache_explain.h"

#include "output/manifest.h"
#include "key/cache_key.h"
#include "key/input_digest.h"
#include "key/key_options.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "pipeline/resource_ops.h"
#include "util/sha256.h"

#include <algorithm>
#include <map>

namespace npucc::pipeline {

using nlohmann::json;

const char* key_lookup_name(KeyLookup lookup) {
  switch (lookup) {
  case KeyLookup::hit:
    return "hit";
  case KeyLookup::damaged:
    return "damaged";
  case KeyLookup::miss:
    return "miss";
  case KeyLookup::bypass:
    return "bypass";
  case KeyLookup::not_checked:
    return "not_checked";
  }
  return "?";
}

namespace {

struct Recorded {
  std::string digest;
  json value;
};

// What the entry says of each component: its manifest's cache_key_components, else what
// older entries hold anyway (the header's version and options, the manifest's model
// digest). A component missing from the result was not recorded.
std::map<std::string, Recorded> recorded_components(const cache::EntryHeader& header,
                                                    const json& manifest) {
  std::map<std::string, Recorded> out;
  out["compiler"] = {util::sha256_hex(header.compiler_version), header.compiler_version};
  json options = json::parse(header.options, nullptr, false);
  out["options"] = {util::sha256_hex(header.options),
                    options.is_discarded() ? json(header.options) : options};
  if (!manifest.is_object()) {
    return out;
  }
  const json& model = manifest.value("model", json::object());
  if (model.is_object() && model.value("sha256", json()).is_string()) {
    out["model"] = {model["sha256"].get<std::string>(),
                    model.value("file", std::string()) + ", " +
                        std::to_string(model.value("bytes", uint64_t{0})) + " bytes"};
  }
  const json& components = manifest.value("cache_key_components", json::array());
  for (const auto& component : components.is_array() ? components : json::array()) {
    if (component.is_object() && component.value("name", json()).is_string() &&
        component.value("digest", json()).is_string()) {
      out[component["name"].get<std::string>()] = {component["digest"].get<std::string>(),
                                                   component.value("value", json())};
    }
  }
  return out;
}

// The canonical options as leaves by path: {"precision": {"a": 1}} -> "precision.a": 1.
void flatten(const json& value, const std::string& prefix, std::map<std::string, json>& out) {
  if (!value.is_object()) {
    out[prefix] = value;
    return;
  }
  for (const auto& [name, item] : value.items()) {
    flatten(item, prefix.empty() ? name : prefix + "." + name, out);
  }
}

std::vector<OptionDifference> option_differences(const json& recorded, const json& current) {
  std::map<std::string, json> old_leaves;
  std::map<std::string, json> new_leaves;
  flatten(recorded, "", old_leaves);
  flatten(current, "", new_leaves);
  std::map<std::string, OptionDifference> by_name;
  for (const auto& [name, value] : old_leaves) {
    by_name[name] = {name, value, json()};
  }
  for (const auto& [name, value] : new_leaves) {
    auto [it, added] = by_name.try_emplace(name, OptionDifference{name, json(), value});
    it->second.current = value;
  }
  std::vector<OptionDifference> out;
  for (auto& [name, difference] : by_name) {
    if (difference.recorded != difference.current) {
      out.push_back(std::move(difference));
    }
  }
  return out;
}

} // namespace

NearbyEntry compare_with_entry(const CacheKey& current, const cache::EntryInfo& entry,
                               const json& manifest) {
  NearbyEntry out;
  out.info = entry;
  std::map<std::string, Recorded> recorded = recorded_components(entry.header, manifest);
  json values = output::key_components_json(current);
  for (size_t i = 0; i < current.components.size(); ++i) {
    const KeyComponent& component = current.components[i];
    auto it = recorded.find(component.name);
    if (it == recorded.end()) {
      out.not_recorded.push_back(component.name);
      continue;
    }
    if (it->second.digest == component.digest) {
      continue;
    }
    const json& now = values[i]["value"];
    out.differing.push_back(
        {component.name, it->second.digest, component.digest, it->second.value, now});
    if (component.name == "options" && it->second.value.is_object() && now.is_object()) {
      out.options = option_differences(it->second.value, now);
    }
  }
  return out;
}

namespace {

// The entry's manifest.json, or null when it cannot be read as JSON.
json read_entry_manifest(const cache::LocalStorage& storage, const std::string& key) {
  util::Expected<std::string> text =
      cache::read_small_file(storage.entry_dir(key) / "manifest.json");
  if (!text) {
    return json(); // an entry without a readable manifest is damaged: verify reports it
  }
  json manifest = json::parse(*text, nullptr, false);
  return manifest.is_discarded() ? json() : manifest;
}

// Fewest known differences first, then fewest unknowns, then the newest.
bool nearer(const NearbyEntry& a, const NearbyEntry& b) {
  if (a.differing.size() != b.differing.size()) {
    return a.differing.size() < b.differing.size();
  }
  if (a.not_recorded.size() != b.not_recorded.size()) {
    return a.not_recorded.size() < b.not_recorded.size();
  }
  if (a.info.header.created != b.info.header.created) {
    return a.info.header.created > b.info.header.created;
  }
  return a.info.key < b.info.key;
}

void look_up(CacheExplanation& out, const cache::LocalStorage& storage) {
  std::vector<cache::EntryInfo> entries = storage.list(cache::Check::files);
  out.entries = entries.size();
  out.lookup = KeyLookup::miss;
  std::vector<NearbyEntry> same_model;
  for (const auto& info : entries) {
    if (info.key == out.key.key) {
      bool usable = info.state == cache::EntryState::ok;
      out.lookup = usable ? KeyLookup::hit : KeyLookup::damaged;
      out.detail =
          usable ? "" : std::string(cache::entry_state_name(info.state)) + ": " + info.problem;
    } else if (!info.header.key.empty() && info.header.model == out.model) {
      same_model.push_back(
          compare_with_entry(out.key, info, read_entry_manifest(storage, info.key)));
    }
  }
  out.model_entries = same_model.size();
  std::sort(same_model.begin(), same_model.end(), nearer);
  if (same_model.size() > k_nearest_entries) {
    same_model.resize(k_nearest_entries);
  }
  out.nearest = std::move(same_model);
}

// What a compile would find in the digest cache for each of the model's files; the
// recorded digests are checked against the bytes (the model's hashed as it was read).
std::vector<InputFileDigest> describe_inputs(const Model& model, const cache::LocalStorage& storage,
                                             DigestCacheMode mode) {
  cache::InputDigests digests(&storage, mode);
  std::shared_ptr<util::InputFiles> inputs = model::input_files(model);
  if (!inputs) {
    inputs = std::make_shared<util::InputFiles>();
  }
  std::vector<std::filesystem::path> paths{model.path};
  for (const auto& file : model.external_files) {
    paths.push_back(file.path);
  }
  std::sort(paths.begin() + 1, paths.end());
  paths.erase(std::unique(paths.begin() + 1, paths.end()), paths.end());
  std::vector<InputFileDigest> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    InputFileDigest input;
    input.path = paths[i];
    // Open since the model was read: the files the compile would read.
    std::shared_ptr<util::InputFile> file = inputs->open(
        paths[i], i == 0 ? util::InputFile::Links::follow : util::InputFile::Links::refuse);
    cache::InputDigest found = digests.look_up(file->fd());
    input.from_stamp = found.from_stamp;
    input.why_hashed = found.why_hashed;
    if (found.from_stamp) {
      std::string actual = i == 0 ? model.sha256 : key::digest_of_input(file, nullptr).value();
      input.matches_bytes = actual == found.sha256;
    }
    out.push_back(std::move(input));
  }
  return out;
}

// What a compile of this request would make of the index of the model's bytes.
IndexFacts describe_index(const Model& model, const CompileOptions& options,
                          const cache::LocalStorage& storage) {
  IndexFacts out;
  out.needed = key::key_options_need_model(options);
  std::optional<cache::ModelIndex> index = storage.model_index(model.sha256);
  out.found = index.has_value();
  if (!index) {
    out.why = "no model index of these bytes in the cache";
    return out;
  }
  out.why = cache::why_key_facts_not_used(*index, model.sha256, storage.signing());
  out.used = out.why.empty();
  if (out.used) {
    out.why = cache::k_key_facts_used_because;
  }
  return out;
}

} // namespace

CacheExplanation explain_cache(const CompileOptions& options, const CacheConfig& config,
                               CacheUse use) {
  CacheExplanation out;
  Model model = read_model(options.model_path, options.limits, Weights::in_table);
  out.key = key::compute_key(model, options);
  out.model = options.model_path.stem().string();
  if (use == CacheUse::disabled) {
    out.detail = "the cache is not used (--no-cache, NPUCC_CACHE_DISABLE or cache.disable)";
    return out;
  }
  if (auto uncacheable = find_uncacheable_op(model.proto)) {
    out.lookup = KeyLookup::bypass;
    out.detail = uncacheable->message;
    return out;
  }
  std::error_code ec;
  if (config.dir_source == SettingSource::built_in && !std::filesystem::exists(config.dir, ec)) {
    out.lookup = KeyLookup::miss;
    out.detail = "the default cache folder " + config.dir.string() +
                 " does not exist yet; a compile creates it";
    return out;
  }
  std::optional<cache::LocalStorage> storage;
  try {
    storage.emplace(cache::open_local_storage(config, CacheIntent::read));
  } catch (const Error& e) {
    // What a compile would stumble on (a missing or foreign folder): said, not thrown,
    // since explaining it is the point. The default folder is created by a compile.
    out.detail = std::string(e.what()) + (e.hint().empty() ? "" : " (" + e.hint() + ")");
    return out;
  }
  out.cache_dir = storage->root();
  look_up(out, *storage);
  out.inputs = describe_inputs(model, *storage, config.digest_cache);
  out.index = describe_index(model, options, *storage);
  return out;
}

} // namespace npucc::pipeline

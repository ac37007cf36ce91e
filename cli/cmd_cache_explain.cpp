// `npucc cache explain MODEL [compile's options]`: the key a compile would compute, whether
// the cache holds it, and for a miss what differs from the nearest entries of the model.
#include "cache_commands.h"
#include "output/manifest.h"
#include "pipeline/cache_explain.h"
#include "util/strings.h"

#include <iomanip>

namespace npucc::cli::cache_cli {

namespace {

constexpr int k_explain_no_hit = 3;

using nlohmann::json;
using pipeline::CacheExplanation;
using pipeline::KeyLookup;
using pipeline::NearbyEntry;

json nearby_json(const NearbyEntry& entry) {
  json differing = json::array();
  json components = json::array();
  for (const auto& difference : entry.differing) {
    differing.push_back(difference.name);
    components.push_back({{"name", difference.name},
                          {"recorded_digest", difference.recorded_digest},
                          {"current_digest", difference.current_digest},
                          {"recorded_value", difference.recorded_value},
                          {"current_value", difference.current_value}});
  }
  json options = json::array();
  for (const auto& option : entry.options) {
    options.push_back(
        {{"name", option.name}, {"recorded", option.recorded}, {"current", option.current}});
  }
  const cache::EntryInfo& info = entry.info;
  return {{"key", info.key},
          {"created", info.header.created},
          {"last_used", info.last_used()},
          {"compiler_version", info.header.compiler_version},
          {"state", cache::entry_state_name(info.state)},
          {"differing", differing},
          {"not_recorded", entry.not_recorded},
          {"components", components},
          {"options", options}};
}

json inputs_json(const CacheExplanation& out) {
  json inputs = json::array();
  for (const auto& input : out.inputs) {
    inputs.push_back({{"path", input.path.string()},
                      {"digest", input.from_stamp ? "recorded" : "hashed"},
                      {"why_hashed", input.from_stamp ? json() : json(input.why_hashed)},
                      {"matches_bytes", input.from_stamp ? json(input.matches_bytes) : json()}});
  }
  return inputs;
}

json explanation_json(const CacheExplanation& out, const CompileOptions& options,
                      const CacheConfig& config) {
  json nearest = json::array();
  for (const auto& entry : out.nearest) {
    nearest.push_back(nearby_json(entry));
  }
  auto text_or_null = [](const std::string& text) { return text.empty() ? json() : json(text); };
  return {{"format", "npucc-cache-explain"},
          {"format_version", 1},
          {"model", options.model_path.string()},
          {"model_name", out.model},
          {"key", out.key.key},
          {"components", output::key_components_json(out.key)},
          {"cache",
           {{"dir", text_or_null(out.cache_dir.string())},
            {"checked", !out.cache_dir.empty()},
            {"lookup", pipeline::key_lookup_name(out.lookup)},
            {"detail", text_or_null(out.detail)},
            {"entries", out.entries},
            {"model_entries", out.model_entries}}},
          {"remote", {{"url", text_or_null(config.remote.url)}, {"checked", false}}},
          {"inputs", inputs_json(out)},
          {"model_index",
           {{"found", out.index.found},
            {"facts_needed", out.index.needed},
            {"facts_used", out.index.used},
            {"why", text_or_null(out.index.why)}}},
          {"nearest", nearest}};
}

// A key component's value for one line: text as it is, JSON compact.
std::string shown(const json& value) {
  return util::printable(value.is_string() ? value.get<std::string>() : value.dump());
}

// An option's value: JSON (so "" shows), a missing one as "(unset)".
std::string shown_option(const json& value) {
  return value.is_null() ? "(unset)" : util::printable(value.dump());
}

void print_nearby(const NearbyEntry& entry) {
  const cache::EntryInfo& info = entry.info;
  std::vector<std::string> names;
  for (const auto& difference : entry.differing) {
    names.push_back(difference.name);
  }
  std::cout << "  " << info.key.substr(0, 12) << "  created " << format_time(info.header.created)
            << "  "
            << (names.empty() ? "no recorded component differs"
                              : "differs in " + util::join(names, ", "))
            << "\n";
  for (const auto& difference : entry.differing) {
    if (difference.name == "options" && !entry.options.empty()) {
      for (const auto& option : entry.options) {
        std::cout << "    option " << util::printable(option.name) << ": "
                  << shown_option(option.recorded) << " -> " << shown_option(option.current)
                  << "\n";
      }
      continue;
    }
    std::string before = shown(difference.recorded_value);
    std::string after = shown(difference.current_value);
    if (before == after) { // same size, other bytes: the digests tell them apart
      before += " (sha256 " + util::printable(difference.recorded_digest.substr(0, 12)) + ")";
      after += " (sha256 " + difference.current_digest.substr(0, 12) + ")";
    }
    std::cout << "    " << difference.name << ": " << before << " -> " << after << "\n";
  }
  if (!entry.not_recorded.empty()) {
    std::cout << "    not recorded by this entry (npucc "
              << util::printable(info.header.compiler_version)
              << "), may differ too: " << util::join(entry.not_recorded, ", ") << "\n";
  }
}

void print_lookup(const CacheExplanation& out, const CacheConfig& config) {
  std::string where = util::printable(out.cache_dir.string());
  std::cout << std::left << std::setw(10) << "cache";
  switch (out.lookup) {
  case KeyLookup::hit:
    std::cout << "hit: the key is in " << where << "\n";
    break;
  case KeyLookup::damaged:
    std::cout << "miss: the entry under this key in " << where << " is damaged ("
              << util::printable(out.detail) << "); a compile would replace it\n";
    break;
  case KeyLookup::miss:
    std::cout << "miss: "
              << (out.cache_dir.empty() ? util::printable(out.detail)
                                        : "no entry under this key in " + where + " (" +
                                              count_entries(out.entries) + ")")
              << "\n";
    break;
  case KeyLookup::bypass:
    std::cout << "bypass: " << util::printable(out.detail)
              << ": a compile neither looks the key up nor stores it\n";
    break;
  case KeyLookup::not_checked:
    std::cout << "not checked: " << util::printable(out.detail) << "\n";
    break;
  }
  if (!config.remote.url.empty()) {
    std::cout << std::left << std::setw(10) << "remote" << util::printable(config.remote.url)
              << ": not checked (explain reads the local cache only; a compile asks the "
                 "remote cache on a local miss)\n";
  }
}

// How a compile would know each input's digest: recorded (no byte read) or hashed, why.
void print_inputs(const CacheExplanation& out) {
  for (const auto& input : out.inputs) {
    std::cout << std::left << std::setw(10) << "input" << util::printable(input.path.string())
              << ": ";
    if (!input.from_stamp) {
      std::cout << "hashed by a compile (" << util::printable(input.why_hashed) << ")\n";
    } else if (input.matches_bytes) {
      std::cout << "its recorded digest is used (unchanged since: no byte read)\n";
    } else {
      std::cout << "its recorded digest is used but differs from its bytes: the file changed "
                   "without its inode times showing it (set --digest-cache off)\n";
    }
  }
}

// Whether a compile would take the model index's key facts, and why (issue 42: whatever
// decides which entry a request gets is the reader's own or signed).
void print_index(const CacheExplanation& out) {
  if (out.cache_dir.empty()) {
    return;
  }
  const pipeline::IndexFacts& index = out.index;
  std::cout << std::left << std::setw(10) << "index";
  if (!index.found) {
    std::cout << util::printable(index.why) << "\n";
    return;
  }
  std::cout << "key facts " << (index.used ? "used" : "not used") << " ("
            << util::printable(index.why) << ")"
            << (index.needed ? (index.used ? ": no parse needed" : ": a compile reads the model")
                             : ": not needed by these options")
            << "\n";
}

// The verdict first (what a CI log shows), then how the key was made, then for a miss
// what differs from the nearest entries.
void print_explanation(const CacheExplanation& out, const CacheConfig& config) {
  print_lookup(out, config);
  for (const auto& component : out.key.components) {
    std::cout << std::left << std::setw(10) << component.name << component.digest << "  "
              << util::printable(component.value) << "\n";
  }
  std::cout << std::left << std::setw(10) << "key" << out.key.key << "\n";
  // What the request gave that the key leaves out: requests that differ only there share
  // one entry (the schedule is written into the manifest when the entry is materialised).
  for (const auto& omission : out.key.not_in_key) {
    std::cout << std::left << std::setw(10) << omission.name << " "
              << util::printable(omission.value) << ": " << util::printable(omission.why) << "\n";
  }
  print_inputs(out);
  print_index(out);
  if (out.lookup != KeyLookup::miss || out.cache_dir.empty()) {
    return;
  }
  std::string model = util::printable(out.model);
  if (out.nearest.empty()) {
    std::cout << "no other entries of model " << model << " in the cache\n";
    return;
  }
  std::cout << "nearest entries of model " << model << " (" << out.nearest.size() << " of "
            << out.model_entries << " under other keys):\n";
  for (const auto& entry : out.nearest) {
    print_nearby(entry);
  }
}

} // namespace

std::function<int()> setup_explain(CLI::App& command, const GlobalOptions&) {
  auto args = std::make_shared<CompileCommandArgs>();
  add_compile_command_options(command, *args, CompileCommand::explain);
  return [args] {
    CompileRequest request = make_compile_request(*args);
    const CompileOptions& options = request.options;
    const CacheConfig& config = request.cache;
    CacheExplanation out = pipeline::explain_cache(options, config, request.use);
    if (args->json) {
      print_json(explanation_json(out, options, config));
    } else {
      print_explanation(out, config);
    }
    // A CI step asserts a hit with the exit status: 0 for a hit, 3 for anything a compile
    // would not take from the cache (1 and 2 stay errors and usage).
    return out.lookup == KeyLookup::hit ? 0 : k_explain_no_hit;
  };
}

} // namespace npucc::cli::cache_cli

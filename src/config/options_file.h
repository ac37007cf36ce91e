#pragma once

// `--options FILE`: the options a user already gives Ascend's ExperimentalConfig /
// NPURunConfig, as one JSON object with Ascend's key names, e.g.
//
//   {"graph_compiler_cache_dir": "./cache", "accelerate_train_mode": "fast|step|0.9",
//    "precision_mode": "allow_fp32_to_fp16", "modify_mixlist": "ops.json"}
//
// Keys npucc maps come from settings_table() (SettingInfo::ascend_key); relative paths are
// taken from the options file's folder; "" means unset, as in Ascend. A known Ascend key
// that npucc has no use for is a warning; any other key is an error with a suggestion.

#include "npucc/config.h"

#include <filesystem>
#include <string>
#include <vector>

namespace npucc::config {

struct OptionsFileValue {
  std::string key;        // settings-table key
  std::string ascend_key; // as written in the file
  std::string value;      // raw; check_value() validates it
};

struct OptionsFile {
  std::vector<OptionsFileValue> values;
  std::vector<std::string> warnings;
};

// Throws npucc::Error naming the file (and line and column for bad JSON).
OptionsFile read_options_file(const std::filesystem::path& file);

// Ascend options npucc knows of but does not use (they configure the device runtime).
const std::vector<std::string>& ignored_ascend_keys();

} // namespace npucc::config

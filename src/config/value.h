#pragma once

#include "npucc/config.h"

#include <filesystem>
#include <optional>
#include <string>

namespace npucc::config {

// Validates `raw` for the setting and returns its canonical text ("" stays "": unset;
// blanks around a value are trimmed, except in accelerate_train_mode, whose parser
// refuses them for every reader alike).
// `where` names the source in errors ("NPUCC_CACHE_DIR", "config.toml:3", "--cache-dir");
// a relative path is taken from `base_dir` when it is not empty; "~/" is $HOME.
// Throws npucc::usage_error.
std::string check_value(const SettingInfo& info, const std::string& raw, const std::string& where,
                        const std::filesystem::path& base_dir, const GetEnv& getenv);

} // namespace npucc::config

#pragma once

#include "npucc/compile.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace npucc::pipeline {

// A cache hit does no compile work, so its CompileResult comes from the stored
// manifest.json. `manifest` is its contents, parsed (null when it is not JSON);
// `manifest_path` names it in errors and becomes the result's manifest_path. Throws
// npucc::Error when it is not JSON or lacks what a manifest must have ("graphs",
// "memory_plan"), or a field has the wrong type.
CompileResult parse_cached_manifest(const nlohmann::json& manifest,
                                    const std::filesystem::path& manifest_path,
                                    const std::string& model_sha256);

} // namespace npucc::pipeline

#pragma once

// Where a setting's value came from. Its own header because both the settings
// (npucc/config.h) and their typed forms below them (npucc/cache_config.h: CacheConfig
// remembers where its folder came from, for messages) need it, and the storage layer
// must not include the settings.

namespace npucc {

enum class SettingSource { built_in, config_file, environment, options_file, command_line };

} // namespace npucc

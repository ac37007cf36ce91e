#pragma once

// `npucc schedule --state-file FILE`: the one-way switch kept between calls. The file is a
// schedule_state_json() document, replaced atomically (a temporary beside it, then a
// rename), so a crash leaves the old state or the new one, never half of either.

#include "npucc/schedule.h"

#include <filesystem>
#include <optional>

namespace npucc::schedule {

// The saved state; nullopt when `path` does not exist yet. Throws usage_error naming the
// file when it is not a regular file, or not npucc's state (never read as one, never
// replaced: npucc only writes over its own files).
std::optional<ScheduleState> read_state_file(const std::filesystem::path& path);

void write_state_file(const std::filesystem::path& path, const ScheduleState& state);

} // namespace npucc::schedule

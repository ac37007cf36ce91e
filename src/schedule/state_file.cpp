#include "schedule/state_file.h"

#include "npucc/error.h"
#include "util/file_io.h"

#include <system_error>

namespace npucc::schedule {

namespace fs = std::filesystem;

namespace {

// A state is about 120 bytes; a larger file is someone else's and is not read whole.
constexpr uintmax_t k_max_state_bytes = 64 * 1024;

} // namespace

std::optional<ScheduleState> read_state_file(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) {
    return std::nullopt;
  }
  const std::string where = "--state-file " + path.string();
  if (error || status.type() != fs::file_type::regular) {
    throw usage_error(where + " is not a regular file", "give the path of a file");
  }
  const uintmax_t size = fs::file_size(path, error);
  if (!error && size > k_max_state_bytes) {
    throw usage_error(where + " is not an npucc schedule state (" + std::to_string(size) +
                          " bytes); npucc leaves it as it is",
                      "give --state-file a new file name");
  }
  return parse_schedule_state_json(util::read_file(path), where);
}

void write_state_file(const fs::path& path, const ScheduleState& state) {
  try {
    util::write_file_atomic(path, schedule_state_json(state));
  } catch (const Error& error) {
    throw Error("--state-file: " + std::string(error.what()), "give a path in a writable folder",
                error.status());
  }
}

} // namespace npucc::schedule

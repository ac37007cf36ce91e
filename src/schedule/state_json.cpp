// ScheduleState <-> JSON. The document names itself ("format"), so a file npucc did not
// write is recognised and refused rather than read as a state or overwritten.
#include "npucc/error.h"
#include "npucc/schedule.h"

#include <nlohmann/json.hpp>

namespace npucc {
namespace {

constexpr const char* k_state_format = "npucc-schedule-state";
constexpr int k_state_format_version = 1;

const nlohmann::json& field(const nlohmann::json& document, const char* key,
                            nlohmann::json::value_t type, const std::string& where) {
  const auto found = document.find(key);
  if (found == document.end() || found->type() != type) {
    throw usage_error(where + ": the schedule state has no valid \"" + key + "\" field",
                      "it was not written by npucc or is damaged; give another state file");
  }
  return *found;
}

} // namespace

std::string schedule_state_json(const ScheduleState& state) {
  nlohmann::ordered_json out;
  out["format"] = k_state_format;
  out["format_version"] = k_state_format_version;
  out["mode"] = state.mode;
  out["role"] = to_string(state.role);
  out["switched"] = state.role == GraphRole::high;
  return out.dump(2) + "\n";
}

ScheduleState parse_schedule_state_json(const std::string& text, const std::string& where) {
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  const auto format = document.is_object() ? document.find("format") : document.end();
  // The way out depends on where the text came from: a file the CLI would write, or a
  // state a program saved (the Python module's checkpoint).
  const bool from_file = where.rfind("--state-file", 0) == 0;
  if (!document.is_object() || format == document.end() || *format != k_state_format) {
    throw usage_error(where + " is not an npucc schedule state (no \"format\": \"" +
                          k_state_format + "\")" +
                          (from_file ? "; npucc leaves it as it is" : std::string()),
                      from_file ? "give --state-file a new file name, or remove this file if "
                                  "it is yours"
                                : "restore what schedule_state_json() (Python: "
                                  "Schedule.state_dict()) saved");
  }
  const auto& version =
      field(document, "format_version", nlohmann::json::value_t::number_unsigned, where);
  if (version.get<uint64_t>() != k_state_format_version) {
    throw usage_error(where + ": schedule state format_version " + version.dump() +
                          " is not 1, the version this npucc reads",
                      from_file ? "use the npucc that wrote it, or start over with a new state file"
                                : "use the npucc that saved it, or start the schedule afresh");
  }
  ScheduleState state;
  state.mode = field(document, "mode", nlohmann::json::value_t::string, where).get<std::string>();
  try {
    state.mode = parse_accelerate_train_mode(state.mode).to_string();
  } catch (const Error& error) {
    throw usage_error(where + ": " + error.what(),
                      "the file is damaged; start over with a new one");
  }
  state.role = parse_graph_role(
      field(document, "role", nlohmann::json::value_t::string, where).get<std::string>(),
      where + ": role");
  const bool switched =
      field(document, "switched", nlohmann::json::value_t::boolean, where).get<bool>();
  if (switched != (state.role == GraphRole::high)) {
    throw usage_error(where + ": the schedule state says role \"" + to_string(state.role) +
                          "\" but switched " + (switched ? "true" : "false"),
                      "the file is damaged; start over with a new one");
  }
  return state;
}

} // namespace npucc

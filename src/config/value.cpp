#include "config/value.h"

#include "npucc/error.h"
#include "npucc/train_mode.h"
#include "util/bool_text.h"
#include "util/remote_url.h"
#include "util/size.h"
#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace npucc::config {

namespace {

std::string check_path(const std::string& raw, const std::filesystem::path& base_dir,
                       const std::string& where, const GetEnv& getenv) {
  std::filesystem::path path = raw;
  if (raw == "~" || util::starts_with(raw, "~/")) {
    auto home = getenv("HOME");
    if (!home || home->empty()) {
      throw usage_error(where + ": cannot expand \"~\" in \"" + raw + "\": HOME is not set",
                        "give an absolute path");
    }
    path = std::filesystem::path(*home) / raw.substr(std::min<size_t>(raw.size(), 2));
  } else if (path.is_relative() && !base_dir.empty()) {
    path = base_dir / path;
  }
  return path.lexically_normal().string();
}

std::string check_precision(const SettingInfo& info, const std::string& raw,
                            const std::string& where) {
  PrecisionOptions options;
  (info.kind == SettingKind::precision_mode ? options.precision_mode : options.precision_mode_v2) =
      raw;
  try {
    validate_precision_options(options, std::nullopt);
  } catch (const Error& e) {
    throw usage_error(where + ": " + e.what(), e.hint());
  }
  return raw;
}

} // namespace

std::string check_value(const SettingInfo& info, const std::string& raw, const std::string& where,
                        const std::filesystem::path& base_dir, const GetEnv& getenv) {
  std::string text(util::trim(raw));
  if (text.empty()) {
    return "";
  }
  switch (info.kind) {
  case SettingKind::text:
    return text;
  case SettingKind::path:
    return check_path(text, base_dir, where, getenv);
  case SettingKind::size:
    parse_size_setting(text, where);
    return text;
  case SettingKind::boolean: {
    auto value = util::parse_bool_text(text);
    if (!value) {
      throw usage_error(where + ": \"" + text + "\" is not a boolean",
                        "use true or false (or 1 / 0)");
    }
    return *value ? "true" : "false";
  }
  case SettingKind::choice: {
    if (std::find(info.choices.begin(), info.choices.end(), text) != info.choices.end()) {
      return text;
    }
    std::string match = util::closest_match(text, info.choices);
    throw usage_error(where + ": \"" + text + "\" is not a valid " + info.key,
                      (match.empty() ? "" : "did you mean \"" + match + "\"? ") +
                          "valid values: " + util::join(info.choices, ", "));
  }
  case SettingKind::train_mode:
    // Untrimmed: compile, schedule, config and the API read a mode through the one parser,
    // which refuses whitespace around a field (" fast|step") with a hint.
    try {
      parse_accelerate_train_mode(raw);
    } catch (const Error& e) {
      throw usage_error(where + ": " + e.what(), e.hint());
    }
    return raw;
  case SettingKind::precision_mode:
  case SettingKind::precision_mode_v2:
    return check_precision(info, text, where);
  case SettingKind::remote_url:
    util::check_remote_url(text, where);
    return text;
  case SettingKind::seconds: {
    char* end = nullptr;
    double seconds = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 ||
        seconds > 86400) {
      throw usage_error(where + ": \"" + text + "\" is not a number of seconds",
                        "write a positive number, e.g. 2 or 0.5");
    }
    return text;
  }
  }
  return text;
}

} // namespace npucc::config

namespace npucc {

uint64_t parse_size_setting(const std::string& text, const std::string& where) {
  std::optional<uint64_t> bytes = util::parse_size(text);
  if (!bytes) {
    throw usage_error(where + ": \"" + text + "\" is not a size",
                      std::string("use bytes or a number and a unit (") + util::k_size_units +
                          "), e.g. 500M or 10G (0 = unbounded)");
  }
  return *bytes;
}

} // namespace npucc

#include "npucc/train_mode.h"

#include "npucc/error.h"
#include "precision/option_values.h"
#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <system_error>
#include <vector>

namespace npucc {
namespace {

// Function-local statics: the parser may run during another file's static initialisation.
const std::vector<std::string>& types() {
  static const std::vector<std::string> values = {"fast", "fast1"};
  return values;
}

const std::vector<std::string>& triggers() {
  static const std::vector<std::string> values = {"step", "loss"};
  return values;
}

const std::vector<std::string>& precision_modes() {
  static const std::vector<std::string> values = {"force_fp32",
                                                  "allow_fp32_to_fp16",
                                                  "force_fp16",
                                                  "must_keep_origin_dtype",
                                                  "allow_mix_precision",
                                                  "cube_fp16in_fp32out",
                                                  "allow_mix_precision_fp16",
                                                  "allow_mix_precision_bf16",
                                                  "allow_fp32_to_bf16"};
  return values;
}

const std::vector<std::string>& precision_modes_v2() {
  static const std::vector<std::string> values = {"fp16", "origin", "cube_fp16in_fp32out",
                                                  "mixed_float16", "mixed_bfloat16"};
  return values;
}

// What an accelerate mode can be combined with: it replaces the precision mode during the
// low-precision phase, which only makes sense on top of these (SPEC §1).
const std::vector<std::string>& accelerate_precision_modes() {
  static const std::vector<std::string> values = {"", "allow_fp32_to_fp16",
                                                  "must_keep_origin_dtype"};
  return values;
}

const std::vector<std::string>& accelerate_precision_modes_v2() {
  static const std::vector<std::string> values = {"", "origin"};
  return values;
}

// Ratio bounds as decimal strings, so the boundaries are exact (0.9 is accepted, 0.9000001 is
// not) whatever binary double they round to.
struct RatioRange {
  std::string_view min;
  std::string_view max;
  std::string_view fallback;
};
constexpr RatioRange k_step_range{"0.2", "0.9", "0.9"};
constexpr RatioRange k_loss_range{"1.01", "1.5", "1.05"};

const RatioRange& range_for(SwitchTrigger trigger) {
  return trigger == SwitchTrigger::step ? k_step_range : k_loss_range;
}

std::string in_quotes(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

std::string allowed_list(const std::vector<std::string>& values) {
  return util::join(values, ", ");
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string match = util::closest_match(word, candidates);
  return match.empty() ? std::string() : " (did you mean " + in_quotes(match) + "?)";
}

bool has_whitespace(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

bool all_digits(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

// A plain decimal: "0.9", "1", ".5", "1.050". No sign, exponent, hex, inf or nan.
bool is_plain_decimal(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos) {
    return !text.empty() && all_digits(text);
  }
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = text.substr(dot + 1);
  return !fraction.empty() && all_digits(whole) && all_digits(fraction);
}

// Exact comparison of two plain decimals: -1, 0 or 1.
int compare_decimal(std::string_view a, std::string_view b) {
  auto split_number = [](std::string_view text) {
    const size_t dot = text.find('.');
    std::string_view whole = text.substr(0, dot);
    std::string_view fraction =
        dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    while (!whole.empty() && whole.front() == '0') {
      whole.remove_prefix(1);
    }
    while (!fraction.empty() && fraction.back() == '0') {
      fraction.remove_suffix(1);
    }
    return std::pair{whole, fraction};
  };
  const auto [a_whole, a_fraction] = split_number(a);
  const auto [b_whole, b_fraction] = split_number(b);
  if (a_whole.size() != b_whole.size()) {
    return a_whole.size() < b_whole.size() ? -1 : 1;
  }
  if (const int order = a_whole.compare(b_whole); order != 0) {
    return order < 0 ? -1 : 1;
  }
  // Fractions without trailing zeros compare correctly as strings.
  if (const int order = a_fraction.compare(b_fraction); order != 0) {
    return order < 0 ? -1 : 1;
  }
  return 0;
}

double to_double(std::string_view decimal) {
  double value = 0;
  const auto result = std::from_chars(decimal.data(), decimal.data() + decimal.size(), value);
  (void)result; // the text was validated as a plain decimal in range
  return value;
}

[[noreturn]] void fail(const std::string& text, const std::string& what,
                       const std::string& hint = {}) {
  throw usage_error("accelerate_train_mode " + in_quotes(text) + ": " + what, hint);
}

std::string field_label(size_t index) {
  static const char* const names[] = {"TYPE (field 1)", "TRIGGER (field 2)", "RATIO (field 3)"};
  return names[index];
}

void reject_whitespace(const std::string& text, const std::vector<std::string>& fields) {
  const std::string allowed[] = {allowed_list(types()), allowed_list(triggers()),
                                 "0.2 to 0.9 for step, 1.01 to 1.5 for loss"};
  for (size_t i = 0; i < fields.size() && i < 3; ++i) {
    if (has_whitespace(fields[i])) {
      fail(text,
           field_label(i) + " is " + in_quotes(fields[i]) +
               ": whitespace is not allowed in accelerate_train_mode; allowed: " + allowed[i],
           "write it without spaces, e.g. \"fast|step|0.9\"");
    }
  }
}

size_t index_of(const std::vector<std::string>& values, std::string_view word) {
  return static_cast<size_t>(std::find(values.begin(), values.end(), word) - values.begin());
}

double parse_ratio(const std::string& text, const std::string& field, SwitchTrigger trigger) {
  const RatioRange& range = range_for(trigger);
  const std::string trigger_name = triggers()[static_cast<size_t>(trigger)];
  const std::string allowed = "allowed for " + trigger_name + ": " + std::string(range.min) +
                              " to " + std::string(range.max) + " (default " +
                              std::string(range.fallback) + ")";
  if (field.empty()) {
    return to_double(range.fallback);
  }
  if (!is_plain_decimal(field)) {
    fail(text,
         field_label(2) + " is " + in_quotes(field) + ": not a plain decimal number; " + allowed);
  }
  if (compare_decimal(field, range.min) < 0 || compare_decimal(field, range.max) > 0) {
    fail(text, field_label(2) + " is " + in_quotes(field) + ": out of range; " + allowed);
  }
  return to_double(field);
}

void check_known(const std::string& option, const std::string& value,
                 const std::vector<std::string>& valid) {
  if (value.empty() || index_of(valid, value) < valid.size()) {
    return;
  }
  throw usage_error(option + " " + in_quotes(value) + " is not a valid value; valid values: " +
                    allowed_list(valid) + did_you_mean(value, valid));
}

// " (from NPUCC_PRECISION_MODE)": where a value in a conflict came from.
std::string from_source(const std::string& origin) {
  return origin.empty() ? "" : " (from " + origin + ")";
}

std::string describe_allowed(const std::vector<std::string>& values) {
  std::vector<std::string> shown;
  for (const auto& value : values) {
    shown.push_back(value.empty() ? "empty" : value);
  }
  return util::join(shown, ", ");
}

} // namespace

std::string AccelerateTrainMode::type_name() const {
  return low == LowPrecision::float16 ? "fast" : "fast1";
}

std::string AccelerateTrainMode::trigger_name() const {
  return trigger == SwitchTrigger::step ? "step" : "loss";
}

std::string AccelerateTrainMode::to_string() const {
  // Shortest text that reads back as the same double: "0.9", not "0.90000000000000002".
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, ratio);
  return type_name() + "|" + trigger_name() + "|" + std::string(buffer, result.ptr);
}

AccelerateTrainMode parse_accelerate_train_mode(const std::string& text) {
  if (text.empty()) {
    fail(text, "empty value; expected TYPE|TRIGGER[|RATIO], e.g. \"fast|step|0.9\"");
  }
  const std::vector<std::string> fields = util::split(text, '|');
  reject_whitespace(text, fields);
  if (fields.size() < 2 || fields.size() > 3) {
    fail(text,
         "expected TYPE|TRIGGER[|RATIO] (two or three fields split on '|'), got " +
             std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s"),
         "e.g. \"fast|step\", \"fast|step|0.9\" or \"fast1|loss|1.05\"");
  }

  AccelerateTrainMode mode;
  const size_t type = index_of(types(), fields[0]);
  if (type == types().size()) {
    fail(text, field_label(0) + " is " + in_quotes(fields[0]) + "; allowed: " + allowed_list(types()) +
                   did_you_mean(fields[0], types()));
  }
  mode.low = type == 0 ? LowPrecision::float16 : LowPrecision::bfloat16;

  const size_t trigger = index_of(triggers(), fields[1]);
  if (trigger == triggers().size()) {
    fail(text, field_label(1) + " is " + in_quotes(fields[1]) +
                   "; allowed: " + allowed_list(triggers()) + did_you_mean(fields[1], triggers()));
  }
  mode.trigger = trigger == 0 ? SwitchTrigger::step : SwitchTrigger::loss;

  mode.ratio = parse_ratio(text, fields.size() == 3 ? fields[2] : std::string(), mode.trigger);
  return mode;
}

void validate_precision_options(const PrecisionOptions& options,
                                const std::optional<AccelerateTrainMode>& mode,
                                const PrecisionOrigins& origins) {
  check_known("precision_mode", options.precision_mode, precision_modes());
  check_known("precision_mode_v2", options.precision_mode_v2, precision_modes_v2());
  const std::string precision_mode = "precision_mode " + in_quotes(options.precision_mode) +
                                     from_source(origins.precision_mode);
  const std::string precision_mode_v2 = "precision_mode_v2 " +
                                        in_quotes(options.precision_mode_v2) +
                                        from_source(origins.precision_mode_v2);
  if (!options.precision_mode.empty() && !options.precision_mode_v2.empty()) {
    throw usage_error(precision_mode + " and " + precision_mode_v2 + " cannot be combined",
                      "give only one of precision_mode and precision_mode_v2");
  }
  if (!mode) {
    return;
  }
  const std::string accelerate = "accelerate_train_mode " + in_quotes(mode->to_string()) +
                                 from_source(origins.accelerate_train_mode);
  if (index_of(accelerate_precision_modes(), options.precision_mode) ==
      accelerate_precision_modes().size()) {
    throw usage_error(accelerate + " cannot be combined with " + precision_mode +
                          "; with accelerate_train_mode, " +
                          "precision_mode may only be " +
                          describe_allowed(accelerate_precision_modes()),
                      "the low-precision phase replaces the precision mode; drop one of them");
  }
  if (index_of(accelerate_precision_modes_v2(), options.precision_mode_v2) ==
      accelerate_precision_modes_v2().size()) {
    throw usage_error(accelerate + " cannot be combined with " + precision_mode_v2 +
                          "; with accelerate_train_mode, " +
                          "precision_mode_v2 may only be " +
                          describe_allowed(accelerate_precision_modes_v2()),
                      "the low-precision phase replaces the precision mode; drop one of them");
  }
}

namespace precision {

const std::vector<std::string>& precision_mode_values() {
  return precision_modes();
}

const std::vector<std::string>& precision_mode_v2_values() {
  return precision_modes_v2();
}

std::vector<std::string> accelerate_train_mode_values() {
  std::vector<std::string> values;
  for (const auto& type : types()) {
    for (const auto& trigger : triggers()) {
      values.push_back(type + "|" + trigger);
      values.push_back(parse_accelerate_train_mode(values.back()).to_string());
    }
  }
  return values;
}

} // namespace precision

} // namespace npucc

#pragma once

#include <optional>
#include <string>

namespace npucc {

// accelerate_train_mode = "TYPE|TRIGGER[|RATIO]" (SPEC §1), e.g. "fast|step|0.9".
enum class LowPrecision { float16, bfloat16 }; // TYPE: fast -> float16, fast1 -> bfloat16
enum class SwitchTrigger { step, loss };

struct AccelerateTrainMode {
  LowPrecision low = LowPrecision::float16;
  SwitchTrigger trigger = SwitchTrigger::step;
  double ratio = 0.9; // step: 0.2..0.9 (default 0.9); loss: 1.01..1.5 (default 1.05)

  std::string type_name() const;    // "fast" | "fast1"
  std::string trigger_name() const; // "step" | "loss"
  std::string to_string() const;    // canonical "fast|step|0.9"
};

// Parses and validates the option value; throws npucc::usage_error naming the field,
// the value and the allowed values.
AccelerateTrainMode parse_accelerate_train_mode(const std::string& text);

// The user's configured precision options (Ascend's precision_mode / precision_mode_v2);
// empty means not given.
struct PrecisionOptions {
  std::string precision_mode;
  std::string precision_mode_v2;
};

// Where each value came from, for the messages of validate_precision_options: the
// option, variable, "FILE:LINE" of config.toml or "FILE: key" of an options file
// (npucc/config.h's Setting::origin); "" names no source.
struct PrecisionOrigins {
  std::string accelerate_train_mode;
  std::string precision_mode;
  std::string precision_mode_v2;
};

// Validates the values and their combination (SPEC §1): each must be a known value,
// both at once is an error, and with an accelerate mode only the compatible ones are
// allowed. Throws npucc::usage_error naming both values and, when given, their sources.
void validate_precision_options(const PrecisionOptions& options,
                                const std::optional<AccelerateTrainMode>& mode,
                                const PrecisionOrigins& origins = {});

} // namespace npucc

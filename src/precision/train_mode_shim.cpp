// TEMPORARY: minimal definitions of include/npucc/train_mode.h so this branch links until
// branch precision-options (src/precision/train_mode.cpp, the real implementation) is
// merged. Delete this file in that merge.

#include "npucc/error.h"
#include "npucc/train_mode.h"
#include "util/strings.h"

#include <cstdlib>
#include <set>
#include <sstream>

namespace npucc {

std::string AccelerateTrainMode::type_name() const {
  return low == LowPrecision::float16 ? "fast" : "fast1";
}

std::string AccelerateTrainMode::trigger_name() const {
  return trigger == SwitchTrigger::step ? "step" : "loss";
}

std::string AccelerateTrainMode::to_string() const {
  std::ostringstream out;
  out << type_name() << "|" << trigger_name() << "|" << ratio;
  return out.str();
}

AccelerateTrainMode parse_accelerate_train_mode(const std::string& text) {
  auto fields = util::split(text, '|');
  if (fields.size() < 2 || fields.size() > 3) {
    throw usage_error("--accelerate-train-mode: invalid value \"" + text + "\"");
  }
  AccelerateTrainMode mode;
  if (fields[0] == "fast1") {
    mode.low = LowPrecision::bfloat16;
  } else if (fields[0] != "fast") {
    throw usage_error("--accelerate-train-mode: invalid type \"" + fields[0] + "\"");
  }
  if (fields[1] == "loss") {
    mode.trigger = SwitchTrigger::loss;
    mode.ratio = 1.05;
  } else if (fields[1] != "step") {
    throw usage_error("--accelerate-train-mode: invalid trigger \"" + fields[1] + "\"");
  }
  if (fields.size() == 3 && !fields[2].empty()) {
    mode.ratio = std::strtod(fields[2].c_str(), nullptr);
  }
  return mode;
}

void validate_precision_options(const PrecisionOptions& options,
                                const std::optional<AccelerateTrainMode>& mode) {
  if (!options.precision_mode.empty() && !options.precision_mode_v2.empty()) {
    throw usage_error("--precision-mode and --precision-mode-v2 cannot be given together");
  }
  if (!mode) {
    return;
  }
  static const std::set<std::string> v1 = {"", "allow_fp32_to_fp16", "must_keep_origin_dtype"};
  static const std::set<std::string> v2 = {"", "origin"};
  if (v1.count(options.precision_mode) == 0 || v2.count(options.precision_mode_v2) == 0) {
    throw usage_error("--accelerate-train-mode is not compatible with the precision mode");
  }
}

} // namespace npucc

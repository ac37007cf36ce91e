#include "npucc/schedule.h"

#include "npucc/error.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

namespace npucc {
namespace {

__extension__ using Wide = unsigned __int128; // total_step * decimal digits needs > 64 bits

// Same bounds as the parser's decimal strings; a literal and strtod of the same text give the
// same double, so these comparisons agree with parse_accelerate_train_mode.
constexpr double k_step_min = 0.2;
constexpr double k_step_max = 0.9;
constexpr double k_loss_min = 1.01;
constexpr double k_loss_max = 1.5;

std::string text_of(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

void check_ratio(const AccelerateTrainMode& mode) {
  const bool step = mode.trigger == SwitchTrigger::step;
  const double min = step ? k_step_min : k_loss_min;
  const double max = step ? k_step_max : k_loss_max;
  if (!(mode.ratio >= min && mode.ratio <= max)) {
    throw usage_error("accelerate_train_mode ratio " + text_of(mode.ratio) + " for " +
                      mode.trigger_name() +
                      " is out of range; allowed: " + (step ? "0.2 to 0.9" : "1.01 to 1.5"));
  }
}

void check_trigger(const AccelerateTrainMode& mode, SwitchTrigger reported) {
  if (mode.trigger == reported) {
    return;
  }
  const bool wants_step = mode.trigger == SwitchTrigger::step;
  throw usage_error("accelerate_train_mode \"" + mode.to_string() + "\" switches on " +
                        mode.trigger_name() + " but was given a " + (wants_step ? "loss" : "step"),
                    wants_step ? "report the step and the total step"
                               : "report the loss and the final loss");
}

void check(const StepReport& report) {
  if (report.total_step < 1) {
    throw usage_error("total step " + std::to_string(report.total_step) + " must be at least 1");
  }
  if (report.step < 0) {
    throw usage_error("step " + std::to_string(report.step) + " must not be negative");
  }
  if (report.iterations_per_loop < 1) {
    throw usage_error("iterations per loop " + std::to_string(report.iterations_per_loop) +
                      " must be at least 1");
  }
}

void check_final_loss(double final_loss) {
  if (!std::isfinite(final_loss) || final_loss <= 0) {
    throw usage_error("final loss " + text_of(final_loss) + " must be a finite number above 0");
  }
}

void check(const LossReport& report) {
  check_final_loss(report.final_loss);
  if (!std::isfinite(report.loss) || report.loss < 0) {
    throw usage_error("loss " + text_of(report.loss) +
                      " must be a finite number, 0 or above (0 means not reported yet)");
  }
}

} // namespace

std::string to_string(GraphRole role) {
  return role == GraphRole::low ? "low" : "high";
}

GraphRole parse_graph_role(const std::string& text, const std::string& where) {
  if (text == "low" || text == "high") {
    return text == "low" ? GraphRole::low : GraphRole::high;
  }
  throw usage_error(where + " \"" + text + "\" is not a graph role", "use low or high");
}

int64_t step_to_switch(int64_t total_step, double ratio) {
  check(StepReport{0, total_step, 1});
  check_ratio(AccelerateTrainMode{LowPrecision::float16, SwitchTrigger::step, ratio});
  // The shortest fixed-point text that reads back as `ratio` ("0.9"): that decimal is what the
  // user wrote, so floor(total * digits / 10^scale) is exact integer arithmetic.
  char buffer[64];
  const auto written =
      std::to_chars(buffer, buffer + sizeof buffer, ratio, std::chars_format::fixed);
  const std::string_view text(buffer, static_cast<size_t>(written.ptr - buffer));
  uint64_t digits = 0;
  uint64_t scale = 1;
  bool after_point = false;
  for (char c : text) {
    if (c == '.') {
      after_point = true;
      continue;
    }
    digits = digits * 10 + static_cast<uint64_t>(c - '0');
    if (after_point) {
      scale *= 10;
    }
  }
  const Wide product = static_cast<Wide>(total_step) * digits;
  return static_cast<int64_t>(product / scale);
}

double loss_to_switch(double final_loss, double ratio) {
  check_final_loss(final_loss);
  check_ratio(AccelerateTrainMode{LowPrecision::float16, SwitchTrigger::loss, ratio});
  return final_loss * ratio;
}

GraphRole decide(const AccelerateTrainMode& mode, const StepReport& report) {
  check_trigger(mode, SwitchTrigger::step);
  check(report);
  const bool reached = report.step >= step_to_switch(report.total_step, mode.ratio);
  // step + iterations_per_loop >= total_step, written so it cannot overflow.
  const bool last_loop = report.step >= report.total_step - report.iterations_per_loop;
  return reached || last_loop ? GraphRole::high : GraphRole::low;
}

GraphRole decide(const AccelerateTrainMode& mode, const LossReport& report) {
  check_trigger(mode, SwitchTrigger::loss);
  check(report);
  const double threshold = loss_to_switch(report.final_loss, mode.ratio);
  const bool reached = report.loss != 0 && report.loss <= threshold * (1 + k_loss_tolerance);
  return reached ? GraphRole::high : GraphRole::low;
}

PrecisionSchedule::PrecisionSchedule(const AccelerateTrainMode& mode) : m_mode(mode) {
  check_ratio(mode);
}

void PrecisionSchedule::restore(const ScheduleState& state) {
  const std::string saved = parse_accelerate_train_mode(state.mode).to_string();
  if (saved != m_mode.to_string()) {
    throw usage_error("the saved schedule state is for accelerate_train_mode \"" + saved +
                          "\", not \"" + m_mode.to_string() + "\"",
                      "restore it into a schedule of the mode it was saved with");
  }
  m_role = state.role;
}

GraphRole PrecisionSchedule::report_step(int64_t step, int64_t total_step,
                                         int64_t iterations_per_loop) {
  return report(StepReport{step, total_step, iterations_per_loop});
}

GraphRole PrecisionSchedule::report_loss(double loss, double final_loss) {
  return report(LossReport{loss, final_loss});
}

GraphRole PrecisionSchedule::report(const StepReport& step_report) {
  const GraphRole now = decide(m_mode, step_report);
  if (now == GraphRole::high) {
    m_role = GraphRole::high;
  }
  return m_role;
}

GraphRole PrecisionSchedule::report(const LossReport& loss_report) {
  const GraphRole now = decide(m_mode, loss_report);
  if (now == GraphRole::high) {
    m_role = GraphRole::high;
  }
  return m_role;
}

} // namespace npucc

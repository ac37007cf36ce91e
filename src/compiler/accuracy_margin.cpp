#include "compiler/accuracy_margin.h"

#include <algorithm>
#include <cmath>

namespace npucc::compiler {

accuracy::AccuracyTarget with_margin(const accuracy::AccuracyTarget& target, double share) {
  accuracy::AccuracyTarget out = target;
  if (out.min_cosine) {
    out.min_cosine = 1 - (1 - *target.min_cosine) * share;
  }
  if (out.max_abs_error) {
    out.max_abs_error = *target.max_abs_error * share;
  }
  if (out.max_rel_error) {
    out.max_rel_error = *target.max_rel_error * share;
  }
  return out;
}

namespace {

// allowed / measured for one bound missed; 1 when it is met (or cannot be scaled).
double allowed_ratio(double allowed, double measured) {
  if (!std::isfinite(measured) || measured <= allowed || allowed <= 0) {
    return measured <= allowed ? 1.0 : 0.0;
  }
  return allowed / measured;
}

} // namespace

double next_share(double share, const accuracy::AccuracyTarget& target,
                  const std::vector<accuracy::OutputMetrics>& validation) {
  double worst = 1;
  for (const auto& output : validation) {
    if (target.min_cosine) {
      worst = std::min(worst, allowed_ratio(1 - *target.min_cosine, 1 - output.cosine));
    }
    if (target.max_abs_error) {
      worst = std::min(worst, allowed_ratio(*target.max_abs_error, output.max_abs_error));
    }
    if (target.max_rel_error) {
      worst = std::min(worst, allowed_ratio(*target.max_rel_error, output.max_rel_error));
    }
  }
  return share * std::min(0.7, 0.9 * worst);
}

} // namespace npucc::compiler

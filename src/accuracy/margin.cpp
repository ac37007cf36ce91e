#include "accuracy/margin.h"

#include <algorithm>
#include <cmath>

namespace npucc::accuracy {

accuracy::AccuracyTarget with_margin(const accuracy::AccuracyTarget& target, double share) {
  accuracy::AccuracyTarget out = target;
  for (auto& clause : out.clauses) {
    if (clause.metric == "nonfinite") {
      continue; // a count is kept as it is
    }
    if (accuracy::is_function_metric(clause.metric)) { // a score: from its best (a check: none)
      if (!std::isnan(clause.best)) {
        clause.value = clause.best + (clause.value - clause.best) * share;
      }
      continue;
    }
    if (clause.metric == "max_abs_error" || clause.metric == "max_rel_error") {
      clause.value *= share;
    } else if (!clause.at_least) {
      continue; // an upper bound on a figure where more is better: nothing to keep back
    } else if (clause.metric == "psnr" || clause.metric == "snr_db") {
      clause.value -= 10 * std::log10(share); // share of the noise power the bound allows
    } else { // cosine and shares (top1, iou@T, close[...]): share of 1 - value
      clause.value = 1 - (1 - clause.value) * share;
    }
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
  // Each clause's distance from its best against what it allows, in the units the repair
  // ranks by (accuracy/target.h: Shortfall), paired entry by entry.
  const accuracy::Shortfall measured = accuracy::shortfall(target, validation);
  const std::vector<double> allowed = accuracy::allowances(target, validation);
  double worst = 1;
  for (size_t i = 0; i < measured.badness.size() && i < allowed.size(); ++i) {
    worst = std::min(worst, allowed_ratio(allowed[i], measured.badness[i]));
  }
  return share * std::min(0.7, 0.9 * worst);
}

} // namespace npucc::accuracy

// Judging outputs against a parsed --accuracy-target (target.h): whether it is met, whether
// it can be judged at all, and how far the outputs are from it (the repair's ranking).
#include "accuracy/target.h"

#include "npucc/error.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace npucc::accuracy {

namespace {

bool is_error_bound(const std::string& metric) {
  return metric == "max_abs_error" || metric == "max_rel_error";
}

// Whether the output's shape leaves the clause's figure undefined on every sample.
bool shape_leaves_undefined(const TargetClause& clause, const OutputMetrics& output) {
  if (output.samples.empty()) {
    return false;
  }
  const SampleMetrics& first = output.samples.front();
  return (clause.metric == "cosine" && first.size < k_min_cosine_elements) ||
         (clause.metric == "top1" && first.classes < 2);
}

bool sample_meets(const TargetClause& clause, const SampleMetrics& sample) {
  if (is_error_bound(clause.metric)) { // over the compared elements; a non-finite one misses
    const double error =
        clause.metric == "max_abs_error" ? sample.max_abs_error : sample.max_rel_error;
    return sample.elements > 0 && sample.nonfinite == 0 && error <= clause.value;
  }
  auto found = sample.figures.find(clause.metric);
  if (found == sample.figures.end() || !found->second.defined()) {
    return false; // an undefined figure never meets a bound
  }
  return clause.at_least ? found->second.value >= clause.value
                         : found->second.value <= clause.value;
}

bool clause_met(const TargetClause& clause, const OutputMetrics& output) {
  if (clause.metric == "nonfinite") {
    return output.nonfinite <= static_cast<int64_t>(clause.value);
  }
  return !output.samples.empty() &&
         std::all_of(output.samples.begin(), output.samples.end(),
                     [&](const SampleMetrics& sample) { return sample_meets(clause, sample); });
}

std::string clause_text(const TargetClause& clause) {
  AccuracyTarget one;
  one.clauses.push_back(clause);
  return target_text(one);
}

std::string output_names(const std::vector<OutputMetrics>& outputs) {
  std::string out;
  for (const auto& output : outputs) {
    out += (out.empty() ? "" : ", ") + output.name;
  }
  return out;
}

// Throws when the high graph alone leaves the clause's figure undefined for `output`.
void check_defined(const TargetClause& clause, const OutputMetrics& ideal) {
  for (const auto& sample : ideal.samples) {
    std::string why;
    if (is_error_bound(clause.metric) && sample.elements == 0) {
      why = "no element of it is finite in the high graph";
    } else if (auto found = sample.figures.find(clause.metric);
               found != sample.figures.end() && !found->second.defined()) {
      why = clause.metric + " is undefined: " + found->second.undefined;
    }
    if (!why.empty()) {
      throw Error("--accuracy-target " + clause_text(clause) + ": output '" + ideal.name +
                      "' on sample set " + std::to_string(sample.set + 1) + ": " + why +
                      ", whatever the low graph computes",
                  why.find("non-finite") != std::string::npos
                      ? "check the samples: float32 itself gives non-finite values on them"
                      : "bound it by another figure, e.g. '" + ideal.name + ":max_abs_error<=X'");
    }
  }
}

// An output a cosine clause skips for its size must be bounded by an error clause.
void check_small_outputs_bounded(const AccuracyTarget& target, const TargetClause& clause,
                                 const OutputMetrics& output) {
  const bool bounded = std::any_of(target.clauses.begin(), target.clauses.end(), [&](auto& c) {
    return (is_error_bound(c.metric) || c.metric.rfind("close[", 0) == 0) &&
           clause_applies(c, output);
  });
  if (!bounded) {
    throw Error("--accuracy-target " + clause_text(clause) + ": output '" + output.name +
                    "' has " + std::to_string(output.samples.front().size) +
                    " element(s) per sample, too few for a cosine (fewer than " +
                    std::to_string(k_min_cosine_elements) + "), and no error bound judges it",
                "add one, e.g. '" + output.name + ":max_abs_error<=0.01'");
  }
}

// A function's clause the high outputs, compared with themselves, already miss: no low side
// can meet it.
void check_function_reachable(const TargetClause& clause, const OutputMetrics& ideal) {
  if (!ideal.function || clause_met(clause, ideal)) {
    return;
  }
  for (const auto& sample : ideal.samples) {
    if (!sample_meets(clause, sample)) {
      const Figure& value = sample.figures.at(clause.metric);
      throw Error("--accuracy-target " + clause_text(clause) + ": the function gives " +
                      shortest_number(value.value) + " on sample set " +
                      std::to_string(sample.set + 1) +
                      " for the high graph's outputs compared with themselves, whatever the low "
                      "graph computes",
                  "check the function: npucc calls it with (high_outputs, low_outputs)");
    }
  }
}

} // namespace

bool clause_applies(const TargetClause& clause, const OutputMetrics& output) {
  if (output.function || is_function_metric(clause.metric)) { // a function's clause: its own
    return output.function && output.name == clause.metric;
  }
  return clause.output.empty() ? !shape_leaves_undefined(clause, output)
                               : clause.output == output.name;
}

bool meets(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs) {
  for (const auto& clause : target.clauses) {
    for (const auto& output : outputs) {
      if (clause_applies(clause, output) && !clause_met(clause, output)) {
        return false;
      }
    }
  }
  return true;
}

void check_judgeable(const AccuracyTarget& target, const std::vector<OutputMetrics>& ideal) {
  for (const auto& clause : target.clauses) {
    size_t applies = 0;
    for (const auto& output : ideal) {
      if (clause_applies(clause, output)) {
        ++applies;
        check_defined(clause, output);
        check_function_reachable(clause, output);
      } else if (clause.output.empty() && clause.metric == "cosine" && !output.function) {
        check_small_outputs_bounded(target, clause, output);
      }
    }
    if (applies == 0 && !clause.output.empty()) {
      throw usage_error("--accuracy-target " + clause_text(clause) + ": the model has no output '" +
                        clause.output + "' (its outputs: " + output_names(ideal) + ")");
    }
    // A cosine clause that skips every output leaves them to their error bounds (checked).
    if (applies == 0 && clause.metric != "cosine") {
      throw Error("--accuracy-target " + clause_text(clause) + ": no output of the model has " +
                      clause.metric + " (its outputs: " + output_names(ideal) + ")",
                  "name the outputs it is for, or bound them by another figure");
    }
  }
}

namespace {

// A figure's distance from its best, in units that roughly add up over rounding errors:
// 1 - share for cosine and shares, the noise-to-signal power for dB figures, the error itself.
double badness_of(const TargetClause& clause, const SampleMetrics& sample) {
  if (is_function_metric(clause.metric)) { // from the best a low side reaches (its ideal)
    auto found = sample.figures.find(clause.metric);
    const double best = std::isnan(clause.best) ? clause.value : clause.best;
    if (found == sample.figures.end() || !found->second.defined()) {
      return 2 * std::abs(best - clause.value) + 1; // worse than missing the bound
    }
    return std::max(0.0, clause.at_least ? best - found->second.value : found->second.value - best);
  }
  if (clause.metric == "max_abs_error") {
    return sample.max_abs_error;
  }
  if (clause.metric == "max_rel_error") {
    return sample.max_rel_error;
  }
  const bool decibels = clause.metric == "psnr" || clause.metric == "snr_db";
  auto found = sample.figures.find(clause.metric);
  if (found == sample.figures.end() || !found->second.defined()) {
    return decibels ? 10 : 2; // worse than any defined value
  }
  return decibels ? std::pow(10.0, -found->second.value / 10) : 1 - found->second.value;
}

double allowance_of(const TargetClause& clause) {
  if (is_function_metric(clause.metric)) {
    return std::isnan(clause.best) ? 0 : std::abs(clause.best - clause.value);
  }
  if (is_error_bound(clause.metric)) {
    return clause.value;
  }
  if (clause.metric == "psnr" || clause.metric == "snr_db") {
    return std::pow(10.0, -clause.value / 10);
  }
  return 1 - clause.value;
}

// Whether the clause has a distance from its bound to rank by: a count has none (ranked
// first on its own), nor a check (it holds or not).
bool ranks(const TargetClause& clause) {
  return clause.metric != "nonfinite" && clause.metric.rfind("check[", 0) != 0;
}

} // namespace

void set_function_bests(AccuracyTarget& target, const std::vector<OutputMetrics>& ideal) {
  for (auto& clause : target.clauses) {
    for (const auto& output : ideal) {
      if (!output.function || !clause_applies(clause, output)) {
        continue;
      }
      for (const auto& sample : output.samples) {
        auto found = sample.figures.find(clause.metric);
        if (found != sample.figures.end() && found->second.defined()) {
          const double value = found->second.value;
          clause.best = std::isnan(clause.best) ? value
                        : clause.at_least     ? std::min(clause.best, value)
                                              : std::max(clause.best, value);
        }
      }
    }
  }
}

Shortfall shortfall(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs) {
  Shortfall out;
  for (const auto& output : outputs) {
    out.nonfinite += output.nonfinite;
    out.cosine += std::isfinite(output.cosine) ? 1 - output.cosine : 2;
  }
  for (const auto& clause : target.clauses) {
    for (const auto& output : outputs) {
      if (!ranks(clause) || !clause_applies(clause, output)) {
        continue;
      }
      double worst = 0;
      for (const auto& sample : output.samples) {
        worst = std::max(worst, badness_of(clause, sample));
      }
      out.badness.push_back(worst);
    }
  }
  return out;
}

std::vector<double> allowances(const AccuracyTarget& target,
                               const std::vector<OutputMetrics>& outputs) {
  std::vector<double> out;
  for (const auto& clause : target.clauses) {
    for (const auto& output : outputs) {
      if (ranks(clause) && clause_applies(clause, output)) {
        out.push_back(allowance_of(clause));
      }
    }
  }
  return out;
}

double Shortfall::score(const std::vector<double>& allowance) const {
  double out = 0;
  for (size_t i = 0; i < badness.size() && i < allowance.size(); ++i) {
    out += badness[i] / std::max(allowance[i], 1e-12);
  }
  return out;
}

bool less_short(const Shortfall& a, const Shortfall& b, const std::vector<double>& allowance) {
  return std::make_tuple(a.nonfinite, a.score(allowance), a.cosine) <
         std::make_tuple(b.nonfinite, b.score(allowance), b.cosine);
}

} // namespace npucc::accuracy

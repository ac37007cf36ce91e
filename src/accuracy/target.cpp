#include "accuracy/target.h"

#include "npucc/error.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace npucc::accuracy {

namespace {

const char* const k_form = "give METRIC>=VALUE or METRIC<=VALUE: cosine>=X, nonfinite<=N, "
                           "max_abs_error<=X or max_rel_error<=X, comma-joined";

double parse_value(const std::string& clause, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value)) {
    throw usage_error("--accuracy-target: \"" + clause + "\": \"" + text + "\" is not a number",
                      k_form);
  }
  return value;
}

void parse_clause(const std::string& clause, AccuracyTarget& target) {
  const auto at = clause.find_first_of("<>");
  if (at == std::string::npos || at + 1 >= clause.size() || clause[at + 1] != '=') {
    throw usage_error("--accuracy-target: \"" + clause + "\" is not METRIC>=VALUE or "
                      "METRIC<=VALUE", k_form);
  }
  const std::string metric = std::string(util::trim(clause.substr(0, at)));
  const bool at_least = clause[at] == '>';
  const double value = parse_value(clause, std::string(util::trim(clause.substr(at + 2))));
  auto refuse = [&](const std::string& why) {
    throw usage_error("--accuracy-target: \"" + clause + "\": " + why, k_form);
  };
  if (metric == "cosine") {
    if (!at_least || value < -1 || value > 1) {
      refuse("cosine takes >= and a value from -1 to 1");
    }
    target.min_cosine = value;
  } else if (metric == "nonfinite") {
    if (at_least || value < 0 || value != std::floor(value)) {
      refuse("nonfinite takes <= and a count (0 or more)");
    }
    target.max_nonfinite = static_cast<int64_t>(value);
  } else if (metric == "max_abs_error" || metric == "max_rel_error") {
    if (at_least || value < 0) {
      refuse(metric + " takes <= and a value of 0 or more");
    }
    (metric == "max_abs_error" ? target.max_abs_error : target.max_rel_error) = value;
  } else {
    refuse("unknown metric \"" + metric + "\"");
  }
}

std::string number(double value) {
  char out[64];
  for (int digits = 1; digits <= 17; ++digits) { // shortest form that reads back the same
    std::snprintf(out, sizeof out, "%.*g", digits, value);
    if (std::strtod(out, nullptr) == value) {
      break;
    }
  }
  return out;
}

} // namespace

AccuracyTarget parse_accuracy_target(const std::vector<std::string>& clauses) {
  AccuracyTarget target;
  for (const auto& joined : clauses) {
    size_t start = 0;
    while (start <= joined.size()) {
      const auto comma = std::min(joined.find(',', start), joined.size());
      const std::string clause(util::trim(joined.substr(start, comma - start)));
      if (clause.empty()) {
        throw usage_error("--accuracy-target: empty clause in \"" + joined + "\"", k_form);
      }
      parse_clause(clause, target);
      start = comma + 1;
    }
  }
  return target;
}

std::string target_text(const AccuracyTarget& target) {
  std::vector<std::string> parts;
  if (target.min_cosine) {
    parts.push_back("cosine>=" + number(*target.min_cosine));
  }
  if (target.max_nonfinite) {
    parts.push_back("nonfinite<=" + std::to_string(*target.max_nonfinite));
  }
  if (target.max_abs_error) {
    parts.push_back("max_abs_error<=" + number(*target.max_abs_error));
  }
  if (target.max_rel_error) {
    parts.push_back("max_rel_error<=" + number(*target.max_rel_error));
  }
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : ",") + part;
  }
  return out;
}

bool meets(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs) {
  for (const auto& output : outputs) {
    if ((target.min_cosine && !(output.cosine >= *target.min_cosine)) ||
        (target.max_nonfinite && output.nonfinite > *target.max_nonfinite) ||
        // A non-finite value is an infinite error: the errors are over finite values only.
        (target.max_abs_error &&
         (output.nonfinite > 0 || !(output.max_abs_error <= *target.max_abs_error))) ||
        (target.max_rel_error &&
         (output.nonfinite > 0 || !(output.max_rel_error <= *target.max_rel_error)))) {
      return false;
    }
  }
  return true;
}

bool Shortfall::operator<(const Shortfall& other) const {
  return std::tie(nonfinite, cosine, errors) < std::tie(other.nonfinite, other.cosine, other.errors);
}

Shortfall shortfall(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs) {
  Shortfall out;
  for (const auto& output : outputs) {
    out.nonfinite += output.nonfinite;
    // The cosine's distance from 1 ranks even outputs above the target: a unit that costs
    // cosine is worse than one that does not, whether or not the target is missed.
    out.cosine += std::isfinite(output.cosine) ? 1 - output.cosine : 2;
    if (target.max_abs_error) {
      out.errors += std::max(0.0, output.max_abs_error - *target.max_abs_error);
    }
    if (target.max_rel_error) {
      out.errors += std::max(0.0, output.max_rel_error - *target.max_rel_error);
    }
  }
  return out;
}

} // namespace npucc::accuracy

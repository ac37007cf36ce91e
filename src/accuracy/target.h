#pragma once

#include "accuracy/metrics.h"

#include <optional>
#include <string>
#include <vector>

// --accuracy-target: bounds every output must meet on every sample (npucc-compile(1),
// ACCURACY). Clauses are METRIC>=VALUE or METRIC<=VALUE, comma-joined or repeated:
//   cosine>=X          lowest cosine similarity
//   nonfinite<=N       non-finite values the low side adds (summed over the samples)
//   max_abs_error<=X, max_rel_error<=X
namespace npucc::accuracy {

struct AccuracyTarget {
  std::optional<double> min_cosine;
  std::optional<int64_t> max_nonfinite;
  std::optional<double> max_abs_error;
  std::optional<double> max_rel_error;

  bool empty() const { return !min_cosine && !max_nonfinite && !max_abs_error && !max_rel_error; }
};

// Parses the clauses (each element may hold several, comma-joined); a repeated metric keeps
// the last. Throws usage_error naming the clause and the expected form.
AccuracyTarget parse_accuracy_target(const std::vector<std::string>& clauses);

// The canonical text: the metrics in a fixed order, values in shortest round-trip form
// ("cosine>=0.9995,nonfinite<=0"); the cache key holds it. Empty for no target.
std::string target_text(const AccuracyTarget& target);

// Whether every output's metrics (merged over the samples) meet the target.
bool meets(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs);

// How far outputs are from the target, for ranking (larger is worse): the non-finite count
// first, then the cosine shortfall, then the errors' excess over their bounds.
struct Shortfall {
  int64_t nonfinite = 0;
  double cosine = 0;
  double errors = 0;
  bool operator<(const Shortfall& other) const;
};
Shortfall shortfall(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs);

} // namespace npucc::accuracy

#pragma once

#include "accuracy/metrics.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

// --accuracy-target: bounds the outputs must meet on every sample (npucc-compile(1),
// ACCURACY). Clauses are [OUTPUT:]METRIC>=VALUE or [OUTPUT:]METRIC<=VALUE, comma-joined or
// repeated; every clause must hold. Without OUTPUT a clause holds for every output.
//   cosine>=X            cosine similarity, on every sample
//   top1>=S, iou@T>=S    task figures (task_metrics.h): shares from 0 to 1
//   psnr>=DB, snr_db>=DB
//   close[atol=A,rtol=R]>=S  the share of elements within |low - high| <= A + R |high|
//                        (Polygraphy's --atol/--rtol; >=1: every element)
//   nonfinite<=N         non-finite values the low side adds (summed over the samples)
//   max_abs_error<=X, max_rel_error<=X
//   check[LABEL]>=1      a caller's function (npucc/compile.h: AccuracyFunction) holds on
//   score[LABEL]>=X      every sample set, or its score is within the bound on every set
//   score[LABEL]<=X      (no OUTPUT: the function sees every output)
// An undefined figure never meets a clause. A clause for every output skips the outputs whose
// shape leaves the figure undefined (cosine below k_min_cosine_elements elements, top1 with a
// last axis of 1); an output a cosine clause skips must be bounded by an error clause.
namespace npucc::accuracy {

struct TargetClause {
  std::string output;    // empty: every output
  std::string metric;    // a figure's name (metrics.h), or nonfinite / max_abs_error / max_rel_error
  bool at_least = true;  // >= (else <=)
  double value = 0;
  // A function's clause: its value on the high outputs against themselves, the best a low
  // side reaches (set_function_bests); NaN until measured. The margin and the ranking count
  // from it.
  double best = std::nan("");
};

// Whether the metric is a caller's function (check[LABEL], score[LABEL]).
bool is_function_metric(const std::string& metric);
// The LABEL of check[LABEL] / score[LABEL].
std::string function_label(const std::string& metric);

struct AccuracyTarget {
  std::vector<TargetClause> clauses; // canonical order (target_text)
  bool empty() const { return clauses.empty(); }
};

// Parses the clauses (each element may hold several, comma-joined); a repeated metric of the
// same output keeps the last. Throws usage_error naming the clause and the expected form.
AccuracyTarget parse_accuracy_target(const std::vector<std::string>& clauses);

// The canonical text: every-output clauses first, metrics in a fixed order, values in
// shortest round-trip form ("cosine>=0.9995,nonfinite<=0"); the cache key holds it. Empty for
// no target.
std::string target_text(const AccuracyTarget& target);

// What the target's figures need computed (iou thresholds, tolerances).
FigureRequests figure_requests(const AccuracyTarget& target);

// Whether the clause holds for the output (false when its figure is undefined on a sample).
bool clause_applies(const TargetClause& clause, const OutputMetrics& output);
bool meets(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs);

// Checks the target can be judged on these outputs, before anything is repaired: every
// output a clause names exists, and no clause depends on a figure the high graph alone leaves
// undefined (`ideal`: the high outputs compared with themselves, the best any low graph can
// do). Throws npucc::Error naming the output, the figure and the reason.
void check_judgeable(const AccuracyTarget& target, const std::vector<OutputMetrics>& ideal);
// Each function clause's `best`: the worst over the sets of its value in `ideal`.
void set_function_bests(AccuracyTarget& target, const std::vector<OutputMetrics>& ideal);

// How far outputs are from the target, for ranking (larger is worse): the non-finite count
// first, then each clause's distance from its bound relative to what it allows, then the
// cosine's distance from 1 (which ranks even outputs above the target: a unit that costs
// cosine is worse than one that does not).
struct Shortfall {
  int64_t nonfinite = 0;
  std::vector<double> badness; // per clause and output it applies to, in a fixed order
  double cosine = 0;
  double score(const std::vector<double>& allowance) const;
};
Shortfall shortfall(const AccuracyTarget& target, const std::vector<OutputMetrics>& outputs);
// Per entry of Shortfall::badness: the most a clause allows (its bound in the same units).
std::vector<double> allowances(const AccuracyTarget& target,
                               const std::vector<OutputMetrics>& outputs);
bool less_short(const Shortfall& a, const Shortfall& b, const std::vector<double>& allowance);

} // namespace npucc::accuracy

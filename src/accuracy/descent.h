#pragma once

#include "accuracy/target.h"
#include "accuracy/sample_runner.h"
#include "precision/compile_precision.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

// The accuracy descent (npucc-compile(1), ACCURACY REPAIR): with a target the low graph
// meets (as compiled or after the repair), lower what the default deny list kept float32
// where the measurements allow it, so that a target leaves no more float32 nodes than it
// needs. Only whole ops that compute in float32 inside by their definition or in the
// runtimes (Softmax, LogSoftmax: float32 exponentials and sums; LayerNormalization,
// GroupNormalization, RMSNormalization: float32 statistics by stash_type) are tried;
// reductions, Exp, Log, Pow stay float32 whatever the target (SPEC 2), and so does a node
// kept by --keep-dtype, by an op --modify-mixlist put on the black list, by the
// activation-range rule or by the repair. First every candidate low at once; when that
// misses, one op class at a time (graph order of their first node), then the halves of a
// class that missed, halved again while they miss, each part kept low only while the
// target still holds; at most
// k_descent_evaluations graphs. A set is kept only when the emulation meets the repair's
// first search target (the user's with the margin k_first_share, margin.h) on the search
// sets and the user's target on the validation sets. Deterministic.
namespace npucc::accuracy {

inline constexpr int k_descent_evaluations = 8;

// The variants again with these deny-list nodes lowered (every other choice as it is).
using LowerVariants =
    std::function<precision::PrecisionBuild(const std::vector<std::string>& lowered)>;

struct DescentInputs {
  SampleRunner& search;
  SampleRunner* validation; // or null
  const accuracy::AccuracyTarget& target;
  const LowerVariants& lower;
  const std::set<std::string>& user_denied; // ops --modify-mixlist put on the black list
  const LogSink& log;
};

struct DescentResult {
  std::vector<std::string> lowered; // sorted; empty when nothing could go
  nlohmann::json report;            // the manifest's accuracy.descent
  int64_t runs = 0;                 // graph runs (one per graph and sample set)
};

// `variants`: the build the check leaves (repaired or not), meeting the target; replaced by
// the lowered build, with `metrics` and `validation_metrics` measured on it, when something
// was lowered.
DescentResult descend(precision::PrecisionBuild& variants, const DescentInputs& in,
                      Metrics& metrics, Metrics& validation_metrics);

// The ops the descent may lower, and the black-list additions of a --modify-mixlist text
// (empty text: none).
const std::set<std::string>& descent_ops();
std::set<std::string> black_listed_ops(const std::string& mixlist, const std::string& source);

} // namespace npucc::accuracy

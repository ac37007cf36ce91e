#pragma once

#include "accuracy/target.h"

#include <string>
#include <vector>

// The margin the accuracy repair's search keeps inside the user's target
// (npucc-compile(1), ACCURACY). A graph that just meets the target on the samples the search
// measured often misses it on others (PP-OCRv4's recogniser at fast1, cosine>=0.9995: 0.99962
// on 4 searched lines, 0.99929 on an unseen one). So the search aims at a stricter target:
// each bound keeps only `share` of the loss the user's allows (1 - cosine, max abs/rel
// error; a non-finite count is kept as it is; a caller's score: of its distance from its value
// on the high outputs themselves, TargetClause::best; a check cannot keep a margin). The first search keeps k_first_share; when
// its result misses the target on the validation sets, the next share is the last one
// scaled by what the validation sets showed (next_share).
namespace npucc::accuracy {

constexpr double k_first_share = 0.75;
// Below this share the search target asks for float32 itself: the repair then keeps every
// unit float32.
constexpr double k_smallest_share = 1e-3;

// `target` with each bound's allowed loss scaled by `share` (0 < share <= 1).
accuracy::AccuracyTarget with_margin(const accuracy::AccuracyTarget& target, double share);

// The share for the next search, after a result searched with `share` missed `target` on
// the validation sets with these metrics: scaled by 0.9 x allowed / measured loss for the
// worst bound (what the validation sets lose beyond the target, with a tenth to spare), and
// at most 0.7 x `share`, so each round asks clearly more.
double next_share(double share, const accuracy::AccuracyTarget& target,
                  const std::vector<accuracy::OutputMetrics>& validation);

} // namespace npucc::accuracy

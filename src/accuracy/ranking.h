#pragma once

#include "accuracy/evaluator.h"

// The repair's candidates: the units that cost the most, found worst first by measuring
// groups of units low alone (every other unit float32) rather than each unit alone.
// Rounding errors roughly add up (on PP-OCRv4's detector the 237 units' effects alone sum
// to 0.00384 of cosine; the whole low graph loses 0.00398), so a group that costs little
// holds no unit that costs much.
//   1. the units, in graph order, cut into 16 contiguous groups, each measured;
//   2. best first: the worst group is taken; one unit is a candidate, a larger group is
//      halved and both halves measured;
//   3. until the candidates' effects, taken from the whole low graph's, leave what the
//      target allows: then the candidates kept float32 are run, and while they miss the
//      target, step 2 goes on for one more candidate at a time.
// Effects do not add up exactly (an infer-list node such as Relu is low only when what it
// reads is, so a group's units interact): the search measures every set it accepts, so a
// wrong estimate costs runs, never the result.
namespace npucc::accuracy {

struct Candidates {
  std::vector<size_t> units;                 // worst first; kept float32 they meet the target
  std::vector<accuracy::Shortfall> effects;  // each one's measured effect alone low
  int64_t groups_measured = 0;
};

// Throws npucc::Error when even every unit kept float32 misses the target (not checked
// here: the caller does so first).
Candidates find_candidates(Evaluator& evaluator);

} // namespace npucc::accuracy

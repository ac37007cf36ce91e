#pragma once

#include "accuracy/repair.h"

#include <map>

// The accuracy repair's one measurement: the low graph's emulation with a set of units kept
// float32, run on every search set and compared with the high graph's outputs. Each set of
// units is run once; asking again returns the recorded metrics. `meets` judges them by the
// target the search aims at (aim_at), which may be stricter than the user's.
namespace npucc::accuracy {

class Evaluator {
public:
  Evaluator(const RepairInputs& in, const std::vector<PrecisionUnit>& units)
      : m_in(in), m_units(units), m_target(in.target) {}

  // `kept`: indices into the units, any order.
  const Metrics& evaluate(std::vector<size_t> kept);
  bool meets(const std::vector<size_t>& kept) { return accuracy::meets(m_target, evaluate(kept)); }
  // The same units kept, on the validation sets (RepairInputs::validation, not null).
  const Metrics& evaluate_validation(std::vector<size_t> kept);
  // The metrics with only `low` in low precision (every other unit kept float32).
  const Metrics& evaluate_low(const std::vector<size_t>& low);
  // The metrics measured for `kept` (sorted), or null when that set was never run.
  const Metrics* recorded(const std::vector<size_t>& kept) const {
    auto found = m_seen.find(kept);
    return found == m_seen.end() ? nullptr : &found->second;
  }
  // Records what a caller already measured for a set (the unrepaired graph: none kept).
  void record(std::vector<size_t> kept, Metrics metrics);

  size_t unit_count() const { return m_units.size(); }
  const accuracy::AccuracyTarget& target() const { return m_target; }
  void aim_at(const accuracy::AccuracyTarget& target) { m_target = target; }
  int64_t runs() const { return m_runs; }
  int64_t evaluations() const { return m_evaluations; }

private:
  const RepairInputs& m_in;
  const std::vector<PrecisionUnit>& m_units;
  accuracy::AccuracyTarget m_target;
  std::map<std::vector<size_t>, Metrics> m_seen;
  std::map<std::vector<size_t>, Metrics> m_validated;
  int64_t m_runs = 0;
  int64_t m_evaluations = 0;
};

} // namespace npucc::accuracy

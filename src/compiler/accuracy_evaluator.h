#pragma once

#include "compiler/accuracy_repair.h"

#include <map>

// The accuracy repair's one measurement: the low graph's emulation with a set of units kept
// float32, run on every sample and compared with the high graph's outputs. Each set is run
// once; asking again returns the recorded metrics.
namespace npucc::compiler {

using Metrics = std::vector<accuracy::OutputMetrics>;

class Evaluator {
public:
  Evaluator(const RepairInputs& in, const std::vector<PrecisionUnit>& units)
      : m_in(in), m_units(units) {}

  // `kept`: indices into the units, any order.
  const Metrics& evaluate(std::vector<size_t> kept);
  bool meets(const std::vector<size_t>& kept) { return accuracy::meets(m_in.target, evaluate(kept)); }
  // The metrics with only `low` in low precision (every other unit kept float32).
  const Metrics& evaluate_low(const std::vector<size_t>& low);
  // Records what a caller already measured for a set (the unrepaired graph: none kept).
  void record(std::vector<size_t> kept, Metrics metrics);

  size_t unit_count() const { return m_units.size(); }
  const accuracy::AccuracyTarget& target() const { return m_in.target; }
  int64_t runs() const { return m_runs; }
  int64_t evaluations() const { return m_evaluations; }

private:
  const RepairInputs& m_in;
  const std::vector<PrecisionUnit>& m_units;
  std::map<std::vector<size_t>, Metrics> m_seen;
  int64_t m_runs = 0;
  int64_t m_evaluations = 0;
};

} // namespace npucc::compiler

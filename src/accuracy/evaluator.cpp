#include "accuracy/evaluator.h"

#include "output/runtime_graph_file.h"

#include <algorithm>

namespace npucc::accuracy {

namespace {

// The low graph's emulation with `kept` units float32, run on `sets`.
Metrics run_kept(const RepairInputs& in, const std::vector<PrecisionUnit>& units,
                 const std::vector<size_t>& kept, SampleRunner& sets) {
  std::vector<std::string> nodes;
  for (size_t index : kept) {
    nodes.insert(nodes.end(), units[index].nodes.begin(), units[index].nodes.end());
  }
  auto emulation = emulation_of(in.rebuild(nodes));
  const output::RuntimeGraphFile file(emulation);
  return sets.measure("the emulation of a repaired low graph", file.source());
}

} // namespace

const Metrics& Evaluator::evaluate(std::vector<size_t> kept) {
  std::sort(kept.begin(), kept.end());
  auto found = m_seen.find(kept);
  if (found != m_seen.end()) {
    return found->second;
  }
  Metrics metrics = run_kept(m_in, m_units, kept, m_in.search);
  m_runs += m_in.search.sets();
  ++m_evaluations;
  return m_seen[kept] = std::move(metrics);
}

const Metrics& Evaluator::evaluate_validation(std::vector<size_t> kept) {
  std::sort(kept.begin(), kept.end());
  auto found = m_validated.find(kept);
  if (found != m_validated.end()) {
    return found->second;
  }
  Metrics metrics = run_kept(m_in, m_units, kept, *m_in.validation);
  m_runs += m_in.validation->sets();
  return m_validated[kept] = std::move(metrics);
}

const Metrics& Evaluator::evaluate_low(const std::vector<size_t>& low) {
  std::vector<size_t> kept;
  for (size_t unit = 0; unit < m_units.size(); ++unit) {
    if (!std::binary_search(low.begin(), low.end(), unit)) {
      kept.push_back(unit);
    }
  }
  return evaluate(std::move(kept));
}

void Evaluator::record(std::vector<size_t> kept, Metrics metrics) {
  std::sort(kept.begin(), kept.end());
  m_seen.emplace(std::move(kept), std::move(metrics));
}

} // namespace npucc::accuracy

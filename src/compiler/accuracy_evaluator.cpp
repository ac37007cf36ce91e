#include "compiler/accuracy_evaluator.h"

#include "accuracy/check.h"
#include "compiler/runtime_graph_file.h"

#include <algorithm>

namespace npucc::compiler {

const Metrics& Evaluator::evaluate(std::vector<size_t> kept) {
  std::sort(kept.begin(), kept.end());
  auto found = m_seen.find(kept);
  if (found != m_seen.end()) {
    return found->second;
  }
  std::vector<std::string> nodes;
  for (size_t index : kept) {
    nodes.insert(nodes.end(), m_units[index].nodes.begin(), m_units[index].nodes.end());
  }
  auto emulation = emulation_of(m_in.rebuild(nodes));
  const RuntimeGraphFile file(emulation);
  const auto low = m_in.runtime.run("the emulation of a repaired low graph", file.source(),
                                    m_in.samples.sets, m_in.outputs);
  m_runs += static_cast<int64_t>(m_in.samples.sets.size());
  ++m_evaluations;
  return m_seen[kept] = accuracy::compare_sets(m_in.outputs, m_in.reference, low,
                                               accuracy::figure_requests(m_in.target));
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

} // namespace npucc::compiler

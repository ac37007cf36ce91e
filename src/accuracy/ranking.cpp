#include "accuracy/ranking.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace npucc::accuracy {

namespace {

constexpr size_t k_first_groups = 16;

struct Group {
  size_t first = 0; // units [first, last)
  size_t last = 0;
  accuracy::Shortfall effect;
};

class CandidateSearch {
public:
  explicit CandidateSearch(Evaluator& evaluator)
      : m_evaluator(evaluator),
        m_whole(accuracy::shortfall(evaluator.target(), evaluator.evaluate({}))),
        m_allowance(accuracy::allowances(evaluator.target(), evaluator.evaluate({}))) {
    m_removed.badness.assign(m_whole.badness.size(), 0.0);
  }

  Candidates run() {
    const size_t count = m_evaluator.unit_count();
    const size_t groups = std::min(k_first_groups, count);
    for (size_t g = 0; g < groups; ++g) {
      m_open.push_back(measured(g * count / groups, (g + 1) * count / groups));
    }
    // Until the candidates are predicted to leave what the target allows; when they miss it
    // after all (effects do not add up exactly), one more candidate at a time.
    while (!m_open.empty() && !predicted_to_meet()) {
      take_worst();
    }
    while (!m_open.empty() && !m_evaluator.meets(m_out.units)) {
      for (const size_t before = m_out.units.size(); !m_open.empty() && m_out.units.size() == before;) {
        take_worst();
      }
    }
    return m_out; // with nothing open, every unit is a candidate: that meets
  }

private:
  Group measured(size_t first, size_t last) {
    std::vector<size_t> low(last - first);
    std::iota(low.begin(), low.end(), first);
    ++m_out.groups_measured;
    return {first, last, accuracy::shortfall(m_evaluator.target(), m_evaluator.evaluate_low(low))};
  }

  // The open group with the largest effect becomes a candidate (one unit) or two halves.
  void take_worst() {
    auto worst = std::max_element(m_open.begin(), m_open.end(), [&](const Group& a, const Group& b) {
      return accuracy::less_short(a.effect, b.effect, m_allowance);
    });
    const Group group = *worst;
    m_open.erase(worst);
    if (group.last - group.first == 1) {
      m_out.units.push_back(group.first);
      m_out.effects.push_back(group.effect);
      m_removed.nonfinite += group.effect.nonfinite;
      m_removed.cosine += group.effect.cosine;
      for (size_t i = 0; i < m_removed.badness.size() && i < group.effect.badness.size(); ++i) {
        m_removed.badness[i] += group.effect.badness[i];
      }
      return;
    }
    const size_t middle = group.first + (group.last - group.first) / 2;
    m_open.push_back(measured(group.first, middle));
    m_open.push_back(measured(middle, group.last));
  }

  // Whether the whole low graph's effect, less the candidates', is within the target: each
  // clause's distance from its best within what it allows.
  bool predicted_to_meet() const {
    int64_t max_nonfinite = std::numeric_limits<int64_t>::max();
    bool bounds_errors = false;
    for (const auto& clause : m_evaluator.target().clauses) {
      if (clause.metric == "nonfinite") {
        max_nonfinite = std::min(max_nonfinite, static_cast<int64_t>(clause.value));
      }
      bounds_errors = bounds_errors || clause.metric == "max_abs_error" ||
                      clause.metric == "max_rel_error";
    }
    const int64_t nonfinite = m_whole.nonfinite - m_removed.nonfinite;
    if (nonfinite > max_nonfinite || (bounds_errors && nonfinite > 0)) {
      return false;
    }
    for (size_t i = 0; i < m_whole.badness.size() && i < m_allowance.size(); ++i) {
      if (m_whole.badness[i] - m_removed.badness[i] > m_allowance[i]) {
        return false;
      }
    }
    return true;
  }

  Evaluator& m_evaluator;
  const accuracy::Shortfall m_whole; // the low graph as compiled
  const std::vector<double> m_allowance; // per entry of its badness
  accuracy::Shortfall m_removed;     // the candidates' effects, summed
  std::vector<Group> m_open;
  Candidates m_out;
};

} // namespace

Candidates find_candidates(Evaluator& evaluator) { return CandidateSearch(evaluator).run(); }

} // namespace npucc::accuracy

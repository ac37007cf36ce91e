#include "compiler/accuracy_repair.h"

#include "accuracy/check.h"
#include "npucc/error.h"
#include "precision/emulation.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace npucc::compiler {

onnx::ModelProto emulation_of(const precision::PrecisionBuild& variants) {
  for (const auto& graph : variants.graphs) {
    if (graph.role == "emulation") {
      return graph.model;
    }
  }
  for (const auto& graph : variants.graphs) {
    if (graph.role == "low") {
      onnx::ModelProto made = graph.model;
      precision::make_emulation(made);
      return made;
    }
  }
  throw Error("internal error: the accuracy repair found no low graph");
}

namespace {

using Metrics = std::vector<accuracy::OutputMetrics>;

// Runs the low graph's emulation with a set of units kept float32, each set once.
class Evaluator {
public:
  Evaluator(const RepairInputs& in, const std::vector<PrecisionUnit>& units)
      : m_in(in), m_units(units) {}

  // `kept`: indices into the units, any order.
  const Metrics& evaluate(std::vector<size_t> kept) {
    std::sort(kept.begin(), kept.end());
    auto found = m_seen.find(kept);
    if (found != m_seen.end()) {
      return found->second;
    }
    std::vector<std::string> nodes;
    for (size_t index : kept) {
      nodes.insert(nodes.end(), m_units[index].nodes.begin(), m_units[index].nodes.end());
    }
    const auto emulation = emulation_of(m_in.rebuild(nodes));
    const auto low = m_in.runtime.run("the emulation of a repaired low graph",
                                      accuracy::serialise_for_runtime(emulation),
                                      m_in.samples.sets, m_in.outputs);
    m_runs += static_cast<int64_t>(m_in.samples.sets.size());
    return m_seen[kept] = accuracy::compare_sets(m_in.outputs, m_in.reference, low);
  }

  bool meets(const std::vector<size_t>& kept) {
    return accuracy::meets(m_in.target, evaluate(kept));
  }

  int64_t runs() const { return m_runs; }

private:
  const RepairInputs& m_in;
  const std::vector<PrecisionUnit>& m_units;
  std::map<std::vector<size_t>, Metrics> m_seen;
  int64_t m_runs = 0;
};

std::vector<size_t> all_but(size_t count, size_t skipped) {
  std::vector<size_t> out;
  for (size_t i = 0; i < count; ++i) {
    if (i != skipped) {
      out.push_back(i);
    }
  }
  return out;
}

double worst_cosine(const Metrics& metrics) {
  double out = 1;
  for (const auto& output : metrics) {
    out = std::min(out, output.cosine);
  }
  return out;
}

int64_t nonfinite(const Metrics& metrics) {
  int64_t out = 0;
  for (const auto& output : metrics) {
    out += output.nonfinite;
  }
  return out;
}

// Step 3: kept units (ranked order), least effect first, each tried low again.
std::vector<size_t> make_one_minimal(Evaluator& evaluator, std::vector<size_t> kept) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = kept.size(); i-- > 0;) {
      std::vector<size_t> without = kept;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      if (evaluator.meets(without)) {
        kept = std::move(without);
        changed = true;
      }
    }
  }
  return kept;
}

} // namespace

RepairResult repair_accuracy(const RepairInputs& in, const onnx::ModelProto& low) {
  const auto start = std::chrono::steady_clock::now();
  const auto units = low_precision_units(low);
  Evaluator evaluator(in, units);
  std::vector<size_t> every(units.size());
  std::iota(every.begin(), every.end(), size_t{0});
  if (units.empty() || !evaluator.meets(every)) {
    throw Error("--accuracy-target " + accuracy::target_text(in.target) +
                    ": even the low graph with every node float32 misses it on these samples",
                "lower the target, or check the samples (are they prepared as the model reads "
                "them?)");
  }
  auto say = [&](const std::string& line) {
    if (in.log) {
      in.log(line);
    }
  };
  say("accuracy repair: " + std::to_string(units.size()) + " units; measuring each alone low");
  // 1. Rank: each unit alone low, worst first (stable: graph order on ties).
  std::vector<accuracy::Shortfall> alone(units.size());
  std::vector<Metrics> alone_metrics(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    alone_metrics[u] = evaluator.evaluate(all_but(units.size(), u));
    alone[u] = accuracy::shortfall(in.target, alone_metrics[u]);
  }
  std::vector<size_t> ranked = every;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return alone[b] < alone[a]; });
  // 2. The shortest ranked prefix that meets the target: prefix 0 (the unrepaired graph)
  // misses, all of them meets.
  size_t misses = 0;
  size_t meets = ranked.size();
  while (meets - misses > 1) {
    const size_t middle = misses + (meets - misses) / 2;
    if (evaluator.meets({ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(middle)})) {
      meets = middle;
    } else {
      misses = middle;
    }
  }
  say("accuracy repair: the " + std::to_string(meets) +
      " worst units float32 meet the target; trying each low again");
  // 3. 1-minimal.
  const auto kept = make_one_minimal(
      evaluator, {ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(meets)});

  RepairResult result;
  nlohmann::json kept_units = nlohmann::json::array();
  for (size_t index : ranked) { // worst first
    if (std::find(kept.begin(), kept.end(), index) == kept.end()) {
      continue;
    }
    kept_units.push_back({{"nodes", units[index].nodes},
                          {"op", units[index].op},
                          {"alone_low", {{"cosine", worst_cosine(alone_metrics[index])},
                                         {"nonfinite", nonfinite(alone_metrics[index])}}}});
    result.kept_nodes.insert(result.kept_nodes.end(), units[index].nodes.begin(),
                             units[index].nodes.end());
  }
  std::sort(result.kept_nodes.begin(), result.kept_nodes.end());
  result.runs = evaluator.runs();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.report = {{"units", units.size()},     {"kept_units", kept_units},
                   {"runs", result.runs},       {"seconds", seconds},
                   {"method", "rank each unit alone low, binary search, 1-minimal"}};
  return result;
}

} // namespace npucc::compiler

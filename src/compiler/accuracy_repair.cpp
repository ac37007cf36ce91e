#include "compiler/accuracy_repair.h"

#include "compiler/accuracy_evaluator.h"
#include "compiler/accuracy_ranking.h"
#include "npucc/error.h"
#include "precision/emulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

// The lowest cosine over the outputs; NaN (null in JSON) when an output has none: an
// undefined cosine never reads as a good one.
double worst_cosine(const Metrics& metrics) {
  double out = 1;
  for (const auto& output : metrics) {
    out = std::isnan(output.cosine) || std::isnan(out) ? output.cosine + out
                                                       : std::min(out, output.cosine);
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

// The shortest prefix of the candidates (worst first) that, kept float32, meets the target:
// prefix 0 (the unrepaired graph) misses, all of them meets.
size_t shortest_prefix(Evaluator& evaluator, const std::vector<size_t>& ranked) {
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
  return meets;
}

// Kept units (ranked order), least effect first, each tried low again until a whole pass
// keeps them all: no kept unit can go low on its own (1-minimal). The last pass leaves the
// metrics of each "kept but this one" set recorded, which the report gives.
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

nlohmann::json kept_units_json(Evaluator& evaluator, const std::vector<PrecisionUnit>& units,
                               const std::vector<size_t>& kept) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t index : kept) { // ranked order: worst first
    std::vector<size_t> without;
    std::copy_if(kept.begin(), kept.end(), std::back_inserter(without),
                 [&](size_t other) { return other != index; });
    const auto& back_low = evaluator.evaluate(without); // recorded by the 1-minimal step
    out.push_back({{"nodes", units[index].nodes},
                   {"op", units[index].op},
                   {"returned_low",
                    {{"cosine", worst_cosine(back_low)}, {"nonfinite", nonfinite(back_low)}}}});
  }
  return out;
}

void check_reachable(Evaluator& evaluator, size_t unit_count) {
  std::vector<size_t> every(unit_count);
  std::iota(every.begin(), every.end(), size_t{0});
  if (unit_count == 0 || !evaluator.meets(every)) {
    throw Error("--accuracy-target " + accuracy::target_text(evaluator.target()) +
                    ": even the low graph with every node float32 misses it on these samples",
                "lower the target, or check the samples (are they prepared as the model reads "
                "them?)");
  }
}

} // namespace

RepairResult repair_accuracy(const RepairInputs& in, const onnx::ModelProto& low) {
  const auto start = std::chrono::steady_clock::now();
  const auto units = low_precision_units(low);
  Evaluator evaluator(in, units);
  evaluator.record({}, in.unrepaired);
  check_reachable(evaluator, units.size());
  auto say = [&](const std::string& line) {
    if (in.log) {
      in.log(line);
    }
  };
  say("accuracy repair: " + std::to_string(units.size()) +
      " units; finding the worst by measuring groups of them low alone");
  const Candidates candidates = find_candidates(evaluator);
  const size_t prefix = shortest_prefix(evaluator, candidates.units);
  say("accuracy repair: " + std::to_string(candidates.groups_measured) + " groups measured; the " +
      std::to_string(prefix) + " worst units float32 meet the target; trying each low again");
  const auto kept = make_one_minimal(
      evaluator, {candidates.units.begin(), candidates.units.begin() + static_cast<std::ptrdiff_t>(prefix)});

  RepairResult result;
  for (size_t index : kept) {
    result.kept_nodes.insert(result.kept_nodes.end(), units[index].nodes.begin(),
                             units[index].nodes.end());
  }
  std::sort(result.kept_nodes.begin(), result.kept_nodes.end());
  const auto kept_units = kept_units_json(evaluator, units, kept);
  result.runs = evaluator.runs();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.report = {
      {"units", units.size()},
      {"kept_units", kept_units},
      {"groups_measured", candidates.groups_measured},
      {"evaluations", evaluator.evaluations()},
      {"runs", result.runs},
      {"seconds", seconds},
      {"method", "the worst units found best first by halving groups low alone, until they "
                 "meet the target; binary search of them, worst first; 1-minimal"}};
  return result;
}

} // namespace npucc::compiler

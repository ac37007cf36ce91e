#include "accuracy/repair.h"

#include "accuracy/evaluator.h"
#include "accuracy/margin.h"
#include "accuracy/ranking.h"
#include "npucc/error.h"
#include "precision/emulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace npucc::accuracy {

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

// Each kept unit with the metrics of "kept but this one", which the 1-minimal step recorded
// (not when every unit is kept as a last resort: then nothing was measured, and none shown).
nlohmann::json kept_units_json(const Evaluator& evaluator, const std::vector<PrecisionUnit>& units,
                               const std::vector<size_t>& kept) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t index : kept) { // ranked order: worst first
    std::vector<size_t> without;
    std::copy_if(kept.begin(), kept.end(), std::back_inserter(without),
                 [&](size_t other) { return other != index; });
    std::sort(without.begin(), without.end());
    nlohmann::json unit = {{"nodes", units[index].nodes}, {"op", units[index].op}};
    if (const Metrics* back_low = evaluator.recorded(without)) {
      unit["returned_low"] = {{"cosine", worst_cosine(*back_low)},
                              {"nonfinite", nonfinite(*back_low)}};
    }
    out.push_back(std::move(unit));
  }
  return out;
}

std::vector<size_t> every_unit(size_t count) {
  std::vector<size_t> every(count);
  std::iota(every.begin(), every.end(), size_t{0});
  return every;
}

void check_reachable(Evaluator& evaluator, size_t unit_count) {
  if (unit_count == 0 || !evaluator.meets(every_unit(unit_count))) {
    throw Error("--accuracy-target " + accuracy::target_text(evaluator.target()) +
                    ": even the low graph with every node float32 misses it on these samples",
                "lower the target, or check the samples (are they prepared as the model reads "
                "them?)");
  }
}

// One search for the units to keep, aimed at the evaluator's target.
struct Search {
  std::vector<size_t> kept;
  int64_t groups_measured = 0;
};

Search search_once(Evaluator& evaluator, const LogSink& say) {
  const Candidates candidates = find_candidates(evaluator);
  const size_t prefix = shortest_prefix(evaluator, candidates.units);
  say("accuracy repair: " + std::to_string(candidates.groups_measured) + " groups measured; the " +
      std::to_string(prefix) + " worst units float32 meet " +
      accuracy::target_text(evaluator.target()) + "; trying each low again");
  const auto end = candidates.units.begin() + static_cast<std::ptrdiff_t>(prefix);
  return {make_one_minimal(evaluator, {candidates.units.begin(), end}),
          candidates.groups_measured};
}

// Rounds of search, each with a wider margin, until the result meets the user's target on
// the validation sets too; every unit float32 when the margin asks for float32 itself.
struct Rounds {
  Search result;
  int64_t rounds = 0;
  double share = k_first_share;
  std::string aimed_at; // the last search's target
};

Rounds search_with_margin(const RepairInputs& in, Evaluator& evaluator, size_t unit_count,
                          const LogSink& say) {
  Rounds out;
  for (double share = k_first_share; share >= k_smallest_share;) {
    const auto aim = with_margin(in.target, share);
    if (out.rounds > 0 && accuracy::target_text(aim) == out.aimed_at) {
      break; // no clause can keep a wider margin (checks alone): the same search again
    }
    evaluator.aim_at(aim);
    if (!evaluator.meets(every_unit(unit_count))) {
      if (out.rounds == 0 && share == k_first_share) {
        share = 1; // the margin is out of reach on the search sets: aim at the target itself
        continue;
      }
      break;
    }
    ++out.rounds;
    out.share = share;
    out.aimed_at = accuracy::target_text(aim);
    const Search found = search_once(evaluator, say);
    out.result.kept = found.kept;
    out.result.groups_measured += found.groups_measured;
    if (in.validation == nullptr ||
        accuracy::meets(in.target, evaluator.evaluate_validation(found.kept))) {
      return out;
    }
    share = next_share(share, in.target, evaluator.evaluate_validation(found.kept));
    say("accuracy repair: the result misses " + accuracy::target_text(in.target) + " on the " +
        std::to_string(in.validation->sets()) +
        " validation set(s); searching again with a wider margin");
  }
  // Float32 throughout, the last resort: it must meet the target on the validation sets.
  out.result.kept = every_unit(unit_count);
  out.aimed_at = "every unit float32";
  evaluator.aim_at(in.target);
  const bool validated =
      in.validation == nullptr ||
      accuracy::meets(in.target, evaluator.evaluate_validation(out.result.kept));
  if (!evaluator.meets(out.result.kept) || !validated) {
    throw Error("--accuracy-target " + accuracy::target_text(in.target) +
                    ": even the low graph with every node float32 misses it on the validation sets",
                "lower the target, or check the validation sets (are they prepared as the model "
                "reads them?)");
  }
  return out;
}

} // namespace

RepairResult repair_accuracy(const RepairInputs& in, const onnx::ModelProto& low) {
  const auto start = std::chrono::steady_clock::now();
  const auto units = low_precision_units(low);
  Evaluator evaluator(in, units);
  evaluator.record({}, in.unrepaired);
  check_reachable(evaluator, units.size());
  const LogSink say = [&](const std::string& line) {
    if (in.log) {
      in.log(line);
    }
  };
  say("accuracy repair: " + std::to_string(units.size()) +
      " units; finding the worst by measuring groups of them low alone");
  const Rounds rounds = search_with_margin(in, evaluator, units.size(), say);
  const auto& kept = rounds.result.kept;

  RepairResult result;
  for (size_t index : kept) {
    result.kept_nodes.insert(result.kept_nodes.end(), units[index].nodes.begin(),
                             units[index].nodes.end());
  }
  std::sort(result.kept_nodes.begin(), result.kept_nodes.end());
  evaluator.aim_at(in.target);
  const auto kept_units = kept_units_json(evaluator, units, kept);
  result.runs = evaluator.runs();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.report = {
      {"units", units.size()},
      {"kept_units", kept_units},
      {"groups_measured", rounds.result.groups_measured},
      {"evaluations", evaluator.evaluations()},
      {"runs", result.runs},
      {"seconds", seconds},
      {"search_rounds", rounds.rounds},
      {"search_target", rounds.aimed_at},
      {"margin_share", rounds.share},
      {"method", "the worst units found best first by halving groups low alone, until they "
                 "meet the search target (the target with a margin); binary search of them, "
                 "worst first; 1-minimal; again with a wider margin while the result misses "
                 "the target on the validation sets"}};
  return result;
}

} // namespace npucc::accuracy

#include "accuracy/descent.h"

#include "accuracy/margin.h"
#include "accuracy/repair.h"
#include "output/runtime_graph_file.h"
#include "precision/op_lists.h"
#include "util/json_fields.h"
#include "util/strings.h"

#include <algorithm>
#include <map>
#include <optional>

namespace npucc::accuracy {

namespace {

struct Candidate {
  std::string name;
  std::string op;
};

// The low graph's nodes the deny list kept float32 whose op the descent may lower, in graph
// order (the precision report's node_precisions; a reason other than deny_list is a keep
// the descent leaves alone, and an unnamed node cannot be named to the rebuild).
std::vector<Candidate> descent_candidates(const precision::PrecisionBuild& variants,
                                          const std::set<std::string>& user_denied) {
  std::vector<Candidate> out;
  if (!variants.report.is_object() || !variants.report.contains("node_precisions")) {
    return out;
  }
  for (const auto& node : variants.report.at("node_precisions")) {
    const std::string name = util::string_field(node, "name");
    const std::string op = util::string_field(node, "op_type");
    if (!name.empty() && util::string_field(node, "reason") == "deny_list" &&
        descent_ops().count(op) != 0 && user_denied.count(op) == 0) {
      out.push_back({name, op});
    }
  }
  return out;
}

// The candidates by op class, classes in the graph order of their first node.
std::vector<std::vector<Candidate>> by_op(const std::vector<Candidate>& candidates) {
  std::vector<std::vector<Candidate>> out;
  std::map<std::string, size_t> index;
  for (const auto& candidate : candidates) {
    auto [found, added] = index.emplace(candidate.op, out.size());
    if (added) {
      out.emplace_back();
    }
    out[found->second].push_back(candidate);
  }
  return out;
}

struct Trial {
  precision::PrecisionBuild build;
  Metrics metrics;
  Metrics validation_metrics;
  bool meets = false;
};

// The build with `lowered` low, measured on the search sets (against `aim`, the target with
// the margin) and, when those hold, on the validation sets (against the target itself).
Trial try_lowered(const DescentInputs& in, const accuracy::AccuracyTarget& aim,
                  const std::vector<std::string>& lowered, int64_t& runs) {
  Trial trial{in.lower(lowered), {}, {}, false};
  onnx::ModelProto emulation = emulation_of(trial.build);
  const output::RuntimeGraphFile file(emulation);
  const char* what = "the emulation of the low graph with deny-list nodes lowered";
  trial.metrics = in.search.measure(what, file.source());
  runs += in.search.sets();
  trial.meets = accuracy::meets(aim, trial.metrics);
  if (trial.meets && in.validation != nullptr) {
    trial.validation_metrics = in.validation->measure(what, file.source());
    runs += in.validation->sets();
    trial.meets = accuracy::meets(in.target, trial.validation_metrics);
  }
  return trial;
}

// The nodes of `build`'s low graph the precision report marks lowered by the descent, sorted.
std::vector<std::string> lowered_in(const precision::PrecisionBuild& build) {
  std::vector<std::string> out;
  if (!build.report.is_object() || !build.report.contains("node_precisions")) {
    return out;
  }
  for (const auto& node : build.report.at("node_precisions")) {
    auto lowered = node.find("accuracy_lowered");
    if (lowered != node.end() && lowered->is_boolean() && lowered->get<bool>()) {
      out.push_back(util::string_field(node, "name"));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The search itself: each step adds a group to what is lowered when the target still holds.
class Descent {
public:
  Descent(const DescentInputs& in, const accuracy::AccuracyTarget& aim, DescentResult& result)
      : m_in(in), m_aim(aim), m_result(result) {}

  bool attempt(const std::vector<Candidate>& group) {
    if (m_evaluations >= k_descent_evaluations) {
      return false;
    }
    ++m_evaluations;
    std::vector<std::string> wanted = m_lowered;
    std::set<std::string> ops;
    for (const auto& candidate : group) {
      wanted.push_back(candidate.name);
      ops.insert(candidate.op);
    }
    Trial trial = try_lowered(m_in, m_aim, wanted, m_result.runs);
    m_steps.push_back({{"ops", ops}, {"nodes", group.size()}, {"held", trial.meets}});
    if (m_in.log) {
      m_in.log("accuracy descent: " + std::to_string(group.size()) + " node(s) (" +
               util::join(std::vector<std::string>(ops.begin(), ops.end()), ", ") + ") low: " + (trial.meets ? "target held" : "target missed"));
    }
    const bool held = trial.meets;
    if (held) {
      m_lowered = std::move(wanted);
      m_best = std::move(trial);
    }
    return held;
  }

  std::optional<Trial>& best() { return m_best; }
  int evaluations() const { return m_evaluations; }
  nlohmann::json steps() const { return m_steps; }

private:
  const DescentInputs& m_in;
  const accuracy::AccuracyTarget& m_aim;
  DescentResult& m_result;
  std::vector<std::string> m_lowered;
  std::optional<Trial> m_best;
  int m_evaluations = 0;
  nlohmann::json m_steps = nlohmann::json::array();
};

// A group that missed, in two halves (graph order), each tried and halved again while it
// misses: the nodes that cost the most are found in about log2 steps per node, and the rest
// of the group goes low with fewer graphs than one node at a time.
void halve(Descent& descent, const std::vector<Candidate>& group) {
  if (group.size() < 2) {
    return;
  }
  const auto middle = group.begin() + static_cast<std::ptrdiff_t>(group.size() / 2);
  for (const auto& part : {std::vector<Candidate>(group.begin(), middle),
                           std::vector<Candidate>(middle, group.end())}) {
    if (!descent.attempt(part)) {
      halve(descent, part);
    }
  }
}

// All at once; else each op class; else the halves of each class that missed.
void run_steps(Descent& descent, const std::vector<Candidate>& candidates) {
  if (descent.attempt(candidates)) {
    return;
  }
  auto classes = by_op(candidates);
  std::vector<std::vector<Candidate>> missed;
  if (classes.size() == 1) {
    missed = std::move(classes); // the class is every candidate: already missed
  } else {
    for (auto& group : classes) {
      if (!descent.attempt(group)) {
        missed.push_back(std::move(group));
      }
    }
  }
  for (const auto& group : missed) {
    halve(descent, group);
  }
}

} // namespace

const std::set<std::string>& descent_ops() {
  static const std::set<std::string> ops = {"Softmax", "LogSoftmax", "LayerNormalization",
                                            "GroupNormalization", "RMSNormalization"};
  return ops;
}

std::set<std::string> black_listed_ops(const std::string& mixlist, const std::string& source) {
  if (mixlist.empty()) {
    return {};
  }
  const auto edit = precision::parse_mixlist(mixlist, source.empty() ? "(inline)" : source);
  auto black = edit.to_add.find("black-list");
  return black == edit.to_add.end() ? std::set<std::string>{}
                                    : std::set<std::string>(black->second.begin(),
                                                            black->second.end());
}

DescentResult descend(precision::PrecisionBuild& variants, const DescentInputs& in,
                      Metrics& metrics, Metrics& validation_metrics) {
  DescentResult result;
  const auto candidates = descent_candidates(variants, in.user_denied);
  const auto aim = with_margin(in.target, k_first_share);
  result.report = {{"candidates", candidates.size()},
                   {"search_target", accuracy::target_text(aim)}};
  Descent descent(in, aim, result);
  if (!candidates.empty()) {
    if (in.log) {
      in.log("accuracy descent: trying " + std::to_string(candidates.size()) +
             " node(s) the deny list kept float32 in low precision");
    }
    run_steps(descent, candidates);
  }
  if (auto& best = descent.best()) {
    result.lowered = lowered_in(best->build);
    variants = std::move(best->build);
    metrics = std::move(best->metrics);
    if (in.validation != nullptr) {
      validation_metrics = std::move(best->validation_metrics);
    }
  }
  result.report["evaluations"] = descent.evaluations();
  result.report["steps"] = descent.steps();
  result.report["runs"] = result.runs;
  result.report["lowered"] = result.lowered;
  return result;
}

} // namespace npucc::accuracy

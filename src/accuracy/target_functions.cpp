#include "accuracy/target_functions.h"

#include "npucc/error.h"

#include <algorithm>
#include <cmath>
#include <exception>

namespace npucc::accuracy {

namespace {

std::string metric_of(const AccuracyFunction& function) {
  return (function.check ? "check[" : "score[") + function.label + "]";
}

// A set's outputs as views (valid while the set is).
std::vector<OutputTensor> views(const std::vector<std::string>& names,
                                const runtime::TensorSet& set) {
  std::vector<OutputTensor> out;
  for (size_t o = 0; o < set.size(); ++o) {
    out.push_back({o < names.size() ? names[o] : set[o].name, runtime::type_name(set[o].type),
                   set[o].shape, set[o].bytes});
  }
  return out;
}

accuracy::Figure value_on(const AccuracyFunction& function, const std::string& metric,
                          const std::vector<OutputTensor>& high,
                          const std::vector<OutputTensor>& low, int64_t set) {
  double value = 0;
  try {
    value = function.compute(high, low);
  } catch (const std::exception& error) {
    throw Error("--accuracy-target " + metric + ": the function " + function.name +
                    " failed on sample set " + std::to_string(set + 1) + ": " + error.what(),
                "npucc calls it with (high_outputs, low_outputs), dicts of output name -> "
                "numpy array; fix it or leave it out of accuracy_target");
  }
  if (std::isnan(value)) {
    return {value, "the function " + function.name + " returned NaN"};
  }
  return {value, ""};
}

} // namespace

AccuracyFunctions::AccuracyFunctions(const std::vector<AccuracyFunction>& given,
                                     const accuracy::AccuracyTarget& target) {
  for (const auto& clause : target.clauses) {
    if (!accuracy::is_function_metric(clause.metric)) {
      continue;
    }
    auto found = std::find_if(given.begin(), given.end(),
                              [&](const AccuracyFunction& f) { return metric_of(f) == clause.metric; });
    if (found == given.end()) {
      throw usage_error("--accuracy-target " + clause.metric +
                            ": no function of that label was given: a function target is "
                            "given in Python (npucc.Target), not on a command line",
                        "remove the clause, or compile with npucc.compile(accuracy_target=...)");
    }
    m_functions.push_back({&*found, clause.metric, clause.at_least});
  }
  for (const auto& function : given) {
    if (std::none_of(m_functions.begin(), m_functions.end(),
                     [&](const Named& n) { return n.function == &function; })) {
      throw usage_error("accuracy function " + function.name + " (" + metric_of(function) +
                        "): --accuracy-target has no clause naming it");
    }
  }
}

void AccuracyFunctions::measure(const std::vector<std::string>& outputs,
                                const std::vector<runtime::TensorSet>& high,
                                const std::vector<runtime::TensorSet>& low, int64_t first_set,
                                std::vector<accuracy::OutputMetrics>& metrics) const {
  for (const auto& named : m_functions) {
    accuracy::OutputMetrics entry;
    entry.name = named.metric;
    entry.function = true;
    entry.higher_is_better = named.higher_is_better;
    for (size_t s = 0; s < high.size() && s < low.size(); ++s) {
      const int64_t set = first_set + static_cast<int64_t>(s);
      accuracy::SampleMetrics sample;
      sample.set = set;
      sample.figures[named.metric] = value_on(*named.function, named.metric,
                                              views(outputs, high[s]), views(outputs, low[s]), set);
      accuracy::merge(entry, std::move(sample));
    }
    metrics.push_back(std::move(entry));
  }
}

void check_accuracy_functions(const CompileOptions& options) {
  if (options.accuracy_target.empty() && options.accuracy_functions.empty()) {
    return;
  }
  const auto target = accuracy::parse_accuracy_target(
      options.accuracy_target.empty() ? std::vector<std::string>{}
                                      : std::vector<std::string>{options.accuracy_target});
  const AccuracyFunctions checked(options.accuracy_functions, target);
}

} // namespace npucc::accuracy

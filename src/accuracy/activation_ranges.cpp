#include "accuracy/activation_ranges.h"

#include "accuracy/value_probe.h"
#include "accuracy/drift_run.h"
#include "output/runtime_graph_file.h"
#include "model/graph_walk.h"
#include "npucc/error.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unordered_map>

namespace npucc::accuracy {

namespace {

struct LowLimits {
  double largest;
  double smallest_normal;
};

LowLimits limits_of(const std::string& low_type) {
  if (low_type == "bfloat16") {
    return {3.3895313892515355e38, 1.1754943508222875e-38};
  }
  return {65504.0, 6.103515625e-05};
}

// Measured figures to 3 digits; the low type's limits (limit = true) as written: 65504.
std::string number(double value, bool limit = false) {
  char text[32];
  std::snprintf(text, sizeof text, limit ? "%.6g" : "%.3g", value);
  return text;
}

template <typename T>
void fold_elements(ValueRange& range, const T* values, size_t n, double smallest_normal) {
  for (size_t i = 0; i < n; ++i) {
    const double magnitude = std::fabs(static_cast<double>(values[i]));
    if (!std::isfinite(magnitude) || magnitude == 0) {
      continue;
    }
    range.max_abs = std::max(range.max_abs, magnitude);
    ++range.nonzero;
    range.below_normal += magnitude < smallest_normal ? 1 : 0;
  }
}

// The values the rule reads: every float node output of the low graph, its If/Loop/Scan
// bodies' included, the high graph also computes (drift_plan.cpp chooses them as the drift
// report does), and the low-type nodes among them by name. `names`: the main graph's values,
// then the bodies' (read through their nodes, accuracy/body_probe.h).
struct Probed {
  std::vector<std::string> names;
  size_t main_values = 0;
  std::vector<accuracy::BodyValue> bodies;
  std::set<std::string> low_nodes;
};

Probed probed_values(const precision::PrecisionBuild& variants, const std::string& low_type) {
  const auto plan = plan_drift(variant_of(variants, "low").model.graph(),
                               variant_of(variants, "high").model.graph(), variants.report);
  Probed out;
  for (const auto& value : plan.values) {
    if (value.body.empty()) {
      out.names.push_back(value.value);
    } else {
      out.bodies.push_back({value.body, value.value});
    }
    if (value.stored == low_type && !value.node.empty()) {
      out.low_nodes.insert(value.node);
    }
  }
  out.main_values = out.names.size();
  for (const auto& body : out.bodies) {
    out.names.push_back(body.value);
  }
  return out;
}

// The ranges of `probed`'s values in the high graph over `samples` (the bodies' left empty
// when the runtime cannot stack them: a value whose shape changes between iterations).
std::vector<ValueRange> measure_ranges(const onnx::ModelProto& high, const Probed& probed,
                                       const accuracy::Samples& samples,
                                       runtime::GraphRuntime& runtime, double smallest_normal,
                                       int64_t& runs, bool with_bodies = true) {
  std::vector<std::string> read(probed.names.begin(),
                                probed.names.begin() + static_cast<std::ptrdiff_t>(probed.main_values));
  onnx::ModelProto exposed = high;
  accuracy::expose_values(exposed, read);
  const uint64_t set_bytes = with_bodies && !probed.bodies.empty() ? 0 : accuracy::stated_bytes(high.graph(), read);
  if (with_bodies) {
    accuracy::expose_body_values(exposed, probed.bodies);
    const auto body_names = accuracy::body_output_names(probed.bodies);
    read.insert(read.end(), body_names.begin(), body_names.end());
  }
  std::vector<ValueRange> ranges(probed.names.size());
  try {
    const output::RuntimeGraphFile file(exposed);
    runs += accuracy::probe_graph(
        runtime, {"the high graph", file.source(), read}, samples,
        [&](int64_t, const runtime::TensorSet& values) {
          for (size_t v = 0; v < read.size() && v < values.size(); ++v) {
            fold_range(ranges[v], values[v], smallest_normal);
          }
        },
        set_bytes);
  } catch (const Error&) {
    if (!with_bodies || probed.bodies.empty()) {
      throw;
    }
    return measure_ranges(high, probed, samples, runtime, smallest_normal, runs, false);
  }
  return ranges;
}

// Each low-type node of the high graph (its bodies' too) with the first verdict among its
// outputs, then its inputs ("reads NAME: ...").
std::map<std::string, std::string> kept_nodes(
    const onnx::GraphProto& high, const std::set<std::string>& low_nodes,
    const std::unordered_map<std::string, std::string>& verdicts) {
  std::map<std::string, std::string> kept;
  std::vector<const onnx::NodeProto*> nodes; // bodies' too
  model::for_each_graph(high, [&](const onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      nodes.push_back(&node);
    }
  });
  for (const auto* each : nodes) {
    const auto& node = *each;
    if (low_nodes.count(node.name()) == 0) {
      continue;
    }
    std::string why;
    for (const auto& output : node.output()) {
      auto found = verdicts.find(output);
      if (why.empty() && found != verdicts.end()) {
        why = found->second;
      }
    }
    for (const auto& input : node.input()) {
      auto found = verdicts.find(input);
      if (why.empty() && found != verdicts.end()) {
        why = "reads " + input + ": " + found->second;
      }
    }
    if (!why.empty()) {
      kept.emplace(node.name(), why);
    }
  }
  return kept;
}

} // namespace

void fold_range(ValueRange& range, const runtime::Tensor& tensor, double smallest_normal) {
  if (tensor.type == onnx::TensorProto::FLOAT) {
    std::vector<float> values(tensor.bytes.size() / sizeof(float));
    std::memcpy(values.data(), tensor.bytes.data(), values.size() * sizeof(float));
    fold_elements(range, values.data(), values.size(), smallest_normal);
  } else if (tensor.type == onnx::TensorProto::DOUBLE) {
    std::vector<double> values(tensor.bytes.size() / sizeof(double));
    std::memcpy(values.data(), tensor.bytes.data(), values.size() * sizeof(double));
    fold_elements(range, values.data(), values.size(), smallest_normal);
  }
}

std::string range_verdict(const ValueRange& range, double largest, double smallest_normal) {
  if (range.max_abs > largest) {
    return "max " + number(range.max_abs) + " > " + number(largest, true);
  }
  if (range.nonzero > 0 &&
      static_cast<double>(range.below_normal) > k_subnormal_share * static_cast<double>(range.nonzero)) {
    const double share = 100.0 * static_cast<double>(range.below_normal) /
                         static_cast<double>(range.nonzero);
    return number(share) + "% of non-zero values below " + number(smallest_normal, true) + " (max " +
           number(range.max_abs) + ")";
  }
  return "";
}

bool range_rule_off_for_bench() {
  const char* value = std::getenv("NPUCC_BENCH_NO_RANGE_RULE");
  return value != nullptr && *value != '\0';
}

RangeRule activation_range_rule(const precision::PrecisionBuild& variants,
                                const accuracy::Samples& samples, runtime::GraphRuntime& runtime,
                                const LogSink& log) {
  const std::string low_type = low_type_of(variants);
  const LowLimits limits = limits_of(low_type);
  const Probed probed = probed_values(variants, low_type);
  RangeRule rule;
  rule.report = {{"low_type", low_type},
                 {"largest", limits.largest},
                 {"smallest_normal", limits.smallest_normal},
                 {"subnormal_share_above", k_subnormal_share},
                 {"values", probed.names.size()},
                 {"runs", 0},
                 {"kept", nlohmann::json::object()}};
  if (probed.low_nodes.empty()) {
    return rule;
  }
  const auto& high = variant_of(variants, "high").model;
  const auto ranges =
      measure_ranges(high, probed, samples, runtime, limits.smallest_normal, rule.runs);
  std::unordered_map<std::string, std::string> verdicts;
  for (size_t v = 0; v < ranges.size(); ++v) {
    if (auto why = range_verdict(ranges[v], limits.largest, limits.smallest_normal); !why.empty()) {
      verdicts.emplace(probed.names[v], why);
    }
  }
  rule.kept = kept_nodes(high.graph(), probed.low_nodes, verdicts);
  rule.report["runs"] = rule.runs;
  rule.report["kept"] = rule.kept;
  if (log) {
    log("accuracy: activation ranges: " + std::to_string(probed.names.size()) +
        " values of the high graph on " + std::to_string(samples.count()) + " sample set(s); " +
        std::to_string(rule.kept.size()) + " low node(s) kept float32 (" + low_type +
        " cannot hold their values)");
  }
  return rule;
}

} // namespace npucc::accuracy

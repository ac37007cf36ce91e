#pragma once

#include "accuracy/drift_report.h"
#include "accuracy/samples.h"
#include "npucc/compile.h"
#include "precision/compile_precision.h"
#include "runtime/runtime.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

// --accuracy-report nodes (npucc-compile(1), DRIFT REPORT): the drift report of a compile's
// low graph, measured by a value probe (accuracy/value_probe.h) of the high graph and the
// low graph's emulation, every value exposed at once.
namespace npucc::accuracy {

// What the report measures in a low graph: each float16, bfloat16 or float32 node output of
// its main graph and of its If/Loop/Scan bodies (nested ones too) the high graph also
// computes (the Casts the rewrite inserted are not: a reader of one counts the Cast's input
// as its input), in node order, a body's values before its node's outputs; the float32
// ones with the precision report's reason. A body value is read through its nodes
// (accuracy/body_probe.h). "not_covered": the bodies whose values cannot be read that way
// (an If branch inside a Loop or Scan body, another op's body, a body the high graph lacks),
// with the reason.
struct DriftPlan {
  std::vector<accuracy::DriftValue> values;
  nlohmann::json not_covered = nlohmann::json::array();
};
DriftPlan plan_drift(const onnx::GraphProto& low, const onnx::GraphProto& high,
                     const nlohmann::json& precision_report);

// What plan_drift and compare's plan (compare_drift.cpp) share about bodies:
// the node outputs of a body and the bodies nested in it (a not_covered entry's "values");
int64_t body_value_count(const onnx::GraphProto& body);
// why the values of `node`'s body `body` (at `path`, the steps to the graph holding `node`)
// cannot be read, or "" when they can; `counterpart`: the other graph's same body, or null;
std::string body_not_readable(const onnx::NodeProto& node, const onnx::GraphProto& body,
                              const onnx::GraphProto* counterpart, const accuracy::BodyPath& path);
// the body `attribute` of the node of `other` whose first output is `node`'s, or null.
const onnx::GraphProto* matching_body(const onnx::GraphProto& other, const onnx::NodeProto& node,
                                      const std::string& attribute);

// Two graphs whose same-named values a drift report compares: the high (reference) one and
// the low one's run (an emulation, or a graph run as is), with how errors name each.
struct DriftGraphs {
  onnx::ModelProto high;
  std::string high_what; // "the high graph", "the reference"
  onnx::ModelProto low;
  std::string low_what;  // "the emulation of the low graph", "the candidate's emulation"
};

// Measures `values` (by name, the same in both graphs) of `graphs` on `samples`, every value
// exposed at once (accuracy/value_probe.h, body_probe.h): the report document
// (drift_report.h) with "seconds", "fold_seconds" and "not_covered": when the runtime fails
// on the graphs with the body values exposed (a value whose shape changes between a loop's
// iterations cannot be stacked), the main graph's values alone, and each body listed there
// with the error. `low_type` names what the low graph stores.
nlohmann::json measure_drift_values(DriftGraphs graphs,
                                    const std::vector<accuracy::DriftValue>& values,
                                    const std::string& low_type, const accuracy::Samples& samples,
                                    runtime::GraphRuntime& runtime, double threshold);

// The graph of `role` ("high", "low") in `variants`; throws npucc::Error without one.
const precision::GraphVariant& variant_of(const precision::PrecisionBuild& variants,
                                          const std::string& role);
// The low graph's low type: "float16" or "bfloat16".
std::string low_type_of(const precision::PrecisionBuild& variants);

// Measures the plan's values of `variants`' low graph against its high graph on `samples`:
// the report document (drift_report.h), with "not_covered" and "seconds".
nlohmann::json measure_drift(const precision::PrecisionBuild& variants,
                             const accuracy::Samples& samples, runtime::GraphRuntime& runtime,
                             double threshold, const LogSink& log);

} // namespace npucc::accuracy

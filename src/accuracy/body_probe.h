#pragma once

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// Values inside If/Loop/Scan bodies read as graph outputs (npucc-compile(1), DRIFT REPORT):
// a graph output reaches the main graph's values only, so each body value is made to leave
// its body, level by level, as a new output of the node that holds the body:
//   - Loop and Scan: a new scan output, so the value of every iteration is kept, stacked on a
//     new first axis (a value in a Loop inside a Loop: two axes, the outer loop's first);
//   - If: a new output of both branches; the branch that does not compute it gives an empty
//     tensor of its element type, so a run where that branch ran reads 0 elements.
// value_probe.h's expose_values does the same for main-graph values.
namespace npucc::accuracy {

// The main-graph names body values are read under start with this (body_output_names), so
// a fold that sees only names (drift_fold.h) knows a body value from a main-graph one.
constexpr const char* k_body_probe_prefix = "npucc_body_probe/";

// One step from a graph into a body: the node that holds it and the attribute.
struct BodyStep {
  std::string owner;     // the node's first output: unique in a model where names may repeat
  std::string owner_name; // the node's name as the user sees it (its first output when empty)
  std::string owner_op;  // "If", "Loop", "Scan"
  std::string attribute; // "then_branch", "else_branch", "body"
};
using BodyPath = std::vector<BodyStep>;

// A value defined by a node of the body at the end of `path`.
struct BodyValue {
  BodyPath path;
  std::string value;
};

// The step into `node`'s body `attribute`.
BodyStep step_into(const onnx::NodeProto& node, const std::string& attribute);

// "main/loop:body/choose:then_branch": the graph a path reaches, as drift.json names it.
std::string body_graph_name(const BodyPath& path);

// How many Loop/Scan steps the path takes: the iteration axes stacked before a value's own.
int stacked_axes(const BodyPath& path);

// The main-graph name each of `values` is read under once `model` is rewritten; `prefix` +
// its index, the same in every graph rewritten with the same list.
std::vector<std::string> body_output_names(const std::vector<BodyValue>& values,
                                           const std::string& prefix = k_body_probe_prefix);

// Rewrites `model` so that each of `values` is an output of its main graph under the name
// body_output_names gives, of the element type its body states for it (value_info, else a
// Cast's `to`, else float32). Throws npucc::Error naming a step or value the model lacks.
void expose_body_values(onnx::ModelProto& model, const std::vector<BodyValue>& values,
                        const std::string& prefix = k_body_probe_prefix);

} // namespace npucc::accuracy

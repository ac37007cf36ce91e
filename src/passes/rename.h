#pragma once

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace npucc::passes {

// What the bodies nested in a graph (at any depth) do with names: what decides
// whether pointing the graph's readers of one name at another is safe.
struct NestedNames {
  // Names some nested body defines (inputs, initializers, node outputs).
  std::unordered_set<std::string> defined;
  // Names some nested body returns as an output without defining it, i.e. outputs
  // read straight from an enclosing scope. Renaming those would rename a body output.
  std::unordered_set<std::string> outer_outputs;
};

NestedNames nested_names(const onnx::GraphProto& graph);

// Whether the readers of `from` in a graph and its bodies can read `to` instead:
// no body may define `to` (its own `to` would capture the read) and no body may
// return `from` as an output (body output names are never changed).
bool can_redirect(const NestedNames& nested, const std::string& from, const std::string& to);

// Renames reads (node inputs) in `graph` and in its nested bodies, except inside a
// body that defines the old name itself (it shadows the outer one there). The
// graph's own outputs are left alone: callers never rename those. Returns the
// number of inputs renamed.
int64_t rename_reads(onnx::GraphProto& graph,
                     const std::unordered_map<std::string, std::string>& renames);

// Makes the node at `index`, whose output 0 holds the same value as its input 0
// (Identity, a Cast to the type it already has), unnecessary: its readers read the
// input instead; when the output is a graph output, the input's producer (a node of
// this graph) is renamed to it. Returns false, changing nothing, when neither is
// safe. On success the node is left without inputs and outputs for the caller to
// remove.
bool bypass_node(onnx::GraphProto& graph, int index, const NestedNames& nested);

// Removes the value_info entries of `names`.
void drop_value_info(onnx::GraphProto& graph, const std::unordered_set<std::string>& names);

} // namespace npucc::passes

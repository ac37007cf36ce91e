#pragma once

#include "npucc/compile.h"
#include "npucc/memory_plan.h"
#include "npucc/model.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace npucc {

struct OpsetImport {
  std::string domain; // "ai.onnx" for the default domain
  int64_t version = 0;
};

// How often one operator is used; `domain` is "ai.onnx" for the default domain.
struct OpUse {
  std::string domain;
  std::string op_type;
  int64_t main_graph = 0;
  int64_t subgraphs = 0;
  int64_t count() const { return main_graph + subgraphs; }
};

// Stored weights of one kind and element type. `source` is "initializer" (graph
// initializers, sparse ones included, in every graph) or "constant" (tensors held by
// Constant nodes, the way some exporters store every weight).
struct ParameterGroup {
  std::string source;
  std::string dtype;
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0; // string tensors: the bytes of their strings
};

// One dimension: a fixed value, a symbolic name, or unknown (neither).
struct Dimension {
  std::optional<int64_t> value;
  std::string param;
};

// A graph input or output. `kind` is "tensor", "sequence", "map", "optional",
// "sparse_tensor" or "unknown"; `dtype` and `dims` describe the (innermost) tensor.
struct ValueSummary {
  std::string name;
  std::string kind;
  std::string dtype;
  bool has_shape = false; // false: rank unknown
  std::vector<Dimension> dims;
};

// Nodes whose operator has no schema in ONNX 1.12 at the model's opset (custom
// domains, operators newer than the opset, or a domain the model never imports);
// nodes calling a model-local function are not listed.
struct UnregisteredOp {
  std::string domain;
  std::string op_type;
  int64_t opset = 0;              // the model's opset for the domain; 0 when not imported
  std::vector<std::string> nodes; // describe_node() text, main graph and subgraphs
};

struct InspectReport {
  std::filesystem::path path;
  uint64_t file_bytes = 0;
  std::string sha256;
  std::vector<ExternalFile> external_files;

  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  std::vector<OpsetImport> opsets;

  int64_t main_graph_nodes = 0;
  int64_t subgraph_nodes = 0;
  int64_t subgraph_count = 0; // graphs held by node attributes, at any depth
  int max_depth = 0;          // 0: no subgraphs; 1: If/Loop/Scan bodies; 2: bodies in bodies
  std::vector<OpUse> ops;     // most used first, then by domain and name

  std::vector<ParameterGroup> parameters; // by source, then most bytes first
  std::vector<ValueSummary> inputs;       // graph inputs that are not initializers
  std::vector<ValueSummary> outputs;
  std::vector<UnregisteredOp> unregistered_ops;

  std::vector<InputShape> input_shapes; // the --input-shape values applied for the plan
  MemoryPlan memory_plan;               // of the main graph after best-effort shape inference

  // A low or emulation graph of an npucc output folder whose compile checked its accuracy
  // (--check-accuracy, --accuracy-target): the report as the compile printed it, and the
  // manifest's "accuracy" object as JSON text. Empty otherwise.
  std::vector<std::string> accuracy_lines;
  std::string accuracy_json;
  // Its drift report (--accuracy-report nodes, drift.json beside the manifest): the lines
  // the compile printed, and the document as JSON text. Empty otherwise.
  std::vector<std::string> drift_lines;
  std::string drift_json;

  uint64_t parameter_elements() const;
  uint64_t parameter_bytes() const;
};

// One node, for `npucc inspect --nodes`: the names --keep-dtype takes, with what decides
// the node's precision. `graph` is "main" or the path of the body holding the node:
// "main/loop1.body/if2.then_branch" (the node's name, or #INDEX when it has none, then the
// attribute holding the body). Types come from the model and best-effort shape inference.
struct NodeSummary {
  struct Value {
    std::string name;  // "" for an omitted optional input
    std::string dtype; // "float32", "int64", ...; "" when unknown or not a tensor
  };
  std::string name; // "" when the node has none: --keep-dtype cannot name it
  std::string domain;
  std::string op_type;
  std::string graph;
  int64_t index = 0; // position in its graph
  std::vector<Value> inputs;
  std::vector<Value> outputs;
  // For a graph npucc compiled (a manifest.json beside it lists it): the node's precision in
  // that graph and, unless it is low, why (npucc-precision(7), REASONS); "inserted" for a
  // Cast the rewrite added. Empty otherwise.
  std::string precision;
  std::string reason;
  // The distinct floating-point types among inputs and outputs, sorted: the ones a precision
  // mode may lower (float32) or a kept node keeps.
  std::vector<std::string> float_types() const;
};

struct InspectOptions {
  std::vector<InputShape> input_shapes;
  ReadLimits limits;
};

// Reads a model (with the same structural checks as compile: a damaged or hostile
// model throws npucc::Error naming the file) and describes it. Unlike compile it does
// not need the model to pass the ONNX checker: shape inference is best effort, and
// the memory plan says why it is unavailable when shapes stay dynamic.
InspectReport inspect_model(const std::filesystem::path& path, const InspectOptions& options = {});

// Reads a model the way inspect_model does (for list_nodes): as compile reads it, with
// every large tensor, Constant values and typed fields included, left in the mapped files
// (Weights::all_in_table), since inspect only counts them.
Model read_model_for_inspect(const std::filesystem::path& path, const ReadLimits& limits = {});

// Describes a model already read (used by inspect_model and tests).
InspectReport inspect_model(Model model, const InspectOptions& options = {});

// The report as the JSON text `npucc inspect --json` prints (schema in npucc-inspect(1)).
std::string inspect_report_json(const InspectReport& report);

// The report as compact aligned text for people.
std::string inspect_report_text(const InspectReport& report);

// Every node of the main graph and of each If/Loop/Scan body, outer graphs first. For a
// graph of an npucc output folder (its manifest.json lists the file) each node gets its
// precision and reason from the manifest's precision report.
std::vector<NodeSummary> list_nodes(const Model& model);

// `npucc inspect --nodes` as text (one aligned row per node) and as the JSON document
// {"format": "npucc-inspect-nodes", "format_version": 1, "model": PATH, "nodes": [...]}.
std::string node_list_text(const std::vector<NodeSummary>& nodes);
std::string node_list_json(const std::filesystem::path& model,
                           const std::vector<NodeSummary>& nodes);

} // namespace npucc

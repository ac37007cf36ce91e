#include "output/manifest.h"
#include "npucc/inspect.h"
#include "npucc/version.h"

#include <nlohmann/json.hpp>

namespace npucc {

using nlohmann::json;

namespace {

// `npucc inspect --json`, format version 1; the schema is documented in npucc-inspect(1)
// and only grows: keys are never renamed or removed within a format version.
constexpr int k_inspect_format_version = 1;

json value_json(const ValueSummary& value) {
  json shape = nullptr;
  if (value.has_shape) {
    shape = json::array();
    for (const auto& dim : value.dims) {
      if (dim.value) {
        shape.push_back(*dim.value);
      } else if (!dim.param.empty()) {
        shape.push_back(dim.param);
      } else {
        shape.push_back(nullptr);
      }
    }
  }
  return {{"name", value.name}, {"kind", value.kind}, {"dtype", value.dtype}, {"shape", shape}};
}

json totals_json(const InspectReport& report, const std::string& source) {
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
  for (const auto& group : report.parameters) {
    if (source.empty() || group.source == source) {
      tensors += group.tensors;
      elements += group.elements;
      bytes += group.bytes;
    }
  }
  return {{"tensors", tensors}, {"elements", elements}, {"bytes", bytes}};
}

} // namespace

std::string inspect_report_json(const InspectReport& report) {
  json opsets = json::object();
  for (const auto& opset : report.opsets) {
    opsets[opset.domain] = opset.version;
  }
  json external = json::array();
  for (const auto& file : report.external_files) {
    external.push_back({{"location", file.location}, {"bytes", file.bytes_used}});
  }
  json ops = json::array();
  for (const auto& op : report.ops) {
    ops.push_back({{"domain", op.domain},
                   {"op_type", op.op_type},
                   {"count", op.count()},
                   {"main_graph", op.main_graph},
                   {"subgraphs", op.subgraphs}});
  }
  json by_dtype = json::array();
  for (const auto& group : report.parameters) {
    by_dtype.push_back({{"source", group.source},
                        {"dtype", group.dtype},
                        {"tensors", group.tensors},
                        {"elements", group.elements},
                        {"bytes", group.bytes}});
  }
  json parameters = totals_json(report, "");
  parameters["initializer"] = totals_json(report, "initializer");
  parameters["constant"] = totals_json(report, "constant");
  parameters["by_dtype"] = std::move(by_dtype);
  json inputs = json::array();
  for (const auto& value : report.inputs) {
    inputs.push_back(value_json(value));
  }
  json outputs = json::array();
  for (const auto& value : report.outputs) {
    outputs.push_back(value_json(value));
  }
  json unregistered = json::array();
  for (const auto& op : report.unregistered_ops) {
    unregistered.push_back({{"domain", op.domain},
                            {"op_type", op.op_type},
                            {"opset", op.opset},
                            {"count", op.nodes.size()},
                            {"nodes", op.nodes}});
  }
  json shapes = json::object();
  for (const auto& shape : report.input_shapes) {
    shapes[shape.name] = shape.dims;
  }
  json out = {
      {"format", "npucc-inspect"},
      {"format_version", k_inspect_format_version},
      {"compiler", {{"name", "npucc"}, {"version", k_version}}},
      {"model",
       {{"file", report.path.string()},
        {"bytes", report.file_bytes},
        {"sha256", report.sha256},
        {"ir_version", report.ir_version},
        {"producer", {{"name", report.producer_name}, {"version", report.producer_version}}},
        {"graph_name", report.graph_name},
        {"opsets", opsets},
        {"external_data", external}}},
      {"graph",
       {{"nodes", report.main_graph_nodes + report.subgraph_nodes},
        {"main_graph_nodes", report.main_graph_nodes},
        {"subgraph_nodes", report.subgraph_nodes},
        {"subgraphs", report.subgraph_count},
        {"max_depth", report.max_depth}}},
      {"ops", ops},
      {"parameters", parameters},
      {"inputs", inputs},
      {"outputs", outputs},
      {"unregistered_ops", unregistered},
      {"input_shapes", shapes},
      {"memory_plan", output::memory_plan_json(report.memory_plan, false)},
  };
  if (!report.accuracy_json.empty()) {
    out["accuracy"] = json::parse(report.accuracy_json);
  }
  if (!report.drift_json.empty()) {
    out["drift_report"] = json::parse(report.drift_json);
  }
  // Names come from the model and need not be UTF-8; never fail on them.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace npucc

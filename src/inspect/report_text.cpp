#include "npucc/inspect.h"
#include "util/strings.h"
#include "util/text_table.h"

namespace npucc {

namespace {

using util::group_digits;
using util::TextTable;

std::string op_name(const std::string& domain, const std::string& op_type) {
  return domain == "ai.onnx" ? op_type : domain + "." + op_type;
}

std::string shape_text(const ValueSummary& value) {
  if (!value.has_shape) {
    return "rank unknown";
  }
  std::vector<std::string> dims;
  for (const auto& dim : value.dims) {
    dims.push_back(dim.value ? std::to_string(*dim.value) : (dim.param.empty() ? "?" : dim.param));
  }
  return "[" + util::join(dims, ", ") + "]";
}

std::string values_text(const char* title, const std::vector<ValueSummary>& values) {
  TextTable table("lll", "  ");
  for (const auto& value : values) {
    std::string type = value.kind == "tensor" ? value.dtype : value.kind + "(" + value.dtype + ")";
    table.add_row({value.name, type, shape_text(value)});
  }
  return std::string(title) + (values.empty() ? " none\n" : "\n" + table.render());
}

std::string header_text(const InspectReport& report) {
  TextTable table("ll", "");
  table.add_row({"model", report.path.string()});
  table.add_row({"size", util::format_bytes(report.file_bytes) + ", sha256 " + report.sha256});
  for (const auto& file : report.external_files) {
    table.add_row(
        {"external", file.location + " (" + util::format_bytes(file.bytes_used) + " used)"});
  }
  const std::string joined = report.producer_name + " " + report.producer_version;
  const std::string producer(util::trim(joined));
  table.add_row({"ir", std::to_string(report.ir_version) + ", producer " +
                           (producer.empty() ? "unknown" : "\"" + producer + "\"") + ", graph \"" +
                           report.graph_name + "\""});
  std::vector<std::string> opsets;
  for (const auto& opset : report.opsets) {
    opsets.push_back(opset.domain + " " + std::to_string(opset.version));
  }
  table.add_row({"opsets", util::join(opsets, ", ")});
  table.add_row(
      {"nodes",
       group_digits(static_cast<uint64_t>(report.main_graph_nodes + report.subgraph_nodes)) + " (" +
           group_digits(static_cast<uint64_t>(report.main_graph_nodes)) + " in the main graph, " +
           group_digits(static_cast<uint64_t>(report.subgraph_nodes)) + " in " +
           std::to_string(report.subgraph_count) + " subgraphs, max depth " +
           std::to_string(report.max_depth) + ")"});
  table.add_row({"parameters", group_digits(report.parameter_elements()) + " elements, " +
                                   util::format_bytes(report.parameter_bytes())});
  return table.render();
}

std::string ops_text(const InspectReport& report) {
  TextTable table("lrrr", "  ");
  table.add_row({"op", "count", "main", "subgraphs"});
  for (const auto& op : report.ops) {
    table.add_row({op_name(op.domain, op.op_type), group_digits(static_cast<uint64_t>(op.count())),
                   group_digits(static_cast<uint64_t>(op.main_graph)),
                   group_digits(static_cast<uint64_t>(op.subgraphs))});
  }
  return "ops\n" + table.render();
}

std::string parameters_text(const InspectReport& report) {
  if (report.parameters.empty()) {
    return "parameters none\n";
  }
  TextTable table("llrrr", "  ");
  table.add_row({"source", "dtype", "tensors", "elements", "bytes"});
  for (const auto& group : report.parameters) {
    table.add_row({group.source, group.dtype, group_digits(group.tensors),
                   group_digits(group.elements), util::format_bytes(group.bytes)});
  }
  return "parameters\n" + table.render();
}

std::string unregistered_text(const InspectReport& report) {
  if (report.unregistered_ops.empty()) {
    return "ops without a schema: none\n";
  }
  TextTable table("lrl", "  ");
  for (const auto& op : report.unregistered_ops) {
    std::string opset = op.opset > 0 ? "opset " + std::to_string(op.opset) : "domain not imported";
    std::vector<std::string> nodes(op.nodes.begin(),
                                   op.nodes.begin() + std::min<size_t>(op.nodes.size(), 3));
    std::string names = util::join(nodes, ", ");
    if (op.nodes.size() > nodes.size()) {
      names += ", ... (" + std::to_string(op.nodes.size() - nodes.size()) + " more)";
    }
    table.add_row({op_name(op.domain, op.op_type) + " (" + opset + ")",
                   std::to_string(op.nodes.size()), names});
  }
  return "ops without a schema at the model's opset (custom domains, ops newer than the "
         "opset; npucc cannot type-check them)\n" +
         table.render();
}

std::string memory_plan_text(const InspectReport& report) {
  const auto& plan = report.memory_plan;
  if (!plan.available) {
    return "memory plan: unavailable: " + util::printable(plan.reason) + "\n";
  }
  return "memory plan: arena " + util::format_bytes(plan.arena_bytes) + " for " +
         group_digits(plan.tensors.size()) + (plan.tensors.size() == 1 ? " tensor" : " tensors") +
         " (lower bound " + util::format_bytes(plan.lower_bound_bytes) + ", unshared " +
         util::format_bytes(plan.unshared_bytes) + ")\n";
}

} // namespace

namespace {

// The compile's accuracy report, as it printed it (from the manifest beside the graph).
std::string accuracy_text(const InspectReport& report) {
  std::string out;
  for (const auto& line : report.accuracy_lines) {
    out += line + "\n";
  }
  for (const auto& line : report.drift_lines) {
    out += "  " + util::printable(line) + "\n"; // node names come from the model
  }
  return out.empty() ? out : "\n" + out;
}

} // namespace

std::string inspect_report_text(const InspectReport& report) {
  return header_text(report) + "\n" + ops_text(report) + "\n" + parameters_text(report) + "\n" +
         values_text("inputs", report.inputs) + values_text("outputs", report.outputs) + "\n" +
         unregistered_text(report) + memory_plan_text(report) + accuracy_text(report);
}

} // namespace npucc

#include "precision/report.h"

#include "precision/low_graph_opset.h"
#include "precision/opset_hint.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace npucc::precision {

using nlohmann::json;

const char* policy_name(Policy policy) {
  switch (policy) {
  case Policy::mixed:
    return "mixed";
  case Policy::matrix_only:
    return "matrix_only";
  case Policy::force:
    return "force";
  }
  return "mixed";
}

json report_json(const RewriteReport& report, Policy policy, WeightStorage weights,
                 const std::string& note) {
  json kept = json::array();
  for (const auto& constant : report.float32_constants) {
    json entry = {{"name", constant.name}, {"reason", constant.reason}, {"bytes", constant.bytes}};
    if (constant.overflow_values > 0) {
      entry["overflow_values"] = constant.overflow_values;
    }
    kept.push_back(std::move(entry));
  }
  json nodes = json::array();
  for (const auto& node : report.node_precisions) {
    json entry = {{"name", node.name},
                  {"op_type", node.op_type},
                  {"output", node.output},
                  {"precision", node.precision}};
    if (!node.reason.empty()) {
      entry["reason"] = node.reason;
    }
    if (!node.range.empty()) {
      entry["range"] = node.range;
    }
    if (node.accuracy_lowered) {
      entry["accuracy_lowered"] = true;
    }
    nodes.push_back(std::move(entry));
  }
  json out = {
      {"low_type", report.low_type},
      {"policy", policy_name(policy)},
      {"nodes", report.nodes},
      {"kept_float32_reasons", report.kept_reasons},
      {"casts",
       {{"inserted", report.casts_inserted},
        {"folded", report.casts_folded},
        {"by_type", report.casts_by_type}}},
      {"constants",
       {{"converted", report.constants_converted},
        {"bytes_before", report.converted_bytes_before},
        {"bytes_after", report.converted_bytes_after},
        {"weight_bytes_saved", report.converted_bytes_before - report.converted_bytes_after},
        {"master_weight_bytes", report.master_weight_bytes},
        {"kept_float32", std::move(kept)}}},
      {"low_precision_weights", weights == WeightStorage::low},
      {"warnings", report.warnings},
      {"fusion_guards", report.fusion_guards},
      {"node_precisions", std::move(nodes)},
  };
  if (!note.empty()) {
    out["note"] = note;
  }
  return out;
}

std::vector<std::string> format_precision_summary(const json& report) {
  if (!report.is_object()) {
    return {};
  }
  const std::string low = util::string_field(report, "low_type");
  std::vector<std::string> matrix;
  for (const auto& [op, by_precision] : report.at("nodes").items()) {
    int64_t op_low = by_precision.value(low, int64_t{0});
    int64_t op_float = op_low + by_precision.value("float32", int64_t{0});
    if (op_float > 0 && (op == "MatMul" || op == "Gemm" || op == "Conv" || op == "ConvTranspose" ||
                         op == "LSTM" || op == "GRU" || op == "Einsum")) {
      matrix.push_back(op + " " + std::to_string(op_low) + "/" + std::to_string(op_float));
    }
  }
  const LowCount lowered = count_low_nodes(report);
  std::vector<std::string> lines;
  lines.push_back("precision: " + low + " (" + util::string_field(report, "policy") + "): " +
                  std::to_string(lowered.low) + " of " + std::to_string(lowered.float_nodes) +
                  " float nodes low" + (matrix.empty() ? "" : "; " + util::join(matrix, ", ")));
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : report.at("kept_float32_reasons").items()) {
    reasons.push_back(reason + " " + std::to_string(count.get<int64_t>()));
  }
  if (!reasons.empty()) {
    lines.push_back("kept float32: " + util::join(reasons, ", "));
  }
  if (std::string opset = low_graph_opset_line(report.value("opset", json())); !opset.empty()) {
    lines.push_back(opset);
  }
  if (std::string hint = target_opset_hint_line(report); !hint.empty()) {
    lines.push_back(hint);
  }
  if (report.contains("fused_activations")) {
    std::vector<std::string> fused;
    for (const auto& [op, count] : report.at("fused_activations").items()) {
      fused.push_back(std::to_string(count.get<int64_t>()) + " " + op);
    }
    lines.push_back("fused in the low graph: " + util::join(fused, ", ") +
                    " (decomposed x * relu6(x + 3) / 6: one rounding in the low type, not four "
                    "to six)");
  }
  const auto& casts = report.at("casts");
  const auto& constants = report.at("constants");
  std::map<std::string, int64_t> kept_by_reason;
  for (const auto& constant : constants.at("kept_float32")) {
    ++kept_by_reason[constant.at("reason").get<std::string>()];
  }
  std::vector<std::string> kept;
  for (const auto& [reason, count] : kept_by_reason) {
    kept.push_back(reason + " " + std::to_string(count));
  }
  lines.push_back("casts inserted " + std::to_string(casts.at("inserted").get<int64_t>()) +
                  ", constants converted " +
                  std::to_string(constants.at("converted").get<int64_t>()) + " (saved " +
                  util::format_bytes(constants.at("weight_bytes_saved").get<uint64_t>()) + ")" +
                  (kept.empty() ? "" : ", float32 constants: " + util::join(kept, ", ")));
  for (const auto& constant : constants.at("kept_float32")) {
    if (constant.at("reason") == "overflow") {
      lines.push_back("overflow: constant \"" + constant.at("name").get<std::string>() + "\" has " +
                      std::to_string(constant.at("overflow_values").get<uint64_t>()) +
                      " values beyond " + low + "; its consumers stay float32");
    }
  }
  for (const auto& warning : report.at("warnings")) {
    lines.push_back("warning: " + warning.get<std::string>());
  }
  return lines;
}

} // namespace npucc::precision

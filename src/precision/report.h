#pragma once

#include "precision/mixed_precision.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace npucc::precision {

// The manifest's "precision_report" object (documented in npucc-compile(1)):
// {"low_type", "policy", "nodes": {op: {precision: count}}, "kept_float32_reasons":
//  {reason: count}, "casts": {"inserted", "folded", "by_type"}, "constants": {"converted",
//  "bytes_before", "bytes_after", "weight_bytes_saved", "master_weight_bytes",
//  "kept_float32": [{"name", "reason", "bytes", "overflow_values"?}]},
//  "low_precision_weights", "warnings": [...], "note"?,
//  "opset"?: low_graph_opset.h (bfloat16 below opset 22),
//  "target_opset_hint"?: opset_hint.h (nodes a later opset would lower)}
nlohmann::json report_json(const RewriteReport& report, Policy policy, WeightStorage weights,
                           const std::string& note);

const char* policy_name(Policy policy);

// A few lines for `npucc compile` and `npucc inspect`, from the manifest's
// "precision_report" object; empty for a null object.
std::vector<std::string> format_precision_summary(const nlohmann::json& report);

} // namespace npucc::precision

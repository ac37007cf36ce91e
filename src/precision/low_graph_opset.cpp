// GCC 12 reports a "potential null pointer dereference" inside nlohmann::json when its
// iteration and value() are inlined here (a false positive; accuracy/check.cpp has the same).
#pragma GCC diagnostic ignored "-Wnull-dereference"

// fast1 below opset 22: ONNX allows bfloat16 for Conv, the pools, the normalisations, the
// RNNs and about 40 more ops only from opset 22, so a low graph holding such an op is
// raised there (one without is left as written: the raise would gain nothing) (the high
// graph keeps the model's opset and IR version; the low graph keeps the graph inputs and
// outputs). A model whose raise is refused keeps its opset, and the report says which
// nodes stayed float32 for it and why. An explicit --target-opset is the user's choice.

#include "precision/low_graph_opset.h"

#include "check/validate.h"
#include "model/graph_walk.h"
#include "npucc/error.h"
#include "opset/raise_opset.h"
#include "schemas/registry.h"

#include <onnx/defs/data_type_utils.h>

namespace npucc::precision {

namespace {

bool takes_bfloat16(const onnx::OpSchema& schema) {
  static const std::string bfloat16 = "tensor(bfloat16)";
  for (const auto& param : schema.inputs()) {
    for (const auto& type : param.GetTypes()) {
      if (*type == bfloat16) {
        return true;
      }
    }
  }
  return false;
}

// Nodes (bodies included) whose schema takes bfloat16 at opset 22 but not at `opset`.
std::map<std::string, int64_t> held_by_schema(const onnx::ModelProto& model, int64_t opset) {
  std::map<std::string, int64_t> out;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      if (!node.domain().empty() && node.domain() != "ai.onnx") {
        continue;
      }
      const auto* now = schemas::find_schema(node.op_type(), static_cast<int>(opset), "");
      const auto* later = schemas::find_schema(node.op_type(), k_bfloat16_opset, "");
      if (now != nullptr && later != nullptr && !takes_bfloat16(*now) && takes_bfloat16(*later)) {
        ++out[node.op_type()];
      }
    }
  });
  return out;
}

nlohmann::json kept(const onnx::ModelProto& model, int64_t opset, const std::string& why) {
  nlohmann::json out = {{"model", opset}, {"low_graph", opset}, {"raised", false}};
  auto held = held_by_schema(model, opset);
  if (!held.empty()) {
    out["schema_float32"] = held;
    out["why"] = why;
  }
  return out;
}

} // namespace

nlohmann::json raise_low_graph(onnx::ModelProto& low, const CompileOptions& options,
                               LowPrecision low_type, LowGraphRaise raise) {
  const int64_t opset = opset::default_opset(low);
  if (low_type != LowPrecision::bfloat16 || opset == 0 || opset >= k_bfloat16_opset) {
    return nullptr;
  }
  if (options.target_opset != 0 || raise == LowGraphRaise::no) {
    return kept(low, opset,
                options.target_opset != 0
                    ? "--target-opset " + std::to_string(options.target_opset) + " was given"
                    : "only fast1 raises its low graph; --target-opset 22 raises the model");
  }
  if (held_by_schema(low, opset).empty()) {
    // Nothing would gain bfloat16: the graph is left as the model wrote it.
    return {{"model", opset}, {"low_graph", opset}, {"raised", false}};
  }
  onnx::ModelProto raised = low; // weights are in the store: metadata only
  try {
    auto report = opset::raise_opset(raised, k_bfloat16_opset);
    check::check_and_infer(raised, check::Checker::after);
    low = std::move(raised);
    return {{"model", opset},
            {"low_graph", k_bfloat16_opset},
            {"raised", true},
            {"adapted", report.adapted}};
  } catch (const check::InferenceCrash&) {
    throw;
  } catch (const Error& e) {
    return kept(low, opset, std::string("raising to opset 22 is refused: ") + e.what());
  }
}

std::string low_graph_opset_held(const nlohmann::json& opset) {
  std::string held;
  for (const auto& [op, count] : opset.at("schema_float32").items()) {
    held += (held.empty() ? "" : ", ") + std::to_string(count.get<int64_t>()) + " " + op;
  }
  return held;
}

std::string low_graph_opset_line(const nlohmann::json& opset) {
  if (!opset.is_object()) {
    return {};
  }
  const auto from = opset.at("model").get<int64_t>();
  if (opset.value("raised", false)) {
    return "opset: low graph raised from " + std::to_string(from) + " to " +
           std::to_string(opset.at("low_graph").get<int64_t>()) +
           " (bfloat16 for Conv, pools, normalisations and RNNs); high graph at " +
           std::to_string(from);
  }
  if (!opset.contains("schema_float32")) {
    return {};
  }
  return "schema at opset " + std::to_string(from) + ": " + low_graph_opset_held(opset) +
         " stay float32; --target-opset 22 lowers them (" + opset.at("why").get<std::string>() +
         ")";
}

} // namespace npucc::precision

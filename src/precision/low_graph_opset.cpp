// GCC 12 reports a "potential null pointer dereference" inside nlohmann::json when its
// iteration and value() are inlined here (a false positive; accuracy/check.cpp has the same).
#pragma GCC diagnostic ignored "-Wnull-dereference"

// fast1 below opset 22: ONNX allows bfloat16 for Conv, the pools, the normalisations, the
// RNNs and about 40 more ops only from opset 22, so a low graph holding such an op is
// raised there (one without is left as written: the raise would gain nothing) (the high
// graph keeps the model's opset and IR version; the low graph keeps the graph inputs and
// outputs). A model whose raise is refused keeps its opset, and the report says which
// nodes stayed float32 for it and why. An explicit --target-opset is the user's choice.
// fast below opset 15 likewise, for BatchNormalization alone: its statistics stay float32
// (SPEC 2), and before opset 15 its schema ties them, scale and bias to the input's type, so
// every BatchNormalization stayed float32 and the activations after it followed (ppocr_cls at
// opset 9: 82 of 216 float nodes low; raised, 163 of 165, with the held-out error of the
// peers bench 8.0e-6 against 6.1e-6, tests/bench/README.md).

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

namespace {

bool holds_batch_norm(const onnx::ModelProto& model) {
  bool found = false;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      found = found || ((node.domain().empty() || node.domain() == "ai.onnx") &&
                        node.op_type() == "BatchNormalization");
    }
  });
  return found;
}

// `low` raised to `target` (checked and typed again), or false with `low` as it was.
bool raise_to(onnx::ModelProto& low, int64_t target, nlohmann::json& adapted, std::string& why) {
  onnx::ModelProto raised = low; // weights are in the store: metadata only
  try {
    auto report = opset::raise_opset(raised, target);
    check::check_and_infer(raised, check::Checker::after);
    low = std::move(raised);
    adapted = report.adapted;
    return true;
  } catch (const check::InferenceCrash&) {
    throw;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
}

// fast: a float16 low graph below opset 15 holding a BatchNormalization, raised to 15.
nlohmann::json raise_float16(onnx::ModelProto& low, const CompileOptions& options,
                             int64_t opset, LowGraphRaise raise) {
  if (opset == 0 || opset >= k_float16_opset || options.target_opset != 0 ||
      raise == LowGraphRaise::no || !holds_batch_norm(low)) {
    return nullptr;
  }
  nlohmann::json adapted;
  std::string why;
  if (!raise_to(low, k_float16_opset, adapted, why)) {
    return nullptr; // as written: the hint (opset_hint.h) finds the same refusal
  }
  return {{"model", opset}, {"low_graph", k_float16_opset}, {"raised", true}, {"adapted", adapted}};
}

} // namespace

nlohmann::json raise_low_graph(onnx::ModelProto& low, const CompileOptions& options,
                               LowPrecision low_type, LowGraphRaise raise) {
  const int64_t opset = opset::default_opset(low);
  if (low_type == LowPrecision::float16) {
    return raise_float16(low, options, opset, raise);
  }
  if (opset == 0 || opset >= k_bfloat16_opset) {
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
  nlohmann::json adapted;
  std::string why;
  if (!raise_to(low, k_bfloat16_opset, adapted, why)) {
    return kept(low, opset, "raising to opset 22 is refused: " + why);
  }
  return {{"model", opset}, {"low_graph", k_bfloat16_opset}, {"raised", true}, {"adapted", adapted}};
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
    const auto to = opset.at("low_graph").get<int64_t>();
    return "opset: low graph raised from " + std::to_string(from) + " to " + std::to_string(to) +
           (to == k_float16_opset
                ? " (BatchNormalization float16 with float32 statistics)"
                : " (bfloat16 for Conv, pools, normalisations and RNNs)") +
           "; high graph at " + std::to_string(from);
  }
  if (!opset.contains("schema_float32")) {
    return {};
  }
  return "schema at opset " + std::to_string(from) + ": " + low_graph_opset_held(opset) +
         " stay float32; --target-opset 22 lowers them (" + opset.at("why").get<std::string>() +
         ")";
}

} // namespace npucc::precision

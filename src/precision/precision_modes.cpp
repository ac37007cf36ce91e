#include "precision/precision_modes.h"

#include "model/graph_walk.h"
#include "npucc/error.h"

namespace npucc::precision {

// What each Ascend precision mode means for an ONNX graph. Ascend's words (research/
// ascend.md, precision.md §5) talk about "cube" (matrix) and "vector" ops on its NPU; npucc
// maps cube ops to its allow list (MatMul, Gemm, Conv, ConvTranspose, Einsum, LSTM, GRU,
// RNN) and every decision is still checked against the op's schema at the model's opset.
//
// precision_mode               ONNX graph
// -------------------------------------------------------------------------------------
// (empty)                      original types
// must_keep_origin_dtype       original types
// force_fp32                   original types; refused when the model computes in float16
//                              or bfloat16 (npucc lowers precision, it never raises it)
// cube_fp16in_fp32out          as force_fp32: ONNX matrix ops tie input and output types, so
//                              "float16 in, float32 out" cannot be written; Ascend's own
//                              fallback order then picks float32 in, float32 out
// allow_fp32_to_fp16           matrix ops float16, all else keeps float32 (policy matrix_only)
// allow_fp32_to_bf16           matrix ops bfloat16, all else float32
// force_fp16                   every op whose schema takes float16 (policy force): deny-list
//                              ops too; shape arithmetic, pinned inputs, overflowing
//                              constants and the graph's input/output types are still kept
// allow_mix_precision          mixed float16 (allow/infer/clear/deny lists)
// allow_mix_precision_fp16     mixed float16
// allow_mix_precision_bf16     mixed bfloat16
//
// precision_mode_v2
// fp16                         as force_fp16; refused on a model with bfloat16 tensors
//                              (Ascend converts them too; npucc only lowers float32)
// origin                       original types
// cube_fp16in_fp32out          as precision_mode cube_fp16in_fp32out
// mixed_float16                mixed float16
// mixed_bfloat16               mixed bfloat16

namespace {

ModePlan original() {
  return {};
}

ModePlan lowered(LowPrecision low, Policy policy, std::string precision, std::string note = {}) {
  ModePlan plan;
  plan.rewrite = true;
  plan.low = low;
  plan.policy = policy;
  plan.precision = std::move(precision);
  plan.note = std::move(note);
  return plan;
}

bool model_has(const onnx::ModelProto& model, int32_t elem_type) {
  bool found = false;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& value : *list) {
        found = found || (value.type().has_tensor_type() &&
                          value.type().tensor_type().elem_type() == elem_type);
      }
    }
    for (const auto& init : graph.initializer()) {
      found = found || init.data_type() == elem_type;
    }
  });
  return found;
}

void refuse_if_low(const std::string& option, const onnx::ModelProto& model) {
  for (int32_t type : {onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16}) {
    if (model_has(model, type)) {
      throw usage_error(
          option + ": the model computes in " +
              std::string(type == onnx::TensorProto::FLOAT16 ? "float16" : "bfloat16") +
              " and npucc does not raise precision to float32",
          "use must_keep_origin_dtype (v2: origin) to keep the model's types");
    }
  }
}

} // namespace

ModePlan plan_for_precision_mode(const PrecisionOptions& options, const onnx::ModelProto& model) {
  const auto& v1 = options.precision_mode;
  const auto& v2 = options.precision_mode_v2;
  if (!v1.empty() && !v2.empty()) {
    throw usage_error("--precision-mode " + v1 + " and --precision-mode-v2 " + v2 +
                      " cannot be given together");
  }
  const std::string cube_note = "ONNX matrix ops tie input and output types; float32 in, "
                                "float32 out (Ascend's fallback) is used";
  if (!v1.empty()) {
    const std::string option = "--precision-mode " + v1;
    if (v1 == "must_keep_origin_dtype") {
      return original();
    }
    if (v1 == "force_fp32" || v1 == "cube_fp16in_fp32out") {
      refuse_if_low(option, model);
      ModePlan plan = original();
      plan.note = v1 == "cube_fp16in_fp32out" ? cube_note : "";
      return plan;
    }
    if (v1 == "allow_fp32_to_fp16") {
      return lowered(LowPrecision::float16, Policy::matrix_only, "matrix_float16");
    }
    if (v1 == "allow_fp32_to_bf16") {
      return lowered(LowPrecision::bfloat16, Policy::matrix_only, "matrix_bfloat16");
    }
    if (v1 == "force_fp16") {
      return lowered(LowPrecision::float16, Policy::force, "float16");
    }
    if (v1 == "allow_mix_precision" || v1 == "allow_mix_precision_fp16") {
      return lowered(LowPrecision::float16, Policy::mixed, "mixed_float16");
    }
    if (v1 == "allow_mix_precision_bf16") {
      return lowered(LowPrecision::bfloat16, Policy::mixed, "mixed_bfloat16");
    }
    throw usage_error("--precision-mode: unknown value \"" + v1 + "\"");
  }
  if (!v2.empty()) {
    const std::string option = "--precision-mode-v2 " + v2;
    if (v2 == "origin") {
      return original();
    }
    if (v2 == "cube_fp16in_fp32out") {
      refuse_if_low(option, model);
      ModePlan plan = original();
      plan.note = cube_note;
      return plan;
    }
    if (v2 == "fp16") {
      if (model_has(model, onnx::TensorProto::BFLOAT16)) {
        throw usage_error(option + ": the model has bfloat16 tensors and npucc only lowers "
                                   "float32 ones",
                          "use mixed_float16, or convert the model's bfloat16 tensors first");
      }
      return lowered(LowPrecision::float16, Policy::force, "float16");
    }
    if (v2 == "mixed_float16") {
      return lowered(LowPrecision::float16, Policy::mixed, "mixed_float16");
    }
    if (v2 == "mixed_bfloat16") {
      return lowered(LowPrecision::bfloat16, Policy::mixed, "mixed_bfloat16");
    }
    throw usage_error("--precision-mode-v2: unknown value \"" + v2 + "\"");
  }
  return original();
}

ModePlan plan_for_accelerate_mode(const AccelerateTrainMode& mode) {
  return mode.low == LowPrecision::float16
             ? lowered(LowPrecision::float16, Policy::mixed, "mixed_float16")
             : lowered(LowPrecision::bfloat16, Policy::mixed, "mixed_bfloat16");
}

} // namespace npucc::precision

#include "schemas/inference_ops.h"
#include "schemas/inference_util.h"

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;

// The element type a LabelEncoder-4 `prefix`_* attribute names (keys_, values_), or 0 if none
// is set: a *_tensor attribute's own data type, else the type of the list given.
int32_t encoder_type(InferenceContext& ctx, const std::string& prefix) {
  if (const auto* tensor = ctx.getAttribute(prefix + "tensor")) {
    return tensor->t().data_type();
  }
  if (ctx.getAttribute(prefix + "strings") != nullptr) {
    return onnx::TensorProto::STRING;
  }
  if (ctx.getAttribute(prefix + "int64s") != nullptr) {
    return onnx::TensorProto::INT64;
  }
  if (ctx.getAttribute(prefix + "floats") != nullptr) {
    return onnx::TensorProto::FLOAT;
  }
  return 0;
}

// LabelEncoder-4: Y has X's shape and the element type of the values_* attribute, which
// may now be a tensor of any T2 type; X must have the keys' type, a default_tensor the values'.
void infer_label_encoder_4(InferenceContext& ctx) {
  const int32_t values = encoder_type(ctx, "values_");
  if (values == 0) {
    fail_type_inference("LabelEncoder: one of the values_* attributes must be set");
  }
  const int32_t keys = encoder_type(ctx, "keys_");
  const auto* input = ctx.getInputType(0);
  if (keys != 0 && input != nullptr && input->tensor_type().elem_type() != 0 &&
      input->tensor_type().elem_type() != keys) {
    fail_type_inference("LabelEncoder: input type ", input->tensor_type().elem_type(),
                        " differs from the keys' type ", keys);
  }
  if (const auto* fallback = ctx.getAttribute("default_tensor");
      fallback != nullptr && fallback->t().data_type() != values) {
    fail_type_inference("LabelEncoder: default_tensor's type differs from the values' type");
  }
  onnx::updateOutputElemType(ctx, 0, values);
  onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// TreeEnsemble-5: X [N, F] -> Y [N, n_targets] of X's type; the split values and leaf weights
// must have that type too.
void infer_tree_ensemble_5(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int32_t type = ctx.getOutputType(0)->tensor_type().elem_type();
  for (const char* name : {"nodes_splits", "leaf_weights"}) {
    const auto* attribute = ctx.getAttribute(name);
    if (attribute != nullptr && type != 0 && attribute->t().data_type() != type) {
      fail_type_inference("TreeEnsemble: ", name, " must have the input's element type");
    }
  }
  if (!onnx::hasInputShape(ctx, 0) || onnx::getInputShape(ctx, 0).dim_size() != 2) {
    return;
  }
  auto* output = fresh_output_shape(ctx, 0);
  *output->add_dim() = onnx::getInputShape(ctx, 0).dim(0);
  const auto* targets = ctx.getAttribute("n_targets");
  add_dim(output, targets != nullptr && targets->has_i() ? std::optional<int64_t>(targets->i())
                                                         : std::nullopt);
}

// A deprecated version: ONNX's checker and inference refuse the node before inferring.
void infer_nothing(InferenceContext&) {}

} // namespace

std::map<std::string, Inference> ml_inference_table() {
  const char* ml = "ai.onnx.ml";
  return {
      {version_key(ml, "LabelEncoder", 4), {infer_label_encoder_4, {}}},
      {version_key(ml, "TreeEnsemble", 5), {infer_tree_ensemble_5, {}}},
      {version_key(ml, "TreeEnsembleClassifier", 5), {infer_nothing, {}}},
      {version_key(ml, "TreeEnsembleRegressor", 5), {infer_nothing, {}}},
  };
}

} // namespace npucc::schemas

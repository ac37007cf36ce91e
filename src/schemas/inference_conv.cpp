#include "schemas/inference_ops.h"

#include <onnx/defs/shape_inference.h>
#include <utility>
#include <vector>

namespace onnx {
// Exported by libonnx 1.12 (onnx/defs/nn/defs.cc), not declared in its headers: the output
// spatial dims of Conv and the pools from kernel, strides, pads, dilations, auto_pad and
// ceil_mode; with input2Idx >= 0, the output channels and a missing kernel_shape from W.
void convPoolShapeInference(InferenceContext& ctx, bool use_dilation, bool require_kernel_shape,
                            int input1Idx, int input2Idx);
} // namespace onnx

namespace npucc::schemas {

namespace {

// With ceil_mode, a last window that would start in the right padding is dropped (ONNX's
// pooling docs from opset 19, ONNX Runtime): 4 wide, kernel 2, stride 2, pads (0, 1) gives 2,
// not the 3 of ONNX 1.12's formula. Applied to outputs [0, count).
void drop_windows_in_right_padding(onnx::InferenceContext& ctx, size_t count) {
  if (onnx::getAttribute(ctx, "ceil_mode", 0) == 0 || !onnx::hasInputShape(ctx, 0)) {
    return;
  }
  const auto auto_pad = onnx::getAttribute(ctx, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    return; // SAME_*: ceil(in / stride), no window starts in the padding
  }
  const auto& input = onnx::getInputShape(ctx, 0);
  const int spatial = input.dim_size() - 2;
  std::vector<int64_t> strides, pads;
  onnx::getRepeatedAttribute(ctx, "strides", strides);
  if (auto_pad == "NOTSET") {
    onnx::getRepeatedAttribute(ctx, "pads", pads);
  }
  for (size_t output = 0; output < count && output < ctx.getNumOutputs(); ++output) {
    auto* type = ctx.getOutputType(output);
    if (!type->tensor_type().has_shape() || type->tensor_type().shape().dim_size() != spatial + 2) {
      continue;
    }
    auto* shape = type->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < spatial; ++i) {
      auto* dim = shape->mutable_dim(i + 2);
      const auto& in = input.dim(i + 2);
      if (!dim->has_dim_value() || !in.has_dim_value() || dim->dim_value() < 2) {
        continue;
      }
      const int64_t stride = strides.empty() ? 1 : strides[static_cast<size_t>(i)];
      const int64_t pad_begin = pads.empty() ? 0 : pads[static_cast<size_t>(i)];
      if ((dim->dim_value() - 1) * stride >= in.dim_value() + pad_begin) {
        dim->set_dim_value(dim->dim_value() - 1);
      }
    }
  }
}

} // namespace

// AveragePool-19 and LpPool-18 added dilations: ONNX 1.12's pooling inference handles them
// when asked to (MaxPool-12 uses it so), where LpPool-11's inference ignores them.
Inference pool_with_dilations() {
  return {[](onnx::InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            onnx::convPoolShapeInference(ctx, true, true, 0, 1);
            drop_windows_in_right_padding(ctx, 1);
          },
          {}};
}

onnx::InferenceFunction with_ceil_mode_rule(onnx::InferenceFunction infer, size_t outputs) {
  return [infer = std::move(infer), outputs](onnx::InferenceContext& ctx) {
    infer(ctx);
    drop_windows_in_right_padding(ctx, outputs);
  };
}

// MaxPool-22 widened MaxPool-12's types; its inference (Y, and Indices of Y's shape) is kept,
// with the ceil_mode rule of the later docs.
Inference max_pool_22() {
  auto base = inherit("MaxPool", 12);
  return {with_ceil_mode_rule(base.infer, 2), base.propagate};
}

// DeformConv 19 and 22: Y's shape is Conv's (kernel from W or kernel_shape, strides, pads,
// dilations); offset, B and mask do not change it.
Inference deform_conv() {
  return {[](onnx::InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            onnx::convPoolShapeInference(ctx, true, false, 0, 1);
          },
          {}};
}

} // namespace npucc::schemas

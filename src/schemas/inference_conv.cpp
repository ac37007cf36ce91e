#include "schemas/inference_ops.h"

#include <onnx/defs/shape_inference.h>

namespace onnx {
// Exported by libonnx 1.12 (onnx/defs/nn/defs.cc), not declared in its headers: the output
// spatial dims of Conv and the pools from kernel, strides, pads, dilations, auto_pad and
// ceil_mode; with input2Idx >= 0, the output channels and a missing kernel_shape from W.
void convPoolShapeInference(InferenceContext& ctx, bool use_dilation, bool require_kernel_shape,
                            int input1Idx, int input2Idx);
} // namespace onnx

namespace npucc::schemas {

// AveragePool-19 and LpPool-18 added dilations: ONNX 1.12's pooling inference handles them
// when asked to (MaxPool-12 uses it so), where LpPool-11's inference ignores them.
Inference pool_with_dilations() {
  return {[](onnx::InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            onnx::convPoolShapeInference(ctx, true, true, 0, 1);
          },
          {}};
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

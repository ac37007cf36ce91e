#include "schemas/inference_ops.h"

#include <onnx/defs/shape_inference.h>

namespace onnx {
// Exported by libonnx 1.12 (onnx/defs/nn/defs.cc), not declared in its headers.
void convPoolShapeInference(InferenceContext& ctx, bool use_dilation, bool require_kernel_shape,
                            int input1Idx, int input2Idx);
} // namespace onnx

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;

// Type from input 0 and, when input 0's rank is known, an output of that rank whose dims
// are left unknown: what can be said without the op's attribute and constant-input math.
void type_and_rank_of_first_input(InferenceContext& ctx, size_t output) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, output);
  if (!onnx::hasInputShape(ctx, 0)) {
    return;
  }
  auto* shape = ctx.getOutputType(output)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int i = 0; i < onnx::getInputShape(ctx, 0).dim_size(); ++i) {
    shape->add_dim();
  }
}

Inference type_and_rank() {
  return {[](InferenceContext& ctx) { type_and_rank_of_first_input(ctx, 0); }, {}};
}

} // namespace

Inference pad_with_axes() {
  return type_and_rank();
}

Inference split_with_num_outputs() {
  return {[](InferenceContext& ctx) {
            for (size_t i = 0; i < ctx.getNumOutputs(); ++i) {
              type_and_rank_of_first_input(ctx, i);
            }
          },
          {}};
}

Inference resize_with_axes() {
  return type_and_rank();
}

Inference center_crop_pad() {
  return type_and_rank();
}

Inference col2im() {
  return {[](InferenceContext& ctx) { onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0); }, {}};
}

// AveragePool-19 added dilations: ONNX 1.12's pooling inference already handles them
// (MaxPool-12 uses it so).
Inference pool_with_dilations() {
  return {[](InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            onnx::convPoolShapeInference(ctx, true, true, 0, 1);
          },
          {}};
}

Inference deform_conv() {
  return type_and_rank();
}

Inference affine_grid() {
  return {[](InferenceContext& ctx) { onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0); }, {}};
}

Inference dft_with_inputs() {
  return type_and_rank();
}

Inference grid_sample() {
  return type_and_rank();
}

// Attention 23 to 25: Y and qk_matmul_output take Q's type, present_key K's, present_value V's.
Inference attention() {
  return {[](InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            if (ctx.getNumOutputs() > 1) {
              onnx::propagateElemTypeFromInputToOutput(ctx, 1, 1);
            }
            if (ctx.getNumOutputs() > 2) {
              onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
            }
            if (ctx.getNumOutputs() > 3) {
              onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
            }
          },
          {}};
}

} // namespace npucc::schemas

#include "schemas/inference_ops.h"

#include <onnx/defs/shape_inference.h>

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;

int64_t int_attribute(const InferenceContext& ctx, const char* name, int64_t fallback) {
  const auto* attribute = ctx.getAttribute(name);
  return attribute != nullptr && attribute->has_i() ? attribute->i() : fallback;
}

bool has_input_type(const InferenceContext& ctx, size_t index) {
  return ctx.getNumInputs() > index && ctx.getInputType(index) != nullptr &&
         ctx.getInputType(index)->has_tensor_type();
}

void set_elem_type(InferenceContext& ctx, int32_t elem_type) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(elem_type);
}

} // namespace

// QuantizeLinear 19 to 25: y's type is output_dtype (21+) when set, else y_zero_point's,
// else uint8; its shape is x's.
Inference quantize_linear() {
  return {[](InferenceContext& ctx) {
            const int64_t output_dtype = int_attribute(ctx, "output_dtype", 0);
            if (output_dtype != 0) {
              set_elem_type(ctx, static_cast<int32_t>(output_dtype));
            } else if (has_input_type(ctx, 2)) {
              onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
            } else {
              set_elem_type(ctx, onnx::TensorProto::UINT8);
            }
            onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
          },
          {}};
}

// DequantizeLinear 19 to 25: y's type is output_dtype (23+) when set, else x_scale's; its
// shape is x's.
Inference dequantize_linear() {
  return {[](InferenceContext& ctx) {
            const int64_t output_dtype = int_attribute(ctx, "output_dtype", 0);
            if (output_dtype != 0) {
              set_elem_type(ctx, static_cast<int32_t>(output_dtype));
            } else {
              onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
            }
            onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
          },
          {}};
}

} // namespace npucc::schemas

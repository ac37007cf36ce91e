#include "schemas/inference_ops.h"

#include <onnx/defs/shape_inference.h>

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;

void set_output_type(InferenceContext& ctx, size_t output, int32_t elem_type) {
  ctx.getOutputType(output)->mutable_tensor_type()->set_elem_type(elem_type);
}

} // namespace

Inference same_as_first_input() {
  return {onnx::propagateShapeAndTypeFromFirstInput, {}};
}

Inference elementwise_broadcast() {
  return {[](InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            std::vector<const onnx::TensorShapeProto*> shapes;
            for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
              if (!onnx::hasInputShape(ctx, i)) {
                return;
              }
              shapes.push_back(&onnx::getInputShape(ctx, i));
            }
            onnx::multidirectionalBroadcastShapeInference(
                shapes, *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
          },
          {}};
}

// OptionalGetElement-18 takes an optional or, since 18, a plain tensor or sequence, which
// it passes through.
Inference optional_get_element() {
  return {[](InferenceContext& ctx) {
            const auto* input = ctx.getInputType(0);
            if (input == nullptr) {
              fail_type_inference("OptionalGetElement: input 0 has no type");
            }
            if (input->has_optional_type()) {
              *ctx.getOutputType(0) = input->optional_type().elem_type();
            } else {
              *ctx.getOutputType(0) = *input;
            }
          },
          {}};
}

Inference optional_has_element() {
  return {[](InferenceContext& ctx) {
            set_output_type(ctx, 0, onnx::TensorProto::BOOL);
            ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
          },
          {}};
}

Inference regex_full_match() {
  return {[](InferenceContext& ctx) {
            set_output_type(ctx, 0, onnx::TensorProto::BOOL);
            onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
          },
          {}};
}

// StringSplit-20: Y adds one dimension (the longest split, unknown here); Z, the number of
// pieces per string, has the input's shape.
Inference string_split() {
  return {[](InferenceContext& ctx) {
            set_output_type(ctx, 0, onnx::TensorProto::STRING);
            set_output_type(ctx, 1, onnx::TensorProto::INT64);
            if (!onnx::hasInputShape(ctx, 0)) {
              return;
            }
            const auto& shape = onnx::getInputShape(ctx, 0);
            auto* y = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
            *y = shape;
            y->add_dim();
            *ctx.getOutputType(1)->mutable_tensor_type()->mutable_shape() = shape;
          },
          {}};
}

// ImageDecoder-20: an HWC uint8 image whose size is known only once decoded.
Inference image_decoder() {
  return {[](InferenceContext& ctx) {
            set_output_type(ctx, 0, onnx::TensorProto::UINT8);
            auto* shape = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
            for (int i = 0; i < 3; ++i) {
              shape->add_dim();
            }
          },
          {}};
}

// BitCast-26: the same bits read as `to`, which must be as wide: the shape is kept.
Inference bit_cast() {
  return {[](InferenceContext& ctx) {
            const auto* to = ctx.getAttribute("to");
            if (to == nullptr || !to->has_i()) {
              fail_type_inference("BitCast: attribute 'to' is required");
            }
            set_output_type(ctx, 0, static_cast<int32_t>(to->i()));
            onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
          },
          {}};
}

// RMSNormalization-23: Y has X's shape and scale's element type (V).
Inference rms_normalization() {
  return {[](InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
            onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
          },
          {}};
}

// Cast 19 to 25: Cast-13's inference refuses a `to` that ONNX 1.12's own enum lacks (float8,
// int4, ...: "does not specify a valid type"); the element type is taken as given here, any
// TensorProto.DataType up to IR 13's last (26, int2). Cast-13's data propagation (shapes
// through Cast) is kept.
Inference cast() {
  constexpr int64_t k_last_type = 26;
  const auto base = inherit("Cast", 13);
  return {[](InferenceContext& ctx) {
            const auto* to = ctx.getAttribute("to");
            if (to == nullptr || !to->has_i() || to->i() < 1 || to->i() > k_last_type) {
              fail_type_inference("Cast: attribute 'to' must name an element type");
            }
            set_output_type(ctx, 0, static_cast<int32_t>(to->i()));
            onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
          },
          base.propagate};
}

// Constant 19 to 25: ONNX 1.12's inference hands a Constant's `value` tensor to the nodes that
// read constant inputs, but not `value_ints`, which exporters also write for axes, pads and
// sizes; as data propagation, those values reach them too (ctx.getSymbolicInput).
Inference constant() {
  const auto base = inherit("Constant", 13);
  return {base.infer, [](onnx::DataPropagationContext& ctx) {
            // Shape-like lists are short; a long table is not worth copying into dims.
            constexpr int k_max_values = 256;
            const auto* ints = ctx.getAttribute("value_ints");
            if (ints == nullptr || ints->ints_size() > k_max_values) {
              return;
            }
            onnx::TensorShapeProto values;
            for (int64_t value : ints->ints()) {
              values.add_dim()->set_dim_value(value);
            }
            ctx.addOutputData(0, std::move(values));
          }};
}

} // namespace npucc::schemas

#include "schemas/inference_ops.h"
#include "schemas/inference_util.h"
#include "schemas/propagated_inputs.h"

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;
using onnx::TensorShapeProto;

// Pad 18 to 25: pads (input 1) holds [begin..., end...] for the axes (input 3, default all).
void infer_pad(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto pads = constant_ints(ctx, 1);
  if (!onnx::hasInputShape(ctx, 0)) {
    // Without axes, pads has two entries per dim: the rank is known, not the dims.
    if (pads && !has_input(ctx, 3)) {
      set_unknown_dims(fresh_output_shape(ctx, 0), static_cast<int64_t>(pads->size() / 2));
    }
    return;
  }
  const auto& input = onnx::getInputShape(ctx, 0);
  const int64_t rank = input.dim_size();
  auto* output = fresh_output_shape(ctx, 0);
  std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{};
  if (has_input(ctx, 3)) {
    axes = constant_ints(ctx, 3);
  }
  if (!axes) {
    set_unknown_dims(output, rank); // which dims change is known only at run time
    return;
  }
  const auto padded = normalized_axes(*axes, rank, "Pad");
  if (pads && pads->size() != 2 * padded.size()) {
    fail_shape_inference("Pad: 'pads' has ", pads->size(), " values for ", padded.size(),
                         " axes (two per axis)");
  }
  *output = input;
  const auto count = padded.size();
  for (size_t i = 0; i < count; ++i) {
    auto* dim = output->mutable_dim(static_cast<int>(padded[i]));
    if (!pads) {
      dim->Clear();
      continue;
    }
    const int64_t added = (*pads)[i] + (*pads)[i + count];
    if (added == 0) {
      continue; // keeps a symbolic dim too
    }
    const auto old_value = dim_value(*dim);
    dim->Clear();
    if (old_value) {
      if (*old_value + added < 0) {
        fail_shape_inference("Pad: axis ", padded[i], " of size ", *old_value, " cannot lose ",
                             -added);
      }
      dim->set_dim_value(*old_value + added);
    }
  }
}

// The sizes of Split-18's outputs along the axis from num_outputs: chunks of ceil(dim / n),
// the last smaller (dim 5 in 4 chunks of 2 is refused, as ONNX Runtime refuses it).
std::vector<int64_t> split_sizes(int64_t dim, int64_t outputs) {
  if (outputs <= 0) {
    fail_shape_inference("Split: needs at least one output");
  }
  const int64_t chunk = (dim + outputs - 1) / outputs;
  const int64_t last = dim - chunk * (outputs - 1);
  if (last < 0) {
    fail_shape_inference("Split: dim ", dim, " cannot be split into ", outputs, " chunks of ",
                         chunk);
  }
  std::vector<int64_t> sizes(static_cast<size_t>(outputs), chunk);
  sizes.back() = last;
  return sizes;
}

// Split-18: sizes from the `split` input, else from num_outputs.
std::optional<std::vector<int64_t>> split_18_sizes(InferenceContext& ctx,
                                                   const TensorShapeProto::Dimension& dim) {
  const auto outputs = static_cast<int64_t>(ctx.getNumOutputs());
  const auto* num_outputs = ctx.getAttribute("num_outputs");
  if (has_input(ctx, 1)) {
    if (num_outputs != nullptr) {
      fail_shape_inference("Split: give either the 'split' input or 'num_outputs', not both");
    }
    auto sizes = constant_ints(ctx, 1);
    if (sizes && static_cast<int64_t>(sizes->size()) != outputs) {
      fail_shape_inference("Split: 'split' has ", sizes->size(), " sizes for ", outputs,
                           " outputs");
    }
    return sizes;
  }
  // Split-13 split evenly without either; Split-18 asks for one (ONNX and ONNX Runtime refuse
  // the node without).
  if (num_outputs == nullptr) {
    fail_shape_inference("Split: give the 'split' input or the 'num_outputs' attribute");
  }
  if (num_outputs->i() != outputs) {
    fail_shape_inference("Split: num_outputs is ", num_outputs->i(), " but the node has ", outputs,
                         " outputs");
  }
  if (!dim.has_dim_value()) {
    return std::nullopt;
  }
  return split_sizes(dim.dim_value(), outputs);
}

void infer_split(InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  }
  if (!onnx::hasInputShape(ctx, 0)) {
    return;
  }
  const auto& input = onnx::getInputShape(ctx, 0);
  const int axis = static_cast<int>(
      normalized_axis(onnx::getAttribute(ctx, "axis", 0), input.dim_size(), "Split"));
  const auto sizes = split_18_sizes(ctx, input.dim(axis));
  if (sizes && input.dim(axis).has_dim_value()) {
    int64_t total = 0;
    for (int64_t size : *sizes) {
      total += size;
    }
    if (total != input.dim(axis).dim_value()) {
      fail_shape_inference("Split: sizes add up to ", total, ", not to dim ",
                           input.dim(axis).dim_value());
    }
  }
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i) {
    auto* output = fresh_output_shape(ctx, i);
    *output = input;
    output->mutable_dim(axis)->Clear();
    if (sizes) {
      output->mutable_dim(axis)->set_dim_value((*sizes)[i]);
    }
  }
}

// CenterCropPad-18: the dims at `axes` (default all) become `shape`'s values, the others stay.
void infer_center_crop_pad(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) {
    return;
  }
  const auto& input = onnx::getInputShape(ctx, 0);
  std::vector<int64_t> axes;
  onnx::getRepeatedAttribute(ctx, "axes", axes);
  const auto cropped = normalized_axes(axes, input.dim_size(), "CenterCropPad");
  const auto shape = constant_ints(ctx, 1);
  if (shape && shape->size() != cropped.size()) {
    fail_shape_inference("CenterCropPad: 'shape' has ", shape->size(), " values for ",
                         cropped.size(), " axes");
  }
  auto* output = fresh_output_shape(ctx, 0);
  *output = input;
  for (size_t i = 0; i < cropped.size(); ++i) {
    auto* dim = output->mutable_dim(static_cast<int>(cropped[i]));
    dim->Clear();
    if (shape) {
      dim->set_dim_value((*shape)[i]);
    }
  }
}

// The length of 1-D input `input` when its shape says it.
std::optional<int64_t> vector_length(InferenceContext& ctx, size_t input) {
  if (!onnx::hasInputShape(ctx, input)) {
    return std::nullopt;
  }
  const auto& shape = onnx::getInputShape(ctx, input);
  if (shape.dim_size() != 1) {
    return std::nullopt;
  }
  return dim_value(shape.dim(0));
}

// Col2Im-18: [N, C * prod(block_shape), L] -> [N, C, *image_shape].
void infer_col2im(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto image = constant_ints(ctx, 1);
  const auto block = constant_ints(ctx, 2);
  const auto spatial =
      image ? std::optional<int64_t>(static_cast<int64_t>(image->size())) : vector_length(ctx, 1);
  if (!spatial) {
    return;
  }
  auto* output = fresh_output_shape(ctx, 0);
  const TensorShapeProto* input =
      onnx::hasInputShape(ctx, 0) ? &onnx::getInputShape(ctx, 0) : nullptr;
  if (input != nullptr && input->dim_size() != 3) {
    fail_shape_inference("Col2Im: input must be 3-D [N, C * prod(block_shape), L]");
  }
  if (input != nullptr) {
    *output->add_dim() = input->dim(0);
  } else {
    output->add_dim();
  }
  std::optional<int64_t> channels;
  if (input != nullptr && block && input->dim(1).has_dim_value()) {
    int64_t block_size = 1;
    for (int64_t b : *block) {
      block_size *= b;
    }
    if (block_size <= 0 || input->dim(1).dim_value() % block_size != 0) {
      fail_shape_inference("Col2Im: input dim 1 (", input->dim(1).dim_value(),
                           ") is not a multiple of prod(block_shape) (", block_size, ")");
    }
    channels = input->dim(1).dim_value() / block_size;
  }
  add_dim(output, channels);
  for (int64_t i = 0; i < *spatial; ++i) {
    add_dim(output,
            image ? std::optional<int64_t>((*image)[static_cast<size_t>(i)]) : std::nullopt);
  }
}

} // namespace

Inference pad_with_axes() {
  return {infer_pad, {}};
}

Inference split_with_num_outputs() {
  return {infer_split, {}};
}

Inference center_crop_pad() {
  return {infer_center_crop_pad, {}};
}

Inference col2im() {
  return {infer_col2im, {}};
}

// Reduce* from opset 18 (ReduceMax/ReduceMin 20) take axes as input 1, as ReduceSum did from
// 13: ReduceSum-13's inference reads that input (and noop_with_empty_axes), while the other
// Reduce*-13 read an `axes` attribute these versions no longer have. It reads initializers
// only: axes from data propagation (a Constant's value_ints) are handed to it too.
Inference reduce_with_axes_input() {
  auto base = inherit("ReduceSum", 13);
  return {with_propagated_inputs(base.infer), base.propagate};
}

} // namespace npucc::schemas

#include "schemas/inference_ops.h"
#include "schemas/inference_util.h"

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;
using onnx::TensorShapeProto;

const TensorShapeProto* input_shape(InferenceContext& ctx, size_t input) {
  return onnx::hasInputShape(ctx, input) ? &onnx::getInputShape(ctx, input) : nullptr;
}

// AffineGrid-20: size [N, C, H, W] -> grid [N, H, W, 2]; [N, C, D, H, W] -> [N, D, H, W, 3].
void infer_affine_grid(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto size = constant_ints(ctx, 1);
  std::optional<int64_t> size_rank;
  if (size) {
    size_rank = static_cast<int64_t>(size->size());
  } else if (const auto* shape = input_shape(ctx, 1); shape && shape->dim_size() == 1) {
    size_rank = dim_value(shape->dim(0));
  }
  // theta is [N, 2, 3] for 2-D and [N, 3, 4] for 3-D: it says the rank too.
  const auto* theta = input_shape(ctx, 0);
  if (!size_rank && theta && theta->dim_size() == 3 && theta->dim(1).has_dim_value()) {
    size_rank = theta->dim(1).dim_value() + 2;
  }
  if (!size_rank) {
    return;
  }
  if (*size_rank != 4 && *size_rank != 5) {
    fail_shape_inference("AffineGrid: 'size' must have 4 (2-D) or 5 (3-D) values, not ",
                         *size_rank);
  }
  auto* output = fresh_output_shape(ctx, 0);
  if (size) {
    output->add_dim()->set_dim_value((*size)[0]);
  } else if (theta && theta->dim_size() == 3) {
    *output->add_dim() = theta->dim(0);
  } else {
    output->add_dim();
  }
  for (int64_t i = 2; i < *size_rank; ++i) {
    add_dim(output, size ? std::optional<int64_t>((*size)[static_cast<size_t>(i)]) : std::nullopt);
  }
  output->add_dim()->set_dim_value(*size_rank - 2);
}

// GridSample 20/22, N-D: X [N, C, D1..Dr], grid [N, D1_out..Dr_out, r] -> [N, C, D1_out..Dr_out].
void infer_grid_sample(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* x = input_shape(ctx, 0);
  const auto* grid = input_shape(ctx, 1);
  if (x == nullptr && grid == nullptr) {
    return;
  }
  if (x != nullptr && grid != nullptr && x->dim_size() != grid->dim_size()) {
    fail_shape_inference("GridSample: X has rank ", x->dim_size(), " but grid has rank ",
                         grid->dim_size());
  }
  const int rank = x != nullptr ? x->dim_size() : grid->dim_size();
  if (rank < 3) {
    fail_shape_inference("GridSample: X must have rank >= 3, not ", rank);
  }
  auto* output = fresh_output_shape(ctx, 0);
  *output->add_dim() = x != nullptr ? x->dim(0) : grid->dim(0);
  if (x != nullptr) {
    *output->add_dim() = x->dim(1);
  } else {
    output->add_dim();
  }
  for (int i = 1; i < rank - 1; ++i) {
    if (grid != nullptr) {
      *output->add_dim() = grid->dim(i);
    } else {
      output->add_dim();
    }
  }
}

// DFT-20's axis (input 2, default -2): in [-r, -2] or [0, r - 2], the last dim holding the
// real and imaginary parts. Empty when the axis is not constant.
std::optional<int> dft_axis(InferenceContext& ctx, int rank) {
  int64_t axis = -2;
  if (has_input(ctx, 2)) {
    const auto values = constant_ints(ctx, 2);
    if (!values) {
      return std::nullopt;
    }
    if (values->size() != 1) {
      fail_shape_inference("DFT: 'axis' must be a scalar");
    }
    axis = values->front();
  }
  if (axis < 0) {
    axis += rank;
  }
  if (axis < 0 || axis > rank - 2) {
    fail_shape_inference("DFT: axis is out of range for rank ", rank,
                         " (the last dim is the complex part)");
  }
  return static_cast<int>(axis);
}

// DFT-20's length of the signal axis in the output, or empty when not known.
std::optional<int64_t> dft_output_length(InferenceContext& ctx,
                                         const TensorShapeProto::Dimension& signal, bool onesided,
                                         bool inverse) {
  std::optional<int64_t> length;
  if (has_input(ctx, 1)) {
    const auto values = constant_ints(ctx, 1);
    if (values && values->size() != 1) {
      fail_shape_inference("DFT: 'dft_length' must be a scalar");
    }
    if (values) {
      length = values->front();
    }
  } else if (signal.has_dim_value()) {
    // IRFFT's input holds the one-sided spectrum: the signal was 2 * (n - 1) long.
    length = onesided && inverse ? 2 * (signal.dim_value() - 1) : signal.dim_value();
  }
  if (length && onesided && !inverse) {
    return *length / 2 + 1;
  }
  return length;
}

// DFT-20: input [..., n, ..., 1 (real) or 2 (complex)]. The output is complex (last dim 2),
// its signal axis dft_length long, or floor(dft_length / 2) + 1 for a one-sided forward
// transform; an inverse one-sided transform (IRFFT) gives a real signal (last dim 1).
void infer_dft(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* input = input_shape(ctx, 0);
  if (input == nullptr) {
    return;
  }
  const int rank = input->dim_size();
  if (rank < 2) {
    fail_shape_inference("DFT: input must have rank >= 2, not ", rank);
  }
  const auto last = dim_value(input->dim(rank - 1));
  if (last && *last != 1 && *last != 2) {
    fail_shape_inference("DFT: the last dim must be 1 (real) or 2 (complex), not ", *last);
  }
  const bool onesided = onnx::getAttribute(ctx, "onesided", 0) != 0;
  const bool inverse = onnx::getAttribute(ctx, "inverse", 0) != 0;
  // RFFT takes a real signal, IRFFT a complex spectrum; the full transforms take either.
  if (onesided && last && *last != (inverse ? 2 : 1)) {
    fail_shape_inference(inverse ? "DFT: an inverse one-sided DFT needs complex input (last dim 2)"
                                 : "DFT: a one-sided DFT needs real input (last dim 1)");
  }
  auto* output = fresh_output_shape(ctx, 0);
  const auto axis = dft_axis(ctx, rank);
  if (!axis) {
    set_unknown_dims(output, rank - 1); // which dim changes is known only at run time
  } else {
    *output = *input;
    output->mutable_dim()->RemoveLast();
    auto* signal = output->mutable_dim(*axis);
    const auto length = dft_output_length(ctx, input->dim(*axis), onesided, inverse);
    signal->Clear();
    if (length) {
      signal->set_dim_value(*length);
    }
  }
  output->add_dim()->set_dim_value(onesided && inverse ? 1 : 2);
}

} // namespace

Inference affine_grid() {
  return {infer_affine_grid, {}};
}

Inference grid_sample() {
  return {infer_grid_sample, {}};
}

Inference dft_with_inputs() {
  return {infer_dft, {}};
}

} // namespace npucc::schemas

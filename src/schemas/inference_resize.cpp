#include "schemas/inference_ops.h"
#include "schemas/inference_util.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace npucc::schemas {

namespace {

using onnx::InferenceContext;
using onnx::TensorShapeProto;

constexpr size_t k_scales = 2;
constexpr size_t k_sizes = 3;

// Resize 18/19 with `sizes`: the output dims at `axes`, or empty when an input dim the
// policy needs is unknown. Arithmetic in float, as ONNX Runtime does it, so that a
// size on a rounding edge comes out the same.
std::optional<std::vector<int64_t>> sized_dims(const TensorShapeProto& input,
                                               const std::vector<int64_t>& axes,
                                               const std::vector<int64_t>& sizes,
                                               const std::string& policy) {
  if (policy == "stretch") {
    return sizes;
  }
  if (policy != "not_larger" && policy != "not_smaller") {
    fail_shape_inference("Resize: unknown keep_aspect_ratio_policy '", policy, "'");
  }
  std::optional<float> scale;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto in = dim_value(input.dim(static_cast<int>(axes[i])));
    if (!in || *in == 0) {
      return std::nullopt;
    }
    const float ratio = static_cast<float>(sizes[i]) / static_cast<float>(*in);
    scale = !scale                   ? ratio
            : policy == "not_larger" ? std::min(*scale, ratio)
                                     : std::max(*scale, ratio);
  }
  std::vector<int64_t> dims;
  for (int64_t axis : axes) {
    const float in = static_cast<float>(input.dim(static_cast<int>(axis)).dim_value());
    dims.push_back(static_cast<int64_t>(std::round(scale.value_or(1.0f) * in)));
  }
  return dims;
}

// With `scales`: floor(input dim * scale); a dim stays unknown if its input dim is.
std::vector<std::optional<int64_t>> scaled_dims(const TensorShapeProto& input,
                                                const std::vector<int64_t>& axes,
                                                const std::vector<double>& scales) {
  std::vector<std::optional<int64_t>> dims;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto in = dim_value(input.dim(static_cast<int>(axes[i])));
    if (!in) {
      dims.emplace_back();
      continue;
    }
    const float product = static_cast<float>(scales[i]) * static_cast<float>(*in);
    dims.emplace_back(static_cast<int64_t>(std::floor(product)));
  }
  return dims;
}

// The new dims at `axes`; each empty when not known before run time.
std::vector<std::optional<int64_t>> resized_dims(InferenceContext& ctx,
                                                 const TensorShapeProto& input,
                                                 const std::vector<int64_t>& axes) {
  const std::vector<std::optional<int64_t>> unknown(axes.size());
  auto scales = constant_floats(ctx, k_scales);
  // Exporters of Resize-11..13 passed an empty `scales` beside `sizes`.
  const bool use_sizes =
      has_input(ctx, k_sizes) && (!has_input(ctx, k_scales) || (scales && scales->empty()));
  if (!use_sizes && !has_input(ctx, k_scales)) {
    fail_shape_inference("Resize: one of 'scales' and 'sizes' must be given");
  }
  if (!use_sizes) {
    if (!scales) {
      return unknown;
    }
    if (scales->size() != axes.size()) {
      fail_shape_inference("Resize: 'scales' has ", scales->size(), " values for ", axes.size(),
                           " axes");
    }
    return scaled_dims(input, axes, *scales);
  }
  const auto sizes = constant_ints(ctx, k_sizes);
  if (!sizes) {
    return unknown;
  }
  if (sizes->size() != axes.size()) {
    fail_shape_inference("Resize: 'sizes' has ", sizes->size(), " values for ", axes.size(),
                         " axes");
  }
  const auto policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy", "stretch");
  const auto dims = sized_dims(input, axes, *sizes, policy);
  if (!dims) {
    return unknown;
  }
  return {dims->begin(), dims->end()};
}

void infer_resize(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) {
    return;
  }
  const auto& input = onnx::getInputShape(ctx, 0);
  std::vector<int64_t> axes;
  onnx::getRepeatedAttribute(ctx, "axes", axes);
  const auto resized = normalized_axes(axes, input.dim_size(), "Resize");
  const auto dims = resized_dims(ctx, input, resized);
  // The dims outside `axes` are not resized: copied, symbolic names included.
  auto* output = fresh_output_shape(ctx, 0);
  *output = input;
  for (size_t i = 0; i < resized.size(); ++i) {
    auto* dim = output->mutable_dim(static_cast<int>(resized[i]));
    dim->Clear();
    if (dims[i]) {
      dim->set_dim_value(*dims[i]);
    }
  }
}

} // namespace

// Resize 18/19: antialias, the coordinate modes and roi do not change the output shape.
Inference resize_with_axes() {
  return {infer_resize, {}};
}

} // namespace npucc::schemas

#include "schemas/inference_util.h"

#include <onnx/defs/tensor_proto_util.h>
#include <string>

namespace npucc::schemas {

namespace {

// Data propagation gives an int64 input computed from shapes (Shape -> Concat -> Resize's
// sizes) as a TensorShapeProto whose dims hold the values.
std::optional<std::vector<int64_t>> propagated_ints(onnx::InferenceContext& ctx, size_t input) {
  const auto* symbolic = ctx.getSymbolicInput(input);
  if (symbolic == nullptr) {
    return std::nullopt;
  }
  std::vector<int64_t> values;
  for (const auto& dim : symbolic->dim()) {
    if (!dim.has_dim_value()) {
      return std::nullopt;
    }
    values.push_back(dim.dim_value());
  }
  return values;
}

} // namespace

bool has_input(const onnx::InferenceContext& ctx, size_t input) {
  return input < ctx.getNumInputs() && ctx.getInputType(input) != nullptr;
}

std::optional<std::vector<int64_t>> constant_ints(onnx::InferenceContext& ctx, size_t input) {
  if (!has_input(ctx, input)) {
    return std::nullopt;
  }
  const auto* data = ctx.getInputData(input);
  if (data == nullptr) {
    return propagated_ints(ctx, input);
  }
  // An external-data initializer has no values here: ParseData would throw.
  if (data->data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  if (data->data_type() == onnx::TensorProto::INT64) {
    return onnx::ParseData<int64_t>(data);
  }
  if (data->data_type() == onnx::TensorProto::INT32) {
    const auto narrow = onnx::ParseData<int32_t>(data);
    return std::vector<int64_t>(narrow.begin(), narrow.end());
  }
  return std::nullopt;
}

std::optional<std::vector<double>> constant_floats(onnx::InferenceContext& ctx, size_t input) {
  if (!has_input(ctx, input)) {
    return std::nullopt;
  }
  const auto* data = ctx.getInputData(input);
  if (data == nullptr || data->data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  if (data->data_type() == onnx::TensorProto::FLOAT) {
    const auto values = onnx::ParseData<float>(data);
    return std::vector<double>(values.begin(), values.end());
  }
  if (data->data_type() == onnx::TensorProto::DOUBLE) {
    return onnx::ParseData<double>(data);
  }
  return std::nullopt;
}

int64_t normalized_axis(int64_t axis, int64_t rank, const char* op) {
  if (axis < -rank || axis >= rank) {
    fail_shape_inference(op, ": axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalized_axes(const std::vector<int64_t>& axes, int64_t rank,
                                     const char* op) {
  std::vector<int64_t> result;
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) {
      result.push_back(i);
    }
    return result;
  }
  for (int64_t axis : axes) {
    result.push_back(normalized_axis(axis, rank, op));
  }
  return result;
}

onnx::TensorShapeProto* fresh_output_shape(onnx::InferenceContext& ctx, size_t output) {
  auto* shape = ctx.getOutputType(output)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  return shape;
}

void set_unknown_dims(onnx::TensorShapeProto* shape, int64_t rank) {
  shape->clear_dim();
  for (int64_t i = 0; i < rank; ++i) {
    shape->add_dim();
  }
}

void type_and_rank_of_input(onnx::InferenceContext& ctx, size_t input, size_t output) {
  onnx::propagateElemTypeFromInputToOutput(ctx, input, output);
  if (!onnx::hasInputShape(ctx, input)) {
    return;
  }
  set_unknown_dims(fresh_output_shape(ctx, output), onnx::getInputShape(ctx, input).dim_size());
}

void add_dim(onnx::TensorShapeProto* shape, std::optional<int64_t> value) {
  auto* dim = shape->add_dim();
  if (value) {
    dim->set_dim_value(*value);
  }
}

std::optional<int64_t> dim_value(const onnx::TensorShapeProto::Dimension& dim) {
  if (dim.has_dim_value()) {
    return dim.dim_value();
  }
  return std::nullopt;
}

} // namespace npucc::schemas

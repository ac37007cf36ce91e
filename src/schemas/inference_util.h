#pragma once

#include <cstdint>
#include <onnx/defs/shape_inference.h>
#include <optional>
#include <vector>

// Small helpers shared by npucc's shape inference functions (src/schemas/inference_*.cpp).
namespace npucc::schemas {

// The values of integer input `input` when inference can know them: an initializer or Constant
// (int32 or int64), or a shape that ONNX's data propagation computed with every dim known.
// Empty when the input is absent or only known at run time: the caller then leaves dims unknown.
std::optional<std::vector<int64_t>> constant_ints(onnx::InferenceContext& ctx, size_t input);

// The values of float input `input` (float, float16 stored as float, double) when constant.
std::optional<std::vector<double>> constant_floats(onnx::InferenceContext& ctx, size_t input);

// Whether optional input `input` is given (present and not the empty name).
bool has_input(const onnx::InferenceContext& ctx, size_t input);

// `axis` in [-rank, rank - 1] -> [0, rank - 1]; fails inference for an axis out of range.
int64_t normalized_axis(int64_t axis, int64_t rank, const char* op);

// The `axes` of an op (attribute or input values), normalized; all axes when none are given.
std::vector<int64_t> normalized_axes(const std::vector<int64_t>& axes, int64_t rank,
                                     const char* op);

// Output `output`'s shape, cleared, for the caller to fill.
onnx::TensorShapeProto* fresh_output_shape(onnx::InferenceContext& ctx, size_t output);

// `rank` unknown dims: what can be said when the op's math needs values known only at run time.
void set_unknown_dims(onnx::TensorShapeProto* shape, int64_t rank);

// Type from input `input` and output dims all unknown, with the input's rank.
void type_and_rank_of_input(onnx::InferenceContext& ctx, size_t input, size_t output);

// A dim with a value, or unknown when `value` is empty.
void add_dim(onnx::TensorShapeProto* shape, std::optional<int64_t> value);

// A dim's value when it has one.
std::optional<int64_t> dim_value(const onnx::TensorShapeProto::Dimension& dim);

} // namespace npucc::schemas

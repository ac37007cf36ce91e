#pragma once
// Helpers shared by the constant-folding evaluators (fold_ops_*.cpp).

#include "passes/fold_values.h"

#include <optional>
#include <string>
#include <vector>

namespace npucc::passes::fold {

using Result = std::optional<std::vector<FoldValue>>;
using Inputs = std::vector<const FoldValue*>;

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                   const std::string& name);

// Makes a possibly negative axis absolute; false when it is outside [-rank, rank).
bool normalize_axis(int64_t& axis, int64_t rank);

// The int64 elements of a 1-D (or scalar) int64 or int32 input.
std::optional<std::vector<int64_t>> as_indices(const FoldValue* value);

inline void copy_element(const FoldValue& from, size_t i, FoldValue& to, size_t j) {
  if (from.is_float()) {
    to.floats[j] = from.floats[i];
  } else {
    to.ints[j] = from.ints[i];
  }
}

inline Result single(FoldValue value) {
  std::vector<FoldValue> out;
  out.push_back(std::move(value));
  return out;
}

// The evaluators, one per op family (fold_ops_<family>.cpp).
Result evaluate_cast(const onnx::NodeProto& node, const Inputs& inputs);
// `version`: the since-version of the op in force (op_version.h).
Result evaluate_slice(const onnx::NodeProto& node, const Inputs& inputs, int version);
// Split (every version from 2): the parts along `axis`.
Result evaluate_split(const onnx::NodeProto& node, const Inputs& inputs, int version);
// ReduceSum/ReduceProd on integers (overflow checked), ReduceMax/ReduceMin on integers,
// float32 and (from version 20) bool, with axes as an attribute or (ReduceSum from 13, the
// others from 18) an input, keepdims and noop_with_empty_axes.
Result evaluate_reduce(const onnx::NodeProto& node, const Inputs& inputs, int version);
// Pad from version 11 (pads an input): constant (cropping too), reflect, edge and (19)
// wrap modes, with axes (18).
Result evaluate_pad(const onnx::NodeProto& node, const Inputs& inputs, int version);
// ConstantOfShape and integer Range.
Result evaluate_generator(const onnx::NodeProto& node, const Inputs& inputs);
Result evaluate_expand(const Inputs& inputs);
// Add, Sub, Mul, Div, Equal, Where (multidirectional broadcasting from version 7; before
// it, only operands of one shape, where the legacy `broadcast`/`axis` rules agree).
Result evaluate_elementwise(const onnx::NodeProto& node, const Inputs& inputs, int version);

} // namespace npucc::passes::fold

#include "passes/fold_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

const FoldValue* input(const Inputs& inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}

Result concat(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  if (inputs.empty() || inputs[0] == nullptr) {
    return std::nullopt;
  }
  const FoldValue& first = *inputs[0];
  auto rank = static_cast<int64_t>(first.dims.size());
  int64_t axis = int_attribute(node, "axis", std::numeric_limits<int64_t>::min());
  // Negative axes count back from version 11 on; before, they are not defined.
  if (rank == 0 || (version < 11 && axis < 0) || !normalize_axis(axis, rank)) {
    return std::nullopt;
  }
  FoldValue out;
  out.type = first.type;
  out.dims = first.dims;
  out.dims[axis] = 0;
  for (const auto* in : inputs) {
    if (in == nullptr || in->type != first.type || in->dims.size() != first.dims.size()) {
      return std::nullopt;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && in->dims[d] != first.dims[d]) {
        return std::nullopt;
      }
    }
    out.dims[axis] += in->dims[axis];
  }
  out.allocate();
  size_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) {
    outer *= static_cast<size_t>(first.dims[d]);
  }
  size_t j = 0;
  for (size_t o = 0; o < outer; ++o) {
    for (const auto* in : inputs) {
      size_t block = in->count() / std::max<size_t>(outer, 1);
      for (size_t k = 0; k < block; ++k) {
        copy_element(*in, o * block + k, out, j++);
      }
    }
  }
  return single(std::move(out));
}

Result gather(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = input(inputs, 0);
  const FoldValue* indices = input(inputs, 1);
  if (data == nullptr || indices == nullptr ||
      (indices->type != T::INT64 && indices->type != T::INT32)) {
    return std::nullopt;
  }
  auto rank = static_cast<int64_t>(data->dims.size());
  int64_t axis = int_attribute(node, "axis", 0);
  if (rank == 0 || !normalize_axis(axis, rank)) {
    return std::nullopt;
  }
  const int64_t extent = data->dims[axis];
  FoldValue out;
  out.type = data->type;
  out.dims.assign(data->dims.begin(), data->dims.begin() + axis);
  out.dims.insert(out.dims.end(), indices->dims.begin(), indices->dims.end());
  out.dims.insert(out.dims.end(), data->dims.begin() + axis + 1, data->dims.end());
  if (out.count() > k_max_fold_elements) {
    return std::nullopt;
  }
  out.allocate();
  size_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) {
    outer *= static_cast<size_t>(data->dims[d]);
  }
  size_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) {
    inner *= static_cast<size_t>(data->dims[d]);
  }
  size_t j = 0;
  // Negative indices count back from version 11 on; version 1 does not define them.
  const int64_t lowest = version < 11 ? 0 : -extent;
  for (size_t o = 0; o < outer; ++o) {
    for (int64_t index : indices->ints) {
      if (index < lowest || index >= extent) {
        return std::nullopt;
      }
      auto row = static_cast<size_t>(index < 0 ? index + extent : index);
      for (size_t k = 0; k < inner; ++k) {
        copy_element(*data, (o * static_cast<size_t>(extent) + row) * inner + k, out, j++);
      }
    }
  }
  return single(std::move(out));
}

// The axes of Squeeze/Unsqueeze: an attribute before version 13, an input from 13 on.
// Version 1 allows no negative axis (11 added them): one is not read as counting back.
std::optional<std::vector<int64_t>> axes_of(const onnx::NodeProto& node, const Inputs& inputs,
                                            int version) {
  if (version < 13) {
    auto axes = ints_attribute(node, "axes");
    if (version < 11 && axes &&
        std::any_of(axes->begin(), axes->end(), [](int64_t axis) { return axis < 0; })) {
      return std::nullopt;
    }
    return axes;
  }
  return input(inputs, 1) == nullptr ? std::nullopt : as_indices(inputs[1]);
}

Result unsqueeze(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = input(inputs, 0);
  auto axes = axes_of(node, inputs, version);
  if (data == nullptr || !axes) {
    return std::nullopt;
  }
  auto rank = static_cast<int64_t>(data->dims.size() + axes->size());
  std::set<int64_t> inserted;
  for (int64_t axis : *axes) {
    if (!normalize_axis(axis, rank) || !inserted.insert(axis).second) {
      return std::nullopt;
    }
  }
  FoldValue out = *data;
  out.dims.clear();
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    out.dims.push_back(inserted.count(d) != 0 ? 1 : data->dims[next++]);
  }
  return single(std::move(out));
}

Result squeeze(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = input(inputs, 0);
  if (data == nullptr) {
    return std::nullopt;
  }
  auto rank = static_cast<int64_t>(data->dims.size());
  auto axes = axes_of(node, inputs, version);
  std::set<int64_t> removed;
  if (!axes &&
      (version < 13 ? find_attribute(node, "axes") != nullptr : input(inputs, 1) != nullptr)) {
    return std::nullopt;
  }
  if (axes) {
    for (int64_t axis : *axes) {
      if (!normalize_axis(axis, rank) || data->dims[axis] != 1) {
        return std::nullopt;
      }
      removed.insert(axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) {
      if (data->dims[d] == 1) {
        removed.insert(d);
      }
    }
  }
  FoldValue out = *data;
  out.dims.clear();
  for (int64_t d = 0; d < rank; ++d) {
    if (removed.count(d) == 0) {
      out.dims.push_back(data->dims[d]);
    }
  }
  return single(std::move(out));
}

Result reshape(const onnx::NodeProto& node, const Inputs& inputs) {
  const FoldValue* data = input(inputs, 0);
  auto shape = input(inputs, 1) == nullptr || inputs[1]->type != T::INT64 ? std::nullopt
                                                                          : as_indices(inputs[1]);
  if (data == nullptr || !shape) {
    return std::nullopt;
  }
  const bool allow_zero = int_attribute(node, "allowzero", 0) != 0;
  FoldValue out = *data;
  out.dims.clear();
  int64_t inferred = -1;
  size_t known = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t dim = (*shape)[i];
    if (dim == 0 && !allow_zero) {
      if (i >= data->dims.size()) {
        return std::nullopt;
      }
      dim = data->dims[i];
    }
    if (dim == -1) {
      if (inferred >= 0) {
        return std::nullopt;
      }
      inferred = static_cast<int64_t>(i);
    } else if (dim < 0) {
      return std::nullopt;
    } else {
      known *= static_cast<size_t>(dim);
    }
    out.dims.push_back(dim);
  }
  if (inferred >= 0) {
    if (known == 0 || data->count() % known != 0) {
      return std::nullopt;
    }
    out.dims[static_cast<size_t>(inferred)] = static_cast<int64_t>(data->count() / known);
  }
  if (out.count() != data->count()) {
    return std::nullopt;
  }
  return single(std::move(out));
}

} // namespace

} // namespace npucc::passes::fold

namespace npucc::passes {

namespace {

// The versions of each op whose definitions the evaluators implement, read against ONNX's
// Changelog through opset k_checked_through_opset. A version left out is never evaluated:
// Reshape-1 (its shape an attribute), Cast-1 (`to` a string). The opset 18-26 versions of
// these ops only widen their types (float8, int4, ...), which FoldValue never holds, but
// for Split-18 (num_outputs), ReduceProd/Max/Min-18 (axes an input), ReduceMax/Min-20
// (bool), Pad-18 (axes) and Pad-19 (wrap), which the evaluators implement. Pad-2 (pads an
// attribute) is left out. Split-1 (split as an input or an attribute) is
// left out.
const std::map<std::string, std::set<int>>& checked_versions() {
  static const std::map<std::string, std::set<int>> versions = {
      {"Cast", {6, 9, 13, 19, 21, 23, 24, 25}},
      {"CastLike", {15, 19, 21, 23, 24, 25}},
      {"Concat", {1, 4, 11, 13}},
      {"Gather", {1, 11, 13}},
      {"Unsqueeze", {1, 11, 13, 21, 23, 24, 25}},
      {"Squeeze", {1, 11, 13, 21, 23, 24, 25}},
      {"Slice", {1, 10, 11, 13}},
      {"Reshape", {5, 13, 14, 19, 21, 23, 24, 25}},
      {"Expand", {8, 13}},
      {"ConstantOfShape", {9, 20, 21, 23, 24, 25}},
      {"Range", {11}},
      {"Add", {1, 6, 7, 13, 14}},
      {"Sub", {1, 6, 7, 13, 14}},
      {"Mul", {1, 6, 7, 13, 14}},
      {"Div", {1, 6, 7, 13, 14}},
      {"Equal", {1, 7, 11, 13, 19}},
      {"Where", {9, 16}},
      {"Split", {2, 11, 13, 18}},
      {"Pad", {11, 13, 18, 19, 21, 23, 24, 25}},
      {"ReduceSum", {1, 11, 13}},
      {"ReduceProd", {1, 11, 13, 18}},
      {"ReduceMax", {1, 11, 12, 13, 18, 20}},
      {"ReduceMin", {1, 11, 12, 13, 18, 20}},
  };
  return versions;
}

} // namespace

bool is_foldable_op(const std::string& op) {
  return checked_versions().count(op) != 0;
}

std::optional<std::vector<FoldValue>> evaluate_node(const onnx::NodeProto& node,
                                                    const std::vector<const FoldValue*>& inputs,
                                                    int version) {
  const std::string& op = node.op_type();
  auto known = checked_versions().find(op);
  if (known == checked_versions().end() || known->second.count(version) == 0) {
    return std::nullopt;
  }
  if (op == "Cast" || op == "CastLike") {
    return fold::evaluate_cast(node, inputs);
  }
  if (op == "Concat") {
    return fold::concat(node, inputs, version);
  }
  if (op == "Gather") {
    return fold::gather(node, inputs, version);
  }
  if (op == "Unsqueeze") {
    return fold::unsqueeze(node, inputs, version);
  }
  if (op == "Squeeze") {
    return fold::squeeze(node, inputs, version);
  }
  if (op == "Reshape") {
    return fold::reshape(node, inputs);
  }
  if (op == "Slice") {
    return fold::evaluate_slice(node, inputs, version);
  }
  if (op == "Expand") {
    return fold::evaluate_expand(inputs);
  }
  if (op == "ConstantOfShape" || op == "Range") {
    return fold::evaluate_generator(node, inputs);
  }
  if (op == "Pad") {
    return fold::evaluate_pad(node, inputs, version);
  }
  if (op == "Split") {
    return fold::evaluate_split(node, inputs, version);
  }
  if (op.rfind("Reduce", 0) == 0) {
    return fold::evaluate_reduce(node, inputs, version);
  }
  return fold::evaluate_elementwise(node, inputs, version);
}

} // namespace npucc::passes

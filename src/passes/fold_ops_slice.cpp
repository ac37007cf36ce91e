#include "passes/fold_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

// The first index and element count ONNX's Slice takes along one axis of size `dim`
// (starts and ends clamped as the operator's definition says).
bool slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t& first,
                int64_t& count) {
  if (step == 0 || step == std::numeric_limits<int64_t>::min()) {
    return false;
  }
  if (dim == 0) {
    first = 0;
    count = 0;
    return true;
  }
  // Adding a non-negative dim to a negative number cannot overflow.
  if (start < 0) {
    start += dim;
  }
  if (end < 0) {
    end += dim;
  }
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    count = start > end ? (start - end - 1) / -step + 1 : 0;
  }
  first = start;
  return true;
}

} // namespace

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) {
      return &attribute;
    }
  }
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* attribute = find_attribute(node, name);
  return attribute != nullptr && attribute->type() == onnx::AttributeProto::INT ? attribute->i()
                                                                                : fallback;
}

std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                   const std::string& name) {
  const auto* attribute = find_attribute(node, name);
  if (attribute == nullptr || attribute->type() != onnx::AttributeProto::INTS) {
    return std::nullopt;
  }
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

bool normalize_axis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return false;
  }
  if (axis < 0) {
    axis += rank;
  }
  return true;
}

std::optional<std::vector<int64_t>> as_indices(const FoldValue* value) {
  if (value == nullptr || (value->type != T::INT64 && value->type != T::INT32) ||
      value->dims.size() > 1) {
    return std::nullopt;
  }
  return value->ints;
}

Result evaluate_slice(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = inputs.empty() ? nullptr : inputs[0];
  if (data == nullptr) {
    return std::nullopt;
  }
  auto rank = static_cast<int64_t>(data->dims.size());
  auto at = [&](size_t i) { return i < inputs.size() ? inputs[i] : nullptr; };
  std::optional<std::vector<int64_t>> starts;
  std::optional<std::vector<int64_t>> ends;
  std::optional<std::vector<int64_t>> axes;
  std::optional<std::vector<int64_t>> steps;
  if (version < 10) {
    starts = ints_attribute(node, "starts");
    ends = ints_attribute(node, "ends");
    axes = ints_attribute(node, "axes");
  } else {
    starts = as_indices(at(1));
    ends = as_indices(at(2));
    if (at(3) != nullptr) {
      axes = as_indices(at(3));
      if (!axes) {
        return std::nullopt;
      }
    }
    if (at(4) != nullptr) {
      steps = as_indices(at(4));
      if (!steps) {
        return std::nullopt;
      }
    }
  }
  if (!starts || !ends || starts->size() != ends->size()) {
    return std::nullopt;
  }
  if (!axes) {
    axes = std::vector<int64_t>();
    for (size_t i = 0; i < starts->size(); ++i) {
      axes->push_back(static_cast<int64_t>(i));
    }
  }
  if (!steps) {
    steps = std::vector<int64_t>(starts->size(), 1);
  }
  if (axes->size() != starts->size() || steps->size() != starts->size()) {
    return std::nullopt;
  }
  std::vector<int64_t> first(static_cast<size_t>(rank), 0);
  std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
  FoldValue out;
  out.type = data->type;
  out.dims = data->dims;
  std::set<int64_t> seen;
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t axis = (*axes)[i];
    if (!normalize_axis(axis, rank) || !seen.insert(axis).second) {
      return std::nullopt;
    }
    auto a = static_cast<size_t>(axis);
    if (!slice_axis(data->dims[a], (*starts)[i], (*ends)[i], (*steps)[i], first[a], out.dims[a])) {
      return std::nullopt;
    }
    stride[a] = (*steps)[i];
  }
  out.allocate();
  const size_t total = out.count();
  std::vector<int64_t> counter(static_cast<size_t>(rank), 0);
  for (size_t flat = 0; flat < total; ++flat) {
    size_t source = 0;
    for (size_t d = 0; d < counter.size(); ++d) {
      source = source * static_cast<size_t>(data->dims[d]) +
               static_cast<size_t>(first[d] + counter[d] * stride[d]);
    }
    copy_element(*data, source, out, flat);
    for (size_t d = counter.size(); d-- > 0;) {
      if (++counter[d] < out.dims[d]) {
        break;
      }
      counter[d] = 0;
    }
  }
  return single(std::move(out));
}

} // namespace npucc::passes::fold

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
    // Negative axes count back from version 11 on; before, they are not defined.
    if ((version < 11 && axis < 0) || !normalize_axis(axis, rank) || !seen.insert(axis).second) {
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

namespace {

// The size of each of Split's `outputs` parts of a dim of `extent`: from the `split`
// attribute (before version 13) or input (from 13), from num_outputs (18: parts of
// ceil(extent / n), the last smaller), else equal parts. nullopt when not defined.
std::optional<std::vector<int64_t>> split_sizes(const onnx::NodeProto& node, const Inputs& inputs,
                                                int version, int64_t extent, size_t outputs) {
  std::optional<std::vector<int64_t>> sizes;
  if (version < 13) {
    sizes = ints_attribute(node, "split");
    if (!sizes && find_attribute(node, "split") != nullptr) {
      return std::nullopt;
    }
  } else if (inputs.size() > 1 && inputs[1] != nullptr) {
    if (inputs[1]->type != T::INT64 || inputs[1]->dims.size() != 1) {
      return std::nullopt;
    }
    sizes = inputs[1]->ints;
  }
  const auto* num_outputs = version >= 18 ? find_attribute(node, "num_outputs") : nullptr;
  if (sizes) {
    if (num_outputs != nullptr) {
      return std::nullopt; // one or the other, by the definition
    }
  } else if (num_outputs != nullptr) {
    const int64_t n = num_outputs->i();
    if (n < 1 || static_cast<size_t>(n) != outputs) {
      return std::nullopt;
    }
    const int64_t chunk = (extent + n - 1) / n;
    const int64_t last = extent - chunk * (n - 1);
    // A last part of nothing (4 in 3 parts of 2) is not what "smaller" promises.
    if (last <= 0) {
      return std::nullopt;
    }
    std::vector<int64_t> parts(outputs - 1, chunk);
    parts.push_back(last);
    sizes = std::move(parts);
  } else {
    if (extent % static_cast<int64_t>(outputs) != 0) {
      return std::nullopt;
    }
    sizes = std::vector<int64_t>(outputs, extent / static_cast<int64_t>(outputs));
  }
  int64_t sum = 0;
  for (int64_t size : *sizes) {
    if (size < 0 || __builtin_add_overflow(sum, size, &sum)) {
      return std::nullopt;
    }
  }
  if (sizes->size() != outputs || sum != extent) {
    return std::nullopt;
  }
  return sizes;
}

} // namespace

Result evaluate_split(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = inputs.empty() ? nullptr : inputs[0];
  if (data == nullptr || data->dims.empty() || node.output_size() < 1) {
    return std::nullopt;
  }
  const auto rank = static_cast<int64_t>(data->dims.size());
  int64_t axis = int_attribute(node, "axis", 0);
  // Version 2 defines no negative axis (11 added them).
  if ((version < 11 && axis < 0) || !normalize_axis(axis, rank)) {
    return std::nullopt;
  }
  const auto a = static_cast<size_t>(axis);
  auto sizes =
      split_sizes(node, inputs, version, data->dims[a], static_cast<size_t>(node.output_size()));
  if (!sizes) {
    return std::nullopt;
  }
  size_t outer = 1;
  for (size_t d = 0; d < a; ++d) {
    outer *= static_cast<size_t>(data->dims[d]);
  }
  size_t inner = 1;
  for (size_t d = a + 1; d < data->dims.size(); ++d) {
    inner *= static_cast<size_t>(data->dims[d]);
  }
  std::vector<FoldValue> out;
  int64_t begin = 0;
  for (int64_t size : *sizes) {
    FoldValue part;
    part.type = data->type;
    part.dims = data->dims;
    part.dims[a] = size;
    part.allocate();
    size_t j = 0;
    for (size_t o = 0; o < outer; ++o) {
      const size_t row = o * static_cast<size_t>(data->dims[a]) + static_cast<size_t>(begin);
      for (size_t k = 0; k < static_cast<size_t>(size) * inner; ++k) {
        copy_element(*data, row * inner + k, part, j++);
      }
    }
    begin += size;
    out.push_back(std::move(part));
  }
  return out;
}

} // namespace npucc::passes::fold

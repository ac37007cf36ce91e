#include "passes/fold_ops.h"

#include <cmath>
#include <limits>
#include <set>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

// The first version of each Reduce* that reads its axes from an input, not an attribute.
int axes_input_version(const std::string& op) {
  return op == "ReduceSum" ? 13 : 18;
}

// The axes to reduce, sorted: nullopt when not readable. An empty set with `noop` means
// the node passes its input through.
std::optional<std::set<int64_t>> reduce_axes(const onnx::NodeProto& node, const Inputs& inputs,
                                             int version, int64_t rank, bool& noop) {
  std::optional<std::vector<int64_t>> axes;
  noop = false;
  if (version >= axes_input_version(node.op_type())) {
    const FoldValue* given = inputs.size() > 1 ? inputs[1] : nullptr;
    if (given != nullptr) {
      if (given->type != T::INT64 || given->dims.size() != 1) {
        return std::nullopt;
      }
      axes = given->ints;
    }
    // "Not provided or empty": reduce every axis, or none with noop_with_empty_axes.
    if ((!axes || axes->empty()) && int_attribute(node, "noop_with_empty_axes", 0) != 0) {
      noop = true;
      return std::set<int64_t>();
    }
  } else {
    if (inputs.size() > 1) {
      return std::nullopt;
    }
    axes = ints_attribute(node, "axes");
    if (!axes && find_attribute(node, "axes") != nullptr) {
      return std::nullopt;
    }
  }
  std::set<int64_t> out;
  if (!axes || axes->empty()) {
    for (int64_t d = 0; d < rank; ++d) {
      out.insert(d);
    }
    return out;
  }
  for (int64_t axis : *axes) {
    // Version 1 defines no negative axis (11 added them).
    if ((version < 11 && axis < 0) || !normalize_axis(axis, rank) || !out.insert(axis).second) {
      return std::nullopt;
    }
  }
  return out;
}

// One step of the reduction; false when the result is not exact or defined (integer
// overflow, a NaN whose propagation runtimes differ on).
bool combine(const std::string& op, int32_t type, int64_t& acc, int64_t value) {
  if (op == "ReduceSum") {
    return !__builtin_add_overflow(acc, value, &acc) &&
           (type != T::INT32 || (acc >= std::numeric_limits<int32_t>::min() &&
                                 acc <= std::numeric_limits<int32_t>::max()));
  }
  if (op == "ReduceProd") {
    return !__builtin_mul_overflow(acc, value, &acc) &&
           (type != T::INT32 || (acc >= std::numeric_limits<int32_t>::min() &&
                                 acc <= std::numeric_limits<int32_t>::max()));
  }
  acc = op == "ReduceMax" ? std::max(acc, value) : std::min(acc, value);
  return true;
}

// Whether `op` on `type` at `version` is exact here: integer sums and products (checked
// for overflow), and max/min, which pick an element (bool from version 20). Float sums,
// products and means round in an order runtimes choose.
bool exact(const std::string& op, int32_t type, int version) {
  if (type == T::INT64 || type == T::INT32) {
    return true;
  }
  if (op != "ReduceMax" && op != "ReduceMin") {
    return false;
  }
  return type == T::FLOAT || (type == T::BOOL && version >= 20);
}

} // namespace

Result evaluate_reduce(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = inputs.empty() ? nullptr : inputs[0];
  const std::string& op = node.op_type();
  if (data == nullptr || !exact(op, data->type, version)) {
    return std::nullopt;
  }
  const auto rank = static_cast<int64_t>(data->dims.size());
  bool noop = false;
  auto axes = reduce_axes(node, inputs, version, rank, noop);
  if (!axes) {
    return std::nullopt;
  }
  if (noop) {
    return single(*data);
  }
  const bool keep = int_attribute(node, "keepdims", 1) != 0;
  FoldValue out;
  out.type = data->type;
  std::vector<size_t> out_strides(static_cast<size_t>(rank), 0);
  std::vector<int64_t> kept_dims;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = axes->count(d) != 0;
    // A max or min over nothing is -inf or the type's lowest, by ONNX's definition;
    // runtimes have disagreed: left to them.
    if (reduced && data->dims[d] == 0 && (op == "ReduceMax" || op == "ReduceMin")) {
      return std::nullopt;
    }
    if (reduced) {
      if (keep) {
        out.dims.push_back(1);
      }
    } else {
      out.dims.push_back(data->dims[d]);
      kept_dims.push_back(d);
    }
  }
  // Output strides over the kept axes only (a reduced axis adds nothing to the index).
  size_t stride = 1;
  for (size_t k = kept_dims.size(); k-- > 0;) {
    out_strides[static_cast<size_t>(kept_dims[k])] = stride;
    stride *= static_cast<size_t>(data->dims[static_cast<size_t>(kept_dims[k])]);
  }
  out.allocate();
  const size_t count = out.size();
  std::vector<bool> started(count, false);
  std::vector<int64_t> counter(static_cast<size_t>(rank), 0);
  const size_t total = data->count();
  for (size_t flat = 0; flat < total; ++flat) {
    size_t target = 0;
    for (size_t d = 0; d < counter.size(); ++d) {
      target += out_strides[d] * static_cast<size_t>(counter[d]);
    }
    if (data->is_float()) {
      const float value = data->floats[flat];
      if (std::isnan(value)) {
        return std::nullopt;
      }
      float& acc = out.floats[target];
      // max(-0, +0) is either zero, whichever a runtime compares first.
      if (started[target] && value == acc && std::signbit(value) != std::signbit(acc)) {
        return std::nullopt;
      }
      acc = !started[target] ? value
                             : (op == "ReduceMax" ? std::max(acc, value) : std::min(acc, value));
    } else if (!started[target]) {
      out.ints[target] = data->ints[flat];
    } else if (!combine(op, data->type, out.ints[target], data->ints[flat])) {
      return std::nullopt;
    }
    started[target] = true;
    for (size_t d = counter.size(); d-- > 0;) {
      if (++counter[d] < data->dims[d]) {
        break;
      }
      counter[d] = 0;
    }
  }
  // Outputs no element reached: a sum or product over an empty axis (0 and 1).
  for (size_t i = 0; i < count && !out.is_float(); ++i) {
    if (!started[i]) {
      out.ints[i] = op == "ReduceProd" ? 1 : 0;
    }
  }
  return single(std::move(out));
}

} // namespace npucc::passes::fold

#include "passes/fold_ops.h"

#include <cmath>
#include <limits>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

// The numpy-style broadcast of `shapes`; false when they do not broadcast.
bool broadcast_dims(const std::vector<const FoldValue*>& values, std::vector<int64_t>& out) {
  size_t rank = 0;
  for (const auto* value : values) {
    rank = std::max(rank, value->dims.size());
  }
  out.assign(rank, 1);
  for (const auto* value : values) {
    size_t offset = rank - value->dims.size();
    for (size_t i = 0; i < value->dims.size(); ++i) {
      int64_t dim = value->dims[i];
      int64_t& target = out[offset + i];
      if (dim == target || dim == 1) {
        continue;
      }
      if (target != 1) {
        return false;
      }
      target = dim;
    }
  }
  return true;
}

// For every element of the broadcast output, the flat index into `value`.
std::vector<size_t> source_indices(const FoldValue& value, const std::vector<int64_t>& out_dims) {
  const size_t rank = out_dims.size();
  const size_t offset = rank - value.dims.size();
  std::vector<size_t> strides(rank, 0);
  size_t stride = 1;
  for (size_t i = value.dims.size(); i-- > 0;) {
    strides[offset + i] = value.dims[i] == 1 ? 0 : stride;
    stride *= static_cast<size_t>(value.dims[i]);
  }
  size_t total = 1;
  for (int64_t dim : out_dims) {
    total *= static_cast<size_t>(dim);
  }
  std::vector<size_t> indices(total);
  std::vector<int64_t> counter(rank, 0);
  size_t source = 0;
  for (size_t flat = 0; flat < total; ++flat) {
    indices[flat] = source;
    for (size_t axis = rank; axis-- > 0;) {
      if (++counter[axis] < out_dims[axis]) {
        source += strides[axis];
        break;
      }
      source -= strides[axis] * static_cast<size_t>(out_dims[axis] - 1);
      counter[axis] = 0;
    }
  }
  return indices;
}

bool fits(int32_t type, int64_t value) {
  if (type == T::INT32) {
    return value >= std::numeric_limits<int32_t>::min() &&
           value <= std::numeric_limits<int32_t>::max();
  }
  return true;
}

// One integer arithmetic step; false on overflow or division by zero, where
// runtimes disagree or have undefined behaviour.
bool integer_op(const std::string& op, int32_t type, int64_t a, int64_t b, int64_t& out) {
  bool overflow = false;
  if (op == "Add") {
    overflow = __builtin_add_overflow(a, b, &out);
  } else if (op == "Sub") {
    overflow = __builtin_sub_overflow(a, b, &out);
  } else if (op == "Mul") {
    overflow = __builtin_mul_overflow(a, b, &out);
  } else { // Div truncates toward zero, as C++ and ONNX Runtime do
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
      return false;
    }
    out = a / b;
  }
  return !overflow && fits(type, out);
}

float float_op(const std::string& op, float a, float b) {
  if (op == "Add") {
    return a + b;
  }
  if (op == "Sub") {
    return a - b;
  }
  if (op == "Mul") {
    return a * b;
  }
  return a / b;
}

} // namespace

Result evaluate_expand(const Inputs& inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr ||
      inputs[1]->type != T::INT64 || inputs[1]->dims.size() != 1) {
    return std::nullopt;
  }
  // The shape broadcasts with the input like a tensor of that shape would.
  FoldValue target;
  target.dims = inputs[1]->ints;
  for (int64_t dim : target.dims) {
    if (dim < 0) {
      return std::nullopt;
    }
  }
  const FoldValue& data = *inputs[0];
  FoldValue out;
  if (!broadcast_dims({&data, &target}, out.dims)) {
    return std::nullopt;
  }
  out.type = data.type;
  if (!out.fits_fold_limit()) {
    return std::nullopt;
  }
  out.allocate();
  auto from = source_indices(data, out.dims);
  for (size_t i = 0; i < out.count(); ++i) {
    copy_element(data, from[i], out, i);
  }
  return single(std::move(out));
}

Result evaluate_elementwise(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const std::string& op = node.op_type();
  const bool is_where = op == "Where";
  if (inputs.size() != (is_where ? 3U : 2U)) {
    return std::nullopt;
  }
  for (const auto* input : inputs) {
    if (input == nullptr) {
      return std::nullopt;
    }
  }
  const FoldValue& a = *inputs[is_where ? 1 : 0];
  const FoldValue& b = *inputs[is_where ? 2 : 1];
  if (a.type != b.type || (is_where && inputs[0]->type != T::BOOL)) {
    return std::nullopt;
  }
  // Versions 1 and 6 broadcast B onto A along `axis` (an attribute), not numpy-style:
  // (3,3) + (3,) with axis=0 adds along rows. Only equal shapes mean the same in both.
  if (version < 7 && a.dims != b.dims) {
    return std::nullopt;
  }
  if (!is_where && op != "Equal" && a.type == T::BOOL) {
    return std::nullopt;
  }
  FoldValue out;
  if (!broadcast_dims(inputs, out.dims)) {
    return std::nullopt;
  }
  out.type = op == "Equal" ? static_cast<int32_t>(T::BOOL) : a.type;
  if (out.count() > k_max_fold_elements) {
    return std::nullopt;
  }
  out.allocate();
  auto from_a = source_indices(a, out.dims);
  auto from_b = source_indices(b, out.dims);
  if (is_where) {
    auto from_cond = source_indices(*inputs[0], out.dims);
    for (size_t i = 0; i < out.count(); ++i) {
      if (inputs[0]->ints[from_cond[i]] != 0) {
        copy_element(a, from_a[i], out, i);
      } else {
        copy_element(b, from_b[i], out, i);
      }
    }
    return single(std::move(out));
  }
  for (size_t i = 0; i < out.count(); ++i) {
    if (op == "Equal") {
      out.ints[i] = a.is_float() ? (a.floats[from_a[i]] == b.floats[from_b[i]] ? 1 : 0)
                                 : (a.ints[from_a[i]] == b.ints[from_b[i]] ? 1 : 0);
    } else if (a.is_float()) {
      out.floats[i] = float_op(op, a.floats[from_a[i]], b.floats[from_b[i]]);
    } else if (!integer_op(op, a.type, a.ints[from_a[i]], b.ints[from_b[i]], out.ints[i])) {
      return std::nullopt;
    }
  }
  return single(std::move(out));
}

} // namespace npucc::passes::fold

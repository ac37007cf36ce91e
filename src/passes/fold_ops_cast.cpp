#include "passes/fold_ops.h"

#include <cmath>
#include <limits>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

} // namespace

// Cast between the supported types; nullopt where the result is undefined
// (NaN or out-of-range float to integer, int64 out of int32 range). CastLike takes the
// type of its second input (only the type: see evaluate_node).
Result evaluate_cast(const onnx::NodeProto& node, const Inputs& inputs) {
  const FoldValue* in = inputs.empty() ? nullptr : inputs[0];
  const bool like = node.op_type() == "CastLike";
  if (like && (inputs.size() != 2 || inputs[1] == nullptr)) {
    return std::nullopt;
  }
  auto to = like ? inputs[1]->type : static_cast<int32_t>(int_attribute(node, "to", 0));
  if (in == nullptr || !is_foldable_type(to) || int_attribute(node, "saturate", 1) != 1) {
    return std::nullopt;
  }
  FoldValue out;
  out.type = to;
  out.dims = in->dims;
  out.allocate();
  for (size_t i = 0; i < in->size(); ++i) {
    if (to == T::FLOAT) {
      out.floats[i] = in->is_float() ? in->floats[i] : static_cast<float>(in->ints[i]);
      continue;
    }
    if (to == T::BOOL) {
      out.ints[i] = (in->is_float() ? in->floats[i] != 0.0F : in->ints[i] != 0) ? 1 : 0;
      continue;
    }
    int64_t value = 0;
    if (in->is_float()) {
      float f = in->floats[i];
      // 2^63 is exactly representable; anything at or beyond it does not fit.
      if (std::isnan(f) || f >= 9.2233720368547758e18F || f < -9.2233720368547758e18F) {
        return std::nullopt;
      }
      value = static_cast<int64_t>(f);
    } else {
      value = in->ints[i];
    }
    if (to == T::INT32 && (value < std::numeric_limits<int32_t>::min() ||
                           value > std::numeric_limits<int32_t>::max())) {
      return std::nullopt;
    }
    out.ints[i] = value;
  }
  return single(std::move(out));
}

} // namespace npucc::passes::fold

#include "passes/fold_ops.h"

#include <algorithm>
#include <cmath>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

} // namespace

Result evaluate_generator(const onnx::NodeProto& node, const Inputs& inputs) {
  if (node.op_type() == "ConstantOfShape") {
    auto shape = inputs.empty() || inputs[0] == nullptr || inputs[0]->type != T::INT64
                     ? std::nullopt
                     : as_indices(inputs[0]);
    if (!shape || std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d < 0; })) {
      return std::nullopt;
    }
    FoldValue fill;
    fill.type = T::FLOAT;
    fill.floats = {0.0F};
    if (const auto* attribute = find_attribute(node, "value")) {
      auto read = attribute->has_t() ? read_fold_value(attribute->t()) : std::nullopt;
      if (!read || read->size() != 1) {
        return std::nullopt;
      }
      fill = *read;
    }
    FoldValue out;
    out.type = fill.type;
    out.dims = *shape;
    if (!out.fits_fold_limit()) {
      return std::nullopt;
    }
    out.allocate();
    for (size_t i = 0; i < out.count(); ++i) {
      copy_element(fill, 0, out, i);
    }
    return single(std::move(out));
  }
  // Range, integers only: ONNX Runtime accumulates float ranges step by step, which
  // differs from the definition's start + i * delta in the last bits.
  if (inputs.size() != 3 || inputs[0] == nullptr || inputs[1] == nullptr || inputs[2] == nullptr) {
    return std::nullopt;
  }
  const FoldValue& start = *inputs[0];
  const FoldValue& limit = *inputs[1];
  const FoldValue& delta = *inputs[2];
  if (start.is_float() || start.type == T::BOOL || limit.type != start.type ||
      delta.type != start.type || start.size() != 1 || limit.size() != 1 || delta.size() != 1 ||
      delta.ints[0] == 0) {
    return std::nullopt;
  }
  const long double span = static_cast<long double>(limit.ints[0]) - start.ints[0];
  const long double steps = std::ceil(span / delta.ints[0]);
  if (steps > static_cast<long double>(k_max_fold_elements)) {
    return std::nullopt;
  }
  FoldValue out;
  out.type = start.type;
  out.dims = {steps > 0 ? static_cast<int64_t>(steps) : 0};
  out.allocate();
  for (size_t i = 0; i < out.ints.size(); ++i) {
    out.ints[i] = start.ints[0] + static_cast<int64_t>(i) * delta.ints[0];
  }
  return single(std::move(out));
}

} // namespace npucc::passes::fold

#include "schemas/propagated_inputs.h"

#include <utility>

namespace npucc::schemas {

const onnx::TensorProto* PropagatedInputs::getInputData(size_t index) const {
  if (const auto* data = m_base.getInputData(index)) {
    return data;
  }
  // Propagated values are integers; only an int64 input can be handed on as a tensor of them.
  const auto* type = m_base.getInputType(index);
  const auto* symbolic = m_base.getSymbolicInput(index);
  if (symbolic == nullptr || type == nullptr ||
      type->tensor_type().elem_type() != onnx::TensorProto::INT64) {
    return nullptr;
  }
  for (const auto& dim : symbolic->dim()) {
    if (!dim.has_dim_value()) {
      return nullptr; // a value known only at run time
    }
  }
  auto& tensor = m_made[index];
  tensor.Clear();
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(symbolic->dim_size());
  for (const auto& dim : symbolic->dim()) {
    tensor.add_int64_data(dim.dim_value());
  }
  return &tensor;
}

onnx::InferenceFunction with_propagated_inputs(onnx::InferenceFunction infer) {
  return [infer = std::move(infer)](onnx::InferenceContext& ctx) {
    PropagatedInputs wrapped(ctx);
    infer(wrapped);
  };
}

} // namespace npucc::schemas

#pragma once

#include <map>
#include <onnx/defs/shape_inference.h>

// ONNX 1.12's own inference functions read constant inputs through getInputData, which knows
// initializers and Constant `value` tensors only. This context, wrapped around the real one,
// also answers with the int64 values data propagation computed (Shape -> Concat, a Constant's
// value_ints), so an inherited inference (ReduceSum-13's axes) sees them as npucc's own do.
namespace npucc::schemas {

class PropagatedInputs final : public onnx::InferenceContext {
public:
  explicit PropagatedInputs(onnx::InferenceContext& base) : m_base(base) {}

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    return m_base.getAttribute(name);
  }
  size_t getNumInputs() const override { return m_base.getNumInputs(); }
  const onnx::TypeProto* getInputType(size_t index) const override {
    return m_base.getInputType(index);
  }
  const onnx::TensorProto* getInputData(size_t index) const override;
  size_t getNumOutputs() const override { return m_base.getNumOutputs(); }
  onnx::TypeProto* getOutputType(size_t index) override { return m_base.getOutputType(index); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override {
    return m_base.getGraphAttributeInferencer(name);
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t index) const override {
    return m_base.getInputSparseData(index);
  }
  const onnx::TensorShapeProto* getSymbolicInput(size_t index) const override {
    return m_base.getSymbolicInput(index);
  }

private:
  onnx::InferenceContext& m_base;
  mutable std::map<size_t, onnx::TensorProto> m_made; // tensors built from propagated values
};

// `infer` run on a PropagatedInputs around the context.
onnx::InferenceFunction with_propagated_inputs(onnx::InferenceFunction infer);

} // namespace npucc::schemas

#pragma once

// What an adapter sees: the node, its graph's new nodes, the model's value types, and
// the version change it carries the node across (raise_opset.h).

#include <onnx/onnx_pb.h>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace npucc::opset {

struct AdaptContext {
  // Nodes to insert before the adapted node (constants, reshapes), in order, and after it.
  std::vector<onnx::NodeProto> before;
  std::vector<onnx::NodeProto> after;
  // Every value and node name in the model, for unique new names.
  std::unordered_set<std::string>* taken = nullptr;
  // Declared or inferred types of values (graph inputs, value_info, outputs, initializers).
  const std::unordered_map<std::string, onnx::TypeProto>* types = nullptr;
  int64_t target = 0;  // the opset being raised to (for messages)
  int64_t from = 0;    // the node's version before this change
  int64_t version = 0; // the version this change carries it into

  std::string unique(const std::string& base);
  // A Constant node before the adapted node; returns its output's name.
  std::string constant(const onnx::TensorProto& value, const std::string& hint);
  std::string int64s(const std::vector<int64_t>& values, const std::string& hint,
                     bool scalar = false);
  // A scalar of `elem_type` (a float type) holding `value`.
  std::string float_scalar(float value, int32_t elem_type, const std::string& hint);
  // A node before the adapted one with one output; returns its name.
  std::string node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::string& hint, std::vector<onnx::AttributeProto> attributes = {});
  // The element type and rank of a value (0 / -1 when unknown).
  int32_t elem_type(const std::string& name) const;
  int rank(const std::string& name) const;
  int64_t dim(const std::string& name, int index) const; // -1 when unknown
  // Throws npucc::Error naming the op and the version change.
  [[noreturn]] void refuse(const onnx::NodeProto& node, const std::string& why) const;
};

// Carries `node` from context.from into context.version.
using Adapter = void (*)(onnx::NodeProto& node, AdaptContext& context);

// Attribute helpers.
const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);
void remove_attribute(onnx::NodeProto& node, const std::string& name);
onnx::AttributeProto int_attribute(const std::string& name, int64_t value);
onnx::AttributeProto ints_attribute(const std::string& name, const std::vector<int64_t>& values);
// Sets input `index`, adding empty optional inputs before it as needed.
void set_input(onnx::NodeProto& node, int index, const std::string& name);

// The adapter families (axes_inputs.cpp, attribute_inputs.cpp, semantics.cpp,
// classic_steps.cpp).
void axes_attribute_to_input(onnx::NodeProto& node, AdaptContext& context);
void split_attribute_to_input(onnx::NodeProto& node, AdaptContext& context);
void split_num_outputs(onnx::NodeProto& node, AdaptContext& context);
void slice_attributes_to_inputs(onnx::NodeProto& node, AdaptContext& context);
void topk_k_to_input(onnx::NodeProto& node, AdaptContext& context);
void clip_attributes_to_inputs(onnx::NodeProto& node, AdaptContext& context);
void pad_attributes_to_inputs(onnx::NodeProto& node, AdaptContext& context);
void dropout_10(onnx::NodeProto& node, AdaptContext& context);
void dropout_ratio_to_input(onnx::NodeProto& node, AdaptContext& context);
void dft_axis_to_input(onnx::NodeProto& node, AdaptContext& context);
void softmax_single_axis(onnx::NodeProto& node, AdaptContext& context);
void batch_normalization_14(onnx::NodeProto& node, AdaptContext& context);
void roi_align_16(onnx::NodeProto& node, AdaptContext& context);
void grid_sample_20(onnx::NodeProto& node, AdaptContext& context);
void group_normalization_21(onnx::NodeProto& node, AdaptContext& context);
void resize_13(onnx::NodeProto& node, AdaptContext& context);
// classic_steps.cpp. An adapter may replace the op (Upsample -> Resize, a per-activation
// BatchNormalization -> its formula ending in an Add); the raise goes on with the new op.
void batch_normalization_9(onnx::NodeProto& node, AdaptContext& context);
void drop_consumed_inputs(onnx::NodeProto& node, AdaptContext& context);
void is_test_removed(onnx::NodeProto& node, AdaptContext& context);
void reshape_shape_to_input(onnx::NodeProto& node, AdaptContext& context);
void upsample_scales_to_input(onnx::NodeProto& node, AdaptContext& context);
void upsample_to_resize(onnx::NodeProto& node, AdaptContext& context);
void resize_11(onnx::NodeProto& node, AdaptContext& context);

} // namespace npucc::opset

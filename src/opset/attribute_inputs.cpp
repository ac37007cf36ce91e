// Attributes that became inputs: Slice starts/ends/axes (10), TopK k (10), Clip min/max
// (11), Pad pads/value (11), Dropout ratio (12), DFT axis (20).

#include "opset/adapter.h"

namespace npucc::opset {

namespace {

std::vector<int64_t> ints_of(const onnx::AttributeProto* attribute) {
  return attribute == nullptr
             ? std::vector<int64_t>{}
             : std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

void require_inputs(const onnx::NodeProto& node, AdaptContext& context, int count) {
  if (node.input_size() > count) {
    context.refuse(node, "it has more inputs than its version defines");
  }
}

} // namespace

void slice_attributes_to_inputs(onnx::NodeProto& node, AdaptContext& context) {
  require_inputs(node, context, 1);
  const auto* starts = find_attribute(node, "starts");
  const auto* ends = find_attribute(node, "ends");
  if (starts == nullptr || ends == nullptr) {
    context.refuse(node, "starts and ends are required");
  }
  const std::string base = node.output(0);
  set_input(node, 1, context.int64s(ints_of(starts), base + "_starts"));
  set_input(node, 2, context.int64s(ints_of(ends), base + "_ends"));
  if (const auto* axes = find_attribute(node, "axes")) {
    set_input(node, 3, context.int64s(ints_of(axes), base + "_axes"));
  }
  for (const char* name : {"starts", "ends", "axes"}) {
    remove_attribute(node, name);
  }
}

void topk_k_to_input(onnx::NodeProto& node, AdaptContext& context) {
  require_inputs(node, context, 1);
  const auto* k = find_attribute(node, "k");
  if (k == nullptr) {
    context.refuse(node, "k is required");
  }
  set_input(node, 1, context.int64s({k->i()}, node.output(0) + "_k"));
  remove_attribute(node, "k");
}

void clip_attributes_to_inputs(onnx::NodeProto& node, AdaptContext& context) {
  require_inputs(node, context, 1);
  const int32_t type = context.elem_type(node.input(0));
  if (type == 0) {
    context.refuse(node, "the input's type is unknown");
  }
  int index = 1;
  for (const char* name : {"min", "max"}) {
    if (const auto* bound = find_attribute(node, name)) {
      set_input(node, index, context.float_scalar(bound->f(), type, node.output(0) + "_" + name));
    }
    ++index;
  }
  remove_attribute(node, "min");
  remove_attribute(node, "max");
}

void pad_attributes_to_inputs(onnx::NodeProto& node, AdaptContext& context) {
  require_inputs(node, context, 1);
  const auto* pads = find_attribute(node, "pads");
  if (pads == nullptr) {
    context.refuse(node, "pads is required");
  }
  set_input(node, 1, context.int64s(ints_of(pads), node.output(0) + "_pads"));
  const auto* mode = find_attribute(node, "mode");
  const auto* value = find_attribute(node, "value");
  const bool constant_mode = mode == nullptr || mode->s() == "constant";
  if (constant_mode && value != nullptr && value->f() != 0.0F) {
    const int32_t type = context.elem_type(node.input(0));
    if (type == 0) {
      context.refuse(node, "the input's type is unknown");
    }
    set_input(node, 2, context.float_scalar(value->f(), type, node.output(0) + "_value"));
  }
  remove_attribute(node, "pads");
  remove_attribute(node, "value");
}

void dropout_ratio_to_input(onnx::NodeProto& node, AdaptContext& context) {
  require_inputs(node, context, 1);
  if (const auto* ratio = find_attribute(node, "ratio")) {
    // ratio's type T1 is free of the data's: float32 always fits.
    set_input(
        node, 1,
        context.float_scalar(ratio->f(), onnx::TensorProto::FLOAT, node.output(0) + "_ratio"));
    remove_attribute(node, "ratio");
  }
}

void dft_axis_to_input(onnx::NodeProto& node, AdaptContext& context) {
  require_inputs(node, context, 2);
  // DFT-17's axis defaults to 1, DFT-20's to -2: always written out.
  const auto* axis = find_attribute(node, "axis");
  set_input(node, 2,
            context.int64s({axis == nullptr ? 1 : axis->i()}, node.output(0) + "_axis", true));
  remove_attribute(node, "axis");
}

} // namespace npucc::opset

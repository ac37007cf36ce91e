// Attributes that became inputs and kept their meaning: Reduce* and Squeeze/Unsqueeze axes
// (ReduceSum, Squeeze, Unsqueeze at 13, the other reductions at 18), Split's split (13), and
// Split-18's num_outputs, which it needs when split is not given.

#include "opset/adapter.h"

namespace npucc::opset {

namespace {

std::vector<int64_t> ints_of(const onnx::AttributeProto& attribute) {
  return {attribute.ints().begin(), attribute.ints().end()};
}

void move_ints_to_input(onnx::NodeProto& node, AdaptContext& context, const std::string& name,
                        int index) {
  const auto* attribute = find_attribute(node, name);
  if (attribute == nullptr) {
    return; // absent: the input's absence means the same (all axes, equal parts)
  }
  if (node.input_size() > index) {
    context.refuse(node,
                   "it has both the " + name + " attribute and input " + std::to_string(index));
  }
  std::string input = context.int64s(ints_of(*attribute), node.output(0) + "_" + name);
  remove_attribute(node, name);
  set_input(node, index, input);
}

} // namespace

void axes_attribute_to_input(onnx::NodeProto& node, AdaptContext& context) {
  move_ints_to_input(node, context, "axes", 1);
}

void split_attribute_to_input(onnx::NodeProto& node, AdaptContext& context) {
  move_ints_to_input(node, context, "split", 1);
}

void split_num_outputs(onnx::NodeProto& node, AdaptContext& context) {
  (void)context;
  if (node.input_size() > 1 && !node.input(1).empty()) {
    return;
  }
  // Before 18 an absent split meant equal parts, one per output; 18 wants the count.
  // (Its uneven last part only differs where the old form was invalid.)
  *node.add_attribute() = int_attribute("num_outputs", node.output_size());
}

} // namespace npucc::opset

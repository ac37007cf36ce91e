// Version changes that changed what a node means: Dropout (10: mask type, cast back),
// Softmax/LogSoftmax/Hardmax (13: one axis instead of the 2-D coercion), BatchNormalization (14:
// training outputs), RoiAlign (16: new default coordinate mode), GridSample (20: mode names),
// GroupNormalization (21: scale and bias per channel), Resize (13: tf_half_pixel_for_nn dropped).

#include "opset/adapter.h"

namespace npucc::opset {

void softmax_single_axis(onnx::NodeProto& node, AdaptContext& context) {
  const auto* attribute = find_attribute(node, "axis");
  int64_t axis = attribute == nullptr ? 1 : attribute->i(); // the old default
  const int rank = context.rank(node.input(0));
  if (axis < 0 && rank < 0) {
    context.refuse(node, "a negative axis on an input of unknown rank");
  }
  if (axis < 0) {
    axis += rank;
  }
  remove_attribute(node, "axis");
  if (rank >= 0 && axis == rank - 1) {
    // The coerced 2-D matrix's rows are the last axis: the same computation.
    *node.add_attribute() = int_attribute("axis", -1);
    return;
  }
  // Old meaning: flatten to [d0*...*d(axis-1), d(axis)*...], normalise rows, reshape back
  // (right for any rank, so also where the rank is unknown).
  const std::string input = node.input(0);
  const std::string output = node.output(0);
  std::string shape = context.node("Shape", {input}, output + "_shape");
  std::string flat =
      context.node("Flatten", {input}, output + "_flat", {int_attribute("axis", axis)});
  node.set_input(0, flat);
  *node.add_attribute() = int_attribute("axis", -1);
  std::string rows = context.unique(output + "_rows");
  node.set_output(0, rows);
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  reshape.set_name(context.unique(output + "_reshape"));
  reshape.add_input(rows);
  reshape.add_input(shape);
  reshape.add_output(output);
  context.after.push_back(std::move(reshape));
}

void batch_normalization_14(onnx::NodeProto& node, AdaptContext& context) {
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) {
      context.refuse(node, "its training outputs (mean, var, saved statistics) changed meaning");
    }
  }
}

// Dropout-7 to 9 (always inference) gave its mask the data's type, 10 and later bool: the
// bool mask is cast back under the old name, so its readers see the type they read. Its
// values are ONNX's: in inference nothing is dropped, every mask element is true (1).
// ONNX Runtime's kernels for versions 7 to 11 write zeros there instead (its 12 and later
// write true), so a model that reads the mask computes differently in ORT once raised.
void dropout_10(onnx::NodeProto& node, AdaptContext& context) {
  if (node.output_size() < 2 || node.output(1).empty()) {
    return;
  }
  const int32_t type = context.elem_type(node.input(0));
  if (type == 0) {
    context.refuse(node, "its mask output changed type (the data's type -> bool), and the "
                         "data's type is unknown");
  }
  const std::string mask = node.output(1);
  const std::string as_bool = context.unique(mask + "_bool");
  node.set_output(1, as_bool);
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(context.unique(mask + "_cast"));
  cast.add_input(as_bool);
  cast.add_output(mask);
  *cast.add_attribute() = int_attribute("to", type);
  context.after.push_back(std::move(cast));
}

void roi_align_16(onnx::NodeProto& node, AdaptContext& context) {
  (void)context;
  if (find_attribute(node, "coordinate_transformation_mode") == nullptr) {
    onnx::AttributeProto mode;
    mode.set_name("coordinate_transformation_mode");
    mode.set_type(onnx::AttributeProto::STRING);
    mode.set_s("output_half_pixel"); // what RoiAlign-10 computed
    *node.add_attribute() = mode;
  }
}

void grid_sample_20(onnx::NodeProto& node, AdaptContext& context) {
  (void)context;
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == "mode") {
      if (attribute.s() == "bilinear") {
        attribute.set_s("linear");
      } else if (attribute.s() == "bicubic") {
        attribute.set_s("cubic");
      }
    }
  }
}

void group_normalization_21(onnx::NodeProto& node, AdaptContext& context) {
  const auto* groups = find_attribute(node, "num_groups");
  const int64_t channels = context.dim(node.input(0), 1);
  if (groups == nullptr || groups->i() <= 0 || channels <= 0 || channels % groups->i() != 0) {
    context.refuse(node, "its channel count must be known and a multiple of num_groups to "
                         "give scale and bias per channel");
  }
  const int64_t g = groups->i();
  // [G] -> [G, 1] -> [G, C/G] -> [C]: each group's value repeated for its channels.
  // (GroupNormalization-21's stash_type, float32, is what a float32 model computed in.)
  for (int index : {1, 2}) {
    const std::string per_group = node.input(index);
    const std::string base = per_group + "_per_channel";
    std::string column = context.node("Unsqueeze", {per_group, context.int64s({1}, base + "_axes")},
                                      base + "_column");
    std::string tiled = context.node(
        "Expand", {column, context.int64s({g, channels / g}, base + "_tile")}, base + "_tiled");
    node.set_input(index,
                   context.node("Reshape", {tiled, context.int64s({channels}, base + "_c")}, base));
  }
}

void resize_13(onnx::NodeProto& node, AdaptContext& context) {
  const auto* mode = find_attribute(node, "coordinate_transformation_mode");
  if (mode != nullptr && mode->s() == "tf_half_pixel_for_nn") {
    context.refuse(node, "coordinate_transformation_mode tf_half_pixel_for_nn was removed");
  }
}

} // namespace npucc::opset

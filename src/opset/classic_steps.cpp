// The version changes models of opsets 7 to 9 (AlexNet, VGG, Inception, model-zoo
// exports) cross on their way up: BatchNormalization's `spatial` (9), and from older
// opsets its and Dropout's `consumed_inputs` (6) and `is_test` (7), Reshape's `shape` (5),
// Upsample's scales (9), Upsample replaced by Resize (10) and Resize-10's implicit coordinates
// written out (11). The rewrites are those of ONNX's version converter.

#include "opset/adapter.h"

namespace npucc::opset {

namespace {

std::vector<float> floats_of(const onnx::AttributeProto* attribute) {
  return attribute == nullptr
             ? std::vector<float>{}
             : std::vector<float>(attribute->floats().begin(), attribute->floats().end());
}

std::string float_tensor(AdaptContext& context, const std::vector<float>& values,
                         const std::string& hint) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (float value : values) {
    tensor.add_float_data(value);
  }
  return context.constant(tensor, hint);
}

onnx::AttributeProto string_attribute(const std::string& name, const std::string& value) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto::STRING);
  attribute.set_s(value);
  return attribute;
}

float float_attribute_or(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const auto* attribute = find_attribute(node, name);
  return attribute == nullptr ? fallback : attribute->f();
}

// Per-activation normalisation (spatial = 0: scale, B, mean and var hold one value per
// element of a sample, [C, D1, ...]) is in inference an elementwise formula, which
// broadcasting aligns with X's trailing dims: Y = (X - mean) / sqrt(var + epsilon) * scale + B.
void per_activation_formula(onnx::NodeProto& node, AdaptContext& context) {
  const int32_t type = context.elem_type(node.input(0));
  if (type == 0) {
    context.refuse(node, "spatial = 0 (per-activation statistics) on an input of unknown type");
  }
  const std::string base = node.output(0);
  const std::string epsilon =
      context.float_scalar(float_attribute_or(node, "epsilon", 1e-5F), type, base + "_epsilon");
  const std::string centred =
      context.node("Sub", {node.input(0), node.input(3)}, base + "_centred");
  const std::string variance = context.node("Add", {node.input(4), epsilon}, base + "_variance");
  const std::string deviation = context.node("Sqrt", {variance}, base + "_deviation");
  const std::string normal = context.node("Div", {centred, deviation}, base + "_normal");
  const std::string scaled = context.node("Mul", {normal, node.input(1)}, base + "_scaled");
  const std::string bias = node.input(2);
  node.set_op_type("Add"); // raise_opset.cpp carries it on as an Add
  node.clear_attribute();
  node.clear_input();
  node.add_input(scaled);
  node.add_input(bias);
}

// Whether every output dim is known and at least its input dim.
bool upsamples(const onnx::NodeProto& node, const AdaptContext& context) {
  const int rank = context.rank(node.input(0));
  if (rank <= 0 || context.rank(node.output(0)) != rank) {
    return false;
  }
  for (int i = 0; i < rank; ++i) {
    const int64_t in = context.dim(node.input(0), i);
    const int64_t out = context.dim(node.output(0), i);
    if (in < 0 || out < in) {
      return false;
    }
  }
  return true;
}

} // namespace

void batch_normalization_9(onnx::NodeProto& node, AdaptContext& context) {
  const auto* spatial = find_attribute(node, "spatial");
  const bool per_activation = spatial != nullptr && spatial->i() == 0;
  remove_attribute(node, "spatial");
  if (!per_activation) {
    return; // spatial = 1, the default, is what version 9 always does
  }
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) {
      context.refuse(node, "spatial = 0 (per-activation statistics) with training outputs");
    }
  }
  per_activation_formula(node, context);
}

void drop_consumed_inputs(onnx::NodeProto& node, AdaptContext& context) {
  (void)context;
  remove_attribute(node, "consumed_inputs"); // a hint for in-place buffers, never a value
}

void is_test_removed(onnx::NodeProto& node, AdaptContext& context) {
  const auto* is_test = find_attribute(node, "is_test");
  if (is_test == nullptr || is_test->i() == 0) {
    context.refuse(node, "is_test = 0 is training mode, which version 7 and later do not have");
  }
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) {
      context.refuse(node, "it has outputs besides its first in test mode");
    }
  }
  remove_attribute(node, "is_test");
}

void reshape_shape_to_input(onnx::NodeProto& node, AdaptContext& context) {
  const auto* shape = find_attribute(node, "shape");
  if (node.input_size() > 1 || shape == nullptr) {
    context.refuse(node, "it needs exactly one input and a shape attribute");
  }
  set_input(node, 1,
            context.int64s(std::vector<int64_t>(shape->ints().begin(), shape->ints().end()),
                           node.output(0) + "_shape"));
  remove_attribute(node, "shape");
  remove_attribute(node, "consumed_inputs");
}

void upsample_scales_to_input(onnx::NodeProto& node, AdaptContext& context) {
  const auto* scales = find_attribute(node, "scales");
  if (node.input_size() > 1 || scales == nullptr) {
    context.refuse(node, "it needs exactly one input and a scales attribute");
  }
  set_input(node, 1, float_tensor(context, floats_of(scales), node.output(0) + "_scales"));
  remove_attribute(node, "scales");
}

void upsample_to_resize(onnx::NodeProto& node, AdaptContext& context) {
  (void)context;
  // Resize-10 is Upsample-9 under a new name: the same inputs, attribute and meaning.
  node.set_op_type("Resize");
}

void resize_11(onnx::NodeProto& node, AdaptContext& context) {
  if (node.input_size() != 2) {
    context.refuse(node, "it needs exactly the inputs X and scales");
  }
  const auto* mode = find_attribute(node, "mode");
  const std::string name = mode == nullptr ? "nearest" : mode->s();
  if (name != "nearest" && name != "linear") {
    context.refuse(node, "mode \"" + name + "\" is neither nearest nor linear");
  }
  // Resize-10 maps output x to input x / scale; 11 says so with these attributes. For
  // nearest it takes the floor when upsampling (as Upsample, which only upsamples, did),
  // but ONNX Runtime's Resize-10 rounds up when downsampling: that case is refused.
  if (name == "nearest" && !upsamples(node, context)) {
    context.refuse(node, "nearest mode on a resize not known to upsample (Resize-10 rounds "
                         "down when upsampling, up when downsampling)");
  }
  // roi is required in 11 but read only by tf_crop_and_resize: empty.
  const std::string scales = node.input(1);
  node.set_input(1, float_tensor(context, {}, node.output(0) + "_roi"));
  node.add_input(scales);
  remove_attribute(node, "coordinate_transformation_mode");
  remove_attribute(node, "nearest_mode");
  *node.add_attribute() = string_attribute("coordinate_transformation_mode", "asymmetric");
  if (name == "nearest") {
    *node.add_attribute() = string_attribute("nearest_mode", "floor");
  }
}

} // namespace npucc::opset

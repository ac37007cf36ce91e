#include "schemas/inference.h"
#include "schemas/inference_ops.h"
#include "schemas/propagated_inputs.h"

namespace npucc::schemas {

namespace {

// Versions that widened types, or added an attribute whose default keeps the old
// behaviour, keep the old version's inference: {new version, ONNX 1.12 version}.
struct Inherited {
  const char* op;
  int since;
  int onnx_version;
};

constexpr Inherited k_inherited[] = {
    {"ScatterElements", 18, 16}, {"ScatterND", 18, 16},       {"CastLike", 19, 15},
    {"Equal", 19, 13},           {"Identity", 19, 16},        {"If", 19, 16},
    {"Loop", 19, 16},            {"QuantizeLinear", 19, 13},  {"Reshape", 19, 14},
    {"Scan", 19, 16},            {"Shape", 19, 15},           {"Size", 19, 13},
    {"ConstantOfShape", 20, 9},  {"IsInf", 20, 10},           {"IsNaN", 20, 13},
    {"CastLike", 21, 15},        {"ConstantOfShape", 21, 9},  {"Flatten", 21, 13},
    {"Identity", 21, 16},        {"If", 21, 16},              {"Loop", 21, 16},
    {"QLinearMatMul", 21, 10},   {"Reshape", 21, 14},         {"Scan", 21, 16},
    {"Shape", 21, 15},           {"Size", 21, 13},            {"Squeeze", 21, 13},
    {"Transpose", 21, 13},       {"Unsqueeze", 21, 13},       {"Acos", 22, 7},
    {"Acosh", 22, 9},            {"Asin", 22, 7},             {"Asinh", 22, 9},
    {"Atan", 22, 7},             {"Atanh", 22, 9},            {"Bernoulli", 22, 15},
    {"Conv", 22, 11},            {"ConvTranspose", 22, 11},   {"Cos", 22, 7},
    {"Cosh", 22, 9},             {"Det", 22, 11},             {"Dropout", 22, 13},
    {"Elu", 22, 6},              {"EyeLike", 22, 9},          {"GRU", 22, 14},
    {"GlobalAveragePool", 22, 1}, {"GlobalLpPool", 22, 2},     {"GlobalMaxPool", 22, 1},
    {"HardSigmoid", 22, 6},      {"HardSwish", 22, 14},       {"InstanceNormalization", 22, 6},
    {"LSTM", 22, 14},            {"LpNormalization", 22, 1},  {"MaxRoiPool", 22, 1},
    {"MaxUnpool", 22, 11},       {"Multinomial", 22, 7},      {"NegativeLogLikelihoodLoss", 22, 13},
    {"RNN", 22, 14},             {"RandomNormal", 22, 1},     {"RandomNormalLike", 22, 1},
    {"RandomUniform", 22, 1},    {"RandomUniformLike", 22, 1}, {"RoiAlign", 22, 16},
    {"Round", 22, 11},           {"Selu", 22, 6},             {"Sin", 22, 7},
    {"Sinh", 22, 9},             {"Softplus", 22, 1},         {"Softsign", 22, 1},
    {"Tan", 22, 7},              {"ThresholdedRelu", 22, 10}, {"CastLike", 23, 15},
    {"ConstantOfShape", 23, 9},  {"Flatten", 23, 13},         {"Identity", 23, 16},
    {"If", 23, 16},              {"Loop", 23, 16},            {"Reshape", 23, 14},
    {"Scan", 23, 16},            {"Shape", 23, 15},           {"Size", 23, 13},
    {"Squeeze", 23, 13},         {"Transpose", 23, 13},       {"Unsqueeze", 23, 13},
    {"CastLike", 24, 15},        {"ConstantOfShape", 24, 9},  {"Flatten", 24, 13},
    {"Identity", 24, 16},        {"If", 24, 16},              {"Loop", 24, 16},
    {"Reshape", 24, 14},         {"Scan", 24, 16},            {"Shape", 24, 15},
    {"Size", 24, 13},            {"SplitToSequence", 24, 11}, {"Squeeze", 24, 13},
    {"TopK", 24, 11},            {"Transpose", 24, 13},       {"Unsqueeze", 24, 13},
    {"CastLike", 25, 15},        {"ConstantOfShape", 25, 9},  {"Flatten", 25, 13},
    {"Identity", 25, 16},        {"If", 25, 16},              {"Loop", 25, 16},
    {"Reshape", 25, 14},         {"Scan", 25, 16},            {"Shape", 25, 15},
    {"Size", 25, 13},            {"Squeeze", 25, 13},         {"Transpose", 25, 13},
    {"Unsqueeze", 25, 13},
};

// Versions whose inference is npucc's own (src/schemas/inference_*.cpp). Reduce* 18/20 and
// LpPool 18/22 look like widenings but are not: Reduce*-13 (but ReduceSum) read an `axes`
// attribute, now an input, and LpPool-11's inference ignores the dilations LpPool-18 added;
// the pools of opsets 19 and 22 also drop a ceil_mode window that starts in the right padding,
// Cast-13's inference refuses the element types Cast 19 to 25 added, and Constant 19 to 25
// pass their value_ints on by data propagation.
struct Own {
  const char* op;
  int since;
  Inference (*make)();
};

const Own k_own[] = {
    {"BitwiseAnd", 18, elementwise_broadcast},   {"BitwiseNot", 18, same_as_first_input},
    {"BitwiseOr", 18, elementwise_broadcast},    {"BitwiseXor", 18, elementwise_broadcast},
    {"CenterCropPad", 18, center_crop_pad},      {"Col2Im", 18, col2im},
    {"GroupNormalization", 18, same_as_first_input}, {"Mish", 18, same_as_first_input},
    {"OptionalGetElement", 18, optional_get_element}, {"OptionalHasElement", 18, optional_has_element},
    {"Pad", 18, pad_with_axes},                  {"Resize", 18, resize_with_axes},
    {"Split", 18, split_with_num_outputs},       {"AveragePool", 19, pool_with_dilations},
    {"DeformConv", 19, deform_conv},             {"DequantizeLinear", 19, dequantize_linear},
    {"Pad", 19, pad_with_axes},                  {"Resize", 19, resize_with_axes},
    {"AffineGrid", 20, affine_grid},             {"DFT", 20, dft_with_inputs},
    {"Gelu", 20, same_as_first_input},           {"GridSample", 20, grid_sample},
    {"ImageDecoder", 20, image_decoder},         {"RegexFullMatch", 20, regex_full_match},
    {"StringConcat", 20, elementwise_broadcast}, {"StringSplit", 20, string_split},
    {"DequantizeLinear", 21, dequantize_linear}, {"GroupNormalization", 21, same_as_first_input},
    {"Pad", 21, pad_with_axes},                  {"QuantizeLinear", 21, quantize_linear},
    {"AveragePool", 22, pool_with_dilations},    {"DeformConv", 22, deform_conv},
    {"GridSample", 22, grid_sample},             {"Mish", 22, same_as_first_input},
    {"Attention", 23, attention},                {"DequantizeLinear", 23, dequantize_linear},
    {"Pad", 23, pad_with_axes},                  {"QuantizeLinear", 23, quantize_linear},
    {"RMSNormalization", 23, rms_normalization}, {"RotaryEmbedding", 23, same_as_first_input},
    {"Attention", 24, attention},                {"DequantizeLinear", 24, dequantize_linear},
    {"Pad", 24, pad_with_axes},                  {"QuantizeLinear", 24, quantize_linear},
    {"Swish", 24, same_as_first_input},          {"TensorScatter", 24, same_as_first_input},
    {"Attention", 25, attention},                {"DequantizeLinear", 25, dequantize_linear},
    {"Pad", 25, pad_with_axes},                  {"QuantizeLinear", 25, quantize_linear},
    {"BitCast", 26, bit_cast},                   {"CumProd", 26, same_as_first_input},
    {"LpPool", 18, pool_with_dilations},         {"Cast", 19, cast},
    {"Cast", 21, cast},                          {"Cast", 23, cast},
    {"Cast", 24, cast},                          {"Cast", 25, cast},
    {"Constant", 19, constant},                  {"Constant", 21, constant},
    {"Constant", 23, constant},                  {"Constant", 24, constant},
    {"Constant", 25, constant},                  {"ReduceL1", 18, reduce_with_axes_input},
    {"ReduceL2", 18, reduce_with_axes_input},    {"ReduceLogSum", 18, reduce_with_axes_input},
    {"ReduceLogSumExp", 18, reduce_with_axes_input}, {"ReduceMax", 18, reduce_with_axes_input},
    {"ReduceMean", 18, reduce_with_axes_input},  {"ReduceMin", 18, reduce_with_axes_input},
    {"ReduceProd", 18, reduce_with_axes_input},  {"ReduceSumSquare", 18, reduce_with_axes_input},
    {"ReduceMax", 20, reduce_with_axes_input},   {"ReduceMin", 20, reduce_with_axes_input},
    {"LpPool", 22, pool_with_dilations},         {"MaxPool", 22, max_pool_22},
};

} // namespace

const std::map<std::string, Inference>& inference_table() {
  static const std::map<std::string, Inference> table = [] {
    std::map<std::string, Inference> entries;
    for (const auto& entry : k_inherited) {
      // ONNX 1.12's functions read constant inputs from initializers only: also hand them
      // the values data propagation knows (Reshape's shape, Unsqueeze's axes, TopK's K).
      auto inference = inherit(entry.op, entry.onnx_version);
      inference.infer = with_propagated_inputs(inference.infer);
      entries[version_key("", entry.op, entry.since)] = inference;
    }
    for (const auto& entry : k_own) {
      entries[version_key("", entry.op, entry.since)] = entry.make();
    }
    for (auto& [key, inference] : ml_inference_table()) {
      entries[key] = inference;
    }
    return entries;
  }();
  return table;
}

} // namespace npucc::schemas

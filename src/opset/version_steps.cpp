// Which operator version changes npucc carries a node across, and how. Sources: ONNX's
// Changelog (research/onnx/Changelog-opsets-18-26.md) for 18 to 26, ONNX 1.12's schemas
// and its version converter's adapter list (onnx/version_converter/convert.h) up to 17.
// A change not named here is carried only when the new schema merely widens the old one
// (signature_difference); from version 9 on, ONNX bumped a version without changing the
// signature only to widen types or accepted values. Before 9 (broadcasting rules, PRelu's
// slope) nothing is carried unless named.

#include "opset/version_steps.h"

#include <map>

namespace npucc::opset {

namespace {

// The first version whose signature-only changes are trusted.
constexpr int k_trusted_from = 9;

struct Known {
  Adapter adapter; // nullptr: reviewed compatible, only defaults or values were added
  const char* note;
};

using Key = std::pair<std::string, int>;

const std::map<Key, Known>& known_steps() {
  static const std::map<Key, Known> steps = [] {
    std::map<Key, Known> out;
    auto add = [&](std::initializer_list<const char*> ops, int version, Adapter adapter,
                   const char* note) {
      for (const char* op : ops) {
        out[{op, version}] = {adapter, note};
      }
    };
    // Attributes that became inputs.
    add({"ReduceSum", "Squeeze", "Unsqueeze"}, 13, axes_attribute_to_input, "axes -> input");
    add({"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
         "ReduceMin", "ReduceProd", "ReduceSumSquare"},
        18, axes_attribute_to_input, "axes -> input");
    add({"Split"}, 13, split_attribute_to_input, "split -> input");
    add({"Split"}, 18, split_num_outputs, "num_outputs when split is not given");
    add({"Slice"}, 10, slice_attributes_to_inputs, "starts, ends, axes -> inputs");
    add({"TopK"}, 10, topk_k_to_input, "k -> input K");
    add({"Clip"}, 11, clip_attributes_to_inputs, "min, max -> inputs");
    add({"Pad"}, 11, pad_attributes_to_inputs, "pads, value -> inputs");
    add({"Dropout"}, 12, dropout_ratio_to_input, "ratio -> input");
    add({"DFT"}, 20, dft_axis_to_input, "axis -> input");
    // Meaning changed.
    add({"Softmax", "LogSoftmax", "Hardmax"}, 13, softmax_single_axis,
        "one axis instead of the 2-D coercion at axis");
    add({"BatchNormalization"}, 14, batch_normalization_14, "outputs of training mode");
    add({"RoiAlign"}, 16, roi_align_16, "coordinate_transformation_mode default half_pixel");
    add({"GridSample"}, 20, grid_sample_20, "mode names linear, cubic");
    add({"GroupNormalization"}, 21, group_normalization_21, "scale, bias per channel");
    add({"Resize"}, 13, resize_13, "tf_half_pixel_for_nn removed");
    // Reviewed compatible: an attribute or optional input added whose default keeps the
    // old behaviour, or an input made optional.
    add({"ArgMax", "ArgMin"}, 12, nullptr, "select_last_index = 0");
    add({"TopK"}, 11, nullptr, "largest = 1, sorted = 1");
    add({"Constant"}, 11, nullptr, "sparse_value added");
    add({"Constant"}, 12, nullptr, "value_* forms added");
    add({"Gemm"}, 11, nullptr, "C optional");
    add({"GatherND"}, 12, nullptr, "batch_dims = 0");
    add({"DepthToSpace"}, 11, nullptr, "mode = DCR, the old order");
    add({"QuantizeLinear", "DequantizeLinear"}, 13, nullptr, "axis: per-tensor unchanged");
    add({"Shape"}, 15, nullptr, "start, end: the whole shape");
    add({"Reshape"}, 14, nullptr, "allowzero = 0");
    add({"GRU", "LSTM", "RNN"}, 14, nullptr, "layout = 0");
    add({"ScatterElements", "ScatterND"}, 16, nullptr, "reduction = none");
    add({"ScatterElements", "ScatterND"}, 18, nullptr, "reduction max, min added");
    add({"Resize"}, 18, nullptr, "antialias = 0, axes all, keep_aspect_ratio_policy unused");
    add({"Pad"}, 18, nullptr, "optional axes: all");
    add({"AveragePool"}, 19, nullptr, "dilations = 1");
    add({"AveragePool", "MaxPool"}, 10, nullptr, "ceil_mode = 0, dilations = 1");
    add({"LpPool"}, 18, nullptr, "ceil_mode = 0, dilations = 1");
    add({"Cast", "CastLike", "QuantizeLinear"}, 19, nullptr, "saturate: float8 only");
    add({"DequantizeLinear"}, 21, nullptr, "block_size = 0: per tensor or axis");
    add({"QuantizeLinear"}, 21, nullptr, "block_size = 0, output_dtype = zero point's");
    add({"QuantizeLinear"}, 23, nullptr, "precision = y_scale's type");
    add({"DequantizeLinear"}, 23, nullptr, "output_dtype = x_scale's type");
    add({"Cast", "CastLike"}, 24, nullptr, "round_mode: float8e8m0 only");
    // The Changelog prints Selu's defaults rounded (1.67326, 1.0507); ONNX 1.12 has them
    // to float precision: the same constants.
    add({"Selu"}, 22, nullptr, "types");
    add({"Dropout"}, 10, dropout_10, "mask output: bool instead of the data type");
    // The classics (opsets 7 to 9: classic_steps.cpp).
    add({"BatchNormalization"}, 9, batch_normalization_9, "spatial removed");
    add({"Reshape"}, 5, reshape_shape_to_input, "shape -> input");
    add({"BatchNormalization", "Dropout"}, 6, drop_consumed_inputs, "consumed_inputs removed");
    add({"BatchNormalization", "Dropout"}, 7, is_test_removed, "is_test removed");
    add({"Upsample"}, 9, upsample_scales_to_input, "scales -> input");
    add({"Upsample"}, 10, upsample_to_resize, "deprecated: Resize-10 is the same op");
    add({"Resize"}, 11, resize_11, "roi input, coordinate modes written out");
    add({"MaxPool"}, 8, nullptr, "storage_order = 0 (row-major), Indices output optional");
    // Version 8 added multidirectional broadcasting: only more inputs are accepted.
    add({"Sum", "Max", "Min", "Mean"}, 8, nullptr, "broadcasting added");
    return out;
  }();
  return steps;
}

} // namespace

VersionStep version_step(const std::string& op, const onnx::OpSchema& before,
                         const onnx::OpSchema& after) {
  const int version = after.SinceVersion();
  // Before the deprecation check: an adapter may replace a deprecated op (Upsample-10).
  auto it = known_steps().find({op, version});
  if (it != known_steps().end()) {
    return it->second.adapter == nullptr ? VersionStep{StepKind::compatible, nullptr, ""}
                                         : VersionStep{StepKind::adapt, it->second.adapter, ""};
  }
  if (after.Deprecated()) {
    return {StepKind::refuse, nullptr, "deprecated at version " + std::to_string(version)};
  }
  std::string difference = signature_difference(before, after);
  if (difference.empty() && version >= k_trusted_from) {
    return {StepKind::compatible, nullptr, ""};
  }
  if (difference.empty()) {
    difference = "changes before version " + std::to_string(k_trusted_from) +
                 " are carried only when reviewed";
  }
  return {StepKind::refuse, nullptr, difference};
}

} // namespace npucc::opset

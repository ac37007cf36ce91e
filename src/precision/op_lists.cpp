#include "precision/op_lists.h"

#include "npucc/error.h"
#include "schemas/registry.h"
#include "util/strings.h"

#include <nlohmann/json.hpp>
#include <onnx/defs/schema.h>

namespace npucc::precision {

// Where the lists come from (research/op-lists/):
// - TF = tensorflow grappler auto_mixed_precision_lists.h @ e1c1b297, class
//   AutoMixedPrecisionListsCuda (float16) and AutoMixedPrecisionListsMkl (bfloat16),
//   mapped from TF op names to the ONNX op that computes the same thing;
// - AC = PyTorch autocast (autocast_mode.h/.cpp @ 008ec6b): lower_precision_fp, fp32,
//   fp32_set_opt_dtype lists; CUDA for float16, CPU for bfloat16;
// - OCC = onnxconverter-common float16.py DEFAULT_OP_BLOCK_LIST.
// Where the sources disagree the safer one wins and the entry says so.

namespace {

// Matrix and recurrent ops: TF allow (MatMul, BatchMatMul{,V2}, Conv2D/3D,
// DepthwiseConv2dNative, Conv2DBackpropInput = transposed conv, Einsum, CudnnRNN /
// BlockLSTM / GRUBlockCell) = AC lower_precision_fp (mm, bmm, matmul, linear, addmm = Gemm,
// conv*d, conv_transpose*d, einsum, lstm_cell, gru_cell, rnn_*_cell).
// Attention-23 (scaled dot-product attention: two MatMuls around a softmax) is AC's
// scaled_dot_product_attention, lower_precision_fp; its softmax is kept float32 through the
// op's own softmax_precision attribute, which the rewrite sets on a lowered node
// (low_attributes.cpp), and its float attn_mask input is pinned float32 (schema_check.cpp).
const std::set<std::string> k_allow_float16 = {
    "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "LSTM", "GRU", "RNN", "Attention",
};
// bfloat16: TF Mkl allow has no RNN op, AC CPU has mkldnn_rnn_layer; they are listed and
// the schema check keeps them float32 below opset 22 (where ONNX RNNs gain bfloat16).
const std::set<std::string>& allow_bfloat16() {
  return k_allow_float16;
}

// TF infer: Add/AddV2/BiasAdd = Add, AddN = Sum, Sub, Mul, RealDiv = Div, AvgPool =
// AveragePool/GlobalAveragePool, FusedBatchNormV2/V3 (with U=float: statistics stay float32,
// see schema_check.cpp) = BatchNormalization, Elu, LeakyRelu, Selu, Sigmoid, Softsign, Sqrt,
// Tanh, Erf (float16 only: TF Mkl drops Erf). Also infer, by analogy with TF's elementwise
// activations: HardSigmoid, HardSwish, PRelu (AC lower_precision_fp), Celu,
// ThresholdedRelu, Mean (element-wise mean of inputs, like AddN), InstanceNormalization
// (its schema ties scale/B to the input type, so the pinned statistics keep it float32).
// Moved to deny against TF, following AC fp32: Log (AC log), Reciprocal (AC reciprocal),
// Softplus (AC softplus), Softmax / LogSoftmax (AC softmax/log_softmax fp32_set_opt_dtype);
// one of low values read only by low matrix ops runs low all the same (paint.cpp says why).
// Opsets 18 to 26: Gelu-20, Mish-18, Swish-24 are element-wise activations like Elu and
// HardSwish (AC runs gelu, mish and silu in the input type: in no fp32 list), bounded by
// |x| so they cannot overflow; RotaryEmbedding-23 rotates pairs of values by cached cos/sin
// (x*cos - y*sin: a Mul/Add pair, bounded by |x|; the angles themselves are computed before,
// into the caches); Col2Im-18 sums the few overlapping patches of a block, like Sum.
const std::set<std::string> k_infer_common = {
    "Add",
    "Sum",
    "Sub",
    "Mul",
    "Div",
    "AveragePool",
    "GlobalAveragePool",
    "BatchNormalization",
    "Elu",
    "LeakyRelu",
    "Selu",
    "Sigmoid",
    "Softsign",
    "Sqrt",
    "Tanh",
    "HardSigmoid",
    "HardSwish",
    "PRelu",
    "Celu",
    "ThresholdedRelu",
    "Mean",
    "InstanceNormalization",
    "Gelu",
    "Mish",
    "Swish",
    "RotaryEmbedding",
    "Col2Im",
};

// TF deny: Exp, Pow, Mean = ReduceMean, Sum = ReduceSum, L2Loss = ReduceSumSquare /
// ReduceL2, SoftmaxCrossEntropyWithLogits = SoftmaxCrossEntropyLoss. AC fp32: log =
// Log, exp, pow, logsumexp = ReduceLogSumExp/ReduceLogSum, prod = ReduceProd, norms =
// ReduceL1/ReduceL2/LpNormalization, layer_norm = LayerNormalization, cumsum = CumSum
// (also OCC), losses = NegativeLogLikelihoodLoss, acos/asin/cosh/sinh/tan, reciprocal,
// softplus, softmax/log_softmax (+ Hardmax, the same family). MeanVarianceNormalization is
// reductions + division, like layer_norm.
// Normalisations: LayerNormalization-17, GroupNormalization-18/21 and RMSNormalization-23
// stay float32 as whole ops (AC fp32: layer_norm, group_norm, rms_norm). Their stash_type
// (default float32) only covers stage one (mean, variance); in a low node the normalised
// values are cast back to the low type before scale and bias, which the schema ties to the
// input type, so learned scale/bias would be rounded too, and runtimes differ in whether
// they honour stash_type at all (a fused kernel in T is common). They are memory-bound,
// so keeping them float32 costs little of what fast/fast1 gain on the matrix ops.
// CumProd-26 as CumSum (AC cumprod fp32: the running product loses precision, and overflows,
// with length); DFT-17/20 and STFT-17 as AC's fft_* (fp32: each output sums all n inputs);
// AffineGrid-20 makes sampling coordinates in [-1, 1], which bfloat16 resolves only to 2^-8
// (a pixel of a 256-wide image): the grid it feeds would sample the wrong pixels.
const std::set<std::string> k_deny_common = {
    "Exp",
    "Log",
    "Pow",
    "ReduceMean",
    "ReduceSum",
    "ReduceSumSquare",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceProd",
    "Softmax",
    "LogSoftmax",
    "Hardmax",
    "SoftmaxCrossEntropyLoss",
    "NegativeLogLikelihoodLoss",
    "LayerNormalization",
    "LpNormalization",
    "MeanVarianceNormalization",
    "CumSum",
    "Reciprocal",
    "Softplus",
    "Acos",
    "Asin",
    "Cosh",
    "Sinh",
    "Tan",
    "GroupNormalization",
    "RMSNormalization",
    "CumProd",
    "DFT",
    "STFT",
    "AffineGrid",
};

// TF clear, mapped: Abs, ArgMax/ArgMin, Ceil/Floor/Round/Sign/Neg, ClipByValue/Relu6 =
// Clip, Concat, DepthToSpace/SpaceToDepth, BroadcastTo = Expand, Equal/Greater/Less(Equal),
// Gather/GatherNd = Gather/GatherElements/GatherND, Identity/Snapshot/StopGradient =
// Identity/Dropout, IsInf/IsNan, Max/Min (reductions) = ReduceMax/ReduceMin, Maximum/
// Minimum = Max/Min, MaxPool family = MaxPool/GlobalMaxPool, Pad/MirrorPad = Pad, Relu,
// Reshape/ExpandDims/Squeeze = Reshape/Flatten/Unsqueeze/Squeeze, ResizeNearestNeighbor
// (+ ResizeBilinear in Intel's fork) = Resize/Upsample with roi/scales pinned float32 (ORT's
// float16 tool; OCC blocks Resize, Min, Max and TopK outright, but they are exact in the
// low type once their index inputs stay float32), ReverseSequence, Select/Where = Where,
// Shape, Slice/StridedSlice, Split, Tile, TopK, Transpose, OneHot and Size (float16 only:
// TF Mkl drops them). Opsets 18 to 26: CenterCropPad-18 (Slice + Pad) and TensorScatter-24
// (a KV-cache write: ScatterND-like data movement) copy values, exact in the low type.
const std::set<std::string> k_clear_common = {
    "Abs",           "ArgMax",      "ArgMin",        "Ceil",
    "Floor",         "Round",       "Sign",          "Neg",
    "Clip",          "Concat",      "DepthToSpace",  "SpaceToDepth",
    "Expand",        "Equal",       "Greater",       "GreaterOrEqual",
    "Less",          "LessOrEqual", "Gather",        "GatherElements",
    "GatherND",      "Identity",    "Dropout",       "IsInf",
    "IsNaN",         "ReduceMax",   "ReduceMin",     "Max",
    "Min",           "MaxPool",     "GlobalMaxPool", "Pad",
    "Relu",          "Reshape",     "Flatten",       "Unsqueeze",
    "Squeeze",       "Resize",      "Upsample",      "ReverseSequence",
    "Where",         "Shape",       "Slice",         "Split",
    "Tile",          "TopK",        "Transpose",     "CenterCropPad",
    "TensorScatter",
};

// Ops whose output type comes from an attribute or that make values from nothing.
// BitCast-26 reinterprets bits: a float32 value's bits are its meaning, so its input keeps
// its type too. The window functions and MelWeightMatrix (17) take output_datatype.
const std::set<std::string> k_never_lowered = {
    "Cast",
    "CastLike",
    "BitCast",
    "Constant",
    "ConstantOfShape",
    "Range",
    "EyeLike",
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "SequenceEmpty",
    "HannWindow",
    "HammingWindow",
    "BlackmanWindow",
    "MelWeightMatrix",
    "If",
    "Loop",
    "Scan",
};

// Ops added in opsets 17 to 26 that are in no list on purpose: they keep their original
// precision (kept reason "not_listed", or "no_float").
const std::map<std::string, std::string> k_unlisted = {
    {"BitwiseAnd", "integer types only: no float data"},
    {"BitwiseOr", "integer types only: no float data"},
    {"BitwiseXor", "integer types only: no float data"},
    {"BitwiseNot", "integer types only: no float data"},
    {"ImageDecoder", "bytes in, uint8 out: no float data"},
    {"RegexFullMatch", "strings only"},
    {"StringConcat", "strings only"},
    {"StringSplit", "strings only"},
    {"OptionalGetElement", "optional plumbing: no arithmetic"},
    {"OptionalHasElement", "optional plumbing: no arithmetic"},
    {"SequenceMap", "a body over sequences: the rewrite does not lower sequence values"},
    {"DeformConv",
     "its sampling offsets (in pixels) share the input's type: lowering them would round "
     "positions (bfloat16 resolves 1 in 128 at 100 px)"},
};

} // namespace

const std::set<std::string>& never_lowered_ops() {
  return k_never_lowered;
}

const std::map<std::string, std::string>& unlisted_ops() {
  return k_unlisted;
}

const char* op_class_name(OpClass op_class) {
  switch (op_class) {
  case OpClass::allow:
    return "allow";
  case OpClass::infer:
    return "infer";
  case OpClass::clear:
    return "clear";
  case OpClass::deny:
    return "deny";
  case OpClass::none:
    break;
  }
  return "none";
}

OpClass OpLists::classify(const std::string& op_type) const {
  if (allow.count(op_type) != 0) {
    return OpClass::allow;
  }
  if (deny.count(op_type) != 0) {
    return OpClass::deny;
  }
  if (infer.count(op_type) != 0) {
    return OpClass::infer;
  }
  if (clear.count(op_type) != 0) {
    return OpClass::clear;
  }
  return OpClass::none;
}

OpLists default_op_lists(LowPrecision low) {
  OpLists lists;
  lists.deny = k_deny_common;
  lists.infer = k_infer_common;
  lists.clear = k_clear_common;
  if (low == LowPrecision::float16) {
    lists.allow = k_allow_float16;
    lists.infer.insert("Erf");
    lists.clear.insert({"OneHot", "Size"});
  } else {
    lists.allow = allow_bfloat16();
  }
  return lists;
}

namespace {

const std::map<std::string, std::string> k_list_names = {
    {"black-list", "deny"}, {"white-list", "allow"}, {"gray-list", "infer"}};

std::set<std::string>& list_by_key(OpLists& lists, const std::string& key) {
  if (key == "black-list") {
    return lists.deny;
  }
  if (key == "white-list") {
    return lists.allow;
  }
  return lists.infer;
}

bool known_onnx_op(const std::string& name) {
  return schemas::registry().knows_default_op(name);
}

} // namespace

MixlistEdit parse_mixlist(const std::string& json_text, const std::string& source) {
  const std::string where = "--modify-mixlist " + source + ": ";
  const std::string format_hint =
      R"(expected {"black-list"|"white-list"|"gray-list": {"to-add": [ops], "to-remove": [ops]}})";
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(where + "not valid JSON: " + util::first_line(e.what()), format_hint);
  }
  if (!doc.is_object()) {
    throw usage_error(where + "the top level must be a JSON object", format_hint);
  }
  MixlistEdit edit;
  std::map<std::string, std::string> added_to; // op -> list key
  for (const auto& [key, value] : doc.items()) {
    if (k_list_names.count(key) == 0) {
      throw usage_error(where + "unknown key \"" + key + "\"", format_hint);
    }
    if (!value.is_object()) {
      throw usage_error(where + "\"" + key + "\" must be an object", format_hint);
    }
    for (const auto& [action, ops] : value.items()) {
      if (action != "to-add" && action != "to-remove") {
        throw usage_error(where + "unknown key \"" + key + "." + action + "\"", format_hint);
      }
      if (!ops.is_array()) {
        throw usage_error(where + "\"" + key + "." + action + "\" must be an array", format_hint);
      }
      for (const auto& op : ops) {
        if (!op.is_string()) {
          throw usage_error(where + "\"" + key + "." + action + "\" holds a non-string",
                            format_hint);
        }
        std::string name = op.get<std::string>();
        if (!known_onnx_op(name)) {
          throw usage_error(where + "unknown ONNX op \"" + name + "\" in " + key,
                            "use ONNX op type names (MatMul, Conv, ReduceMean, ...)");
        }
        if (action == "to-add") {
          auto [it, fresh] = added_to.emplace(name, key);
          if (!fresh && it->second != key) {
            throw usage_error(where + "op \"" + name + "\" is added to both " + it->second +
                                  " and " + key,
                              "an op belongs to one list only");
          }
          edit.to_add[key].push_back(name);
        } else {
          edit.to_remove[key].push_back(name);
        }
      }
    }
  }
  for (const auto& [key, ops] : edit.to_remove) {
    for (const auto& op : ops) {
      auto it = added_to.find(op);
      if (it != added_to.end() && it->second == key) {
        throw usage_error(where + "op \"" + op + "\" is both added to and removed from " + key);
      }
    }
  }
  return edit;
}

std::vector<std::string> apply_mixlist(OpLists& lists, const MixlistEdit& edit) {
  std::vector<std::string> warnings;
  for (const auto& [key, ops] : edit.to_remove) {
    auto& list = list_by_key(lists, key);
    for (const auto& op : ops) {
      if (list.erase(op) == 0) {
        warnings.push_back("modify-mixlist: " + op + " is not in the " + key + " (" +
                           k_list_names.at(key) + "); nothing removed");
      } else if (key != "gray-list") {
        lists.infer.insert(op); // Ascend: an op taken off a list becomes gray
      }
    }
  }
  for (const auto& [key, ops] : edit.to_add) {
    for (const auto& op : ops) {
      lists.allow.erase(op);
      lists.infer.erase(op);
      lists.clear.erase(op);
      lists.deny.erase(op);
      list_by_key(lists, key).insert(op);
    }
  }
  return warnings;
}

} // namespace npucc::precision

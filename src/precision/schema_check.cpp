#include "precision/schema_check.h"

#include "schemas/registry.h"

#include <map>
#include <onnx/defs/data_type_utils.h>
#include <set>
#include <string>

namespace npucc::precision {

namespace {

const onnx::OpSchema::FormalParameter*
formal(const std::vector<onnx::OpSchema::FormalParameter>& params, int index) {
  if (params.empty() || index < 0) {
    return nullptr;
  }
  if (static_cast<size_t>(index) < params.size()) {
    return &params[static_cast<size_t>(index)];
  }
  const auto& last = params.back();
  return last.GetOption() == onnx::OpSchema::Variadic ? &last : nullptr;
}

const std::string& formal_name(const std::vector<onnx::OpSchema::FormalParameter>& params,
                               int index) {
  static const std::string empty;
  const auto* param = formal(params, index);
  return param == nullptr ? empty : param->GetName();
}

onnx::DataType tensor_type(int32_t elem_type) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem_type);
  return onnx::Utils::DataTypeUtils::ToType(type);
}

bool param_accepts(const onnx::OpSchema::FormalParameter& param, int32_t elem_type) {
  return param.GetTypes().count(tensor_type(elem_type)) != 0;
}

bool named_in(const std::map<std::string, std::set<std::string>>& table, const std::string& op,
              const std::string& name) {
  auto it = table.find(op);
  return it != table.end() && it->second.count(name) != 0;
}

} // namespace

const onnx::OpSchema* find_schema(const onnx::NodeProto& node, const onnx::ModelProto& model) {
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  for (const auto& opset : model.opset_import()) {
    const std::string opset_domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    if (opset_domain == domain) {
      return schemas::find_schema(node.op_type(), static_cast<int>(opset.version()), domain);
    }
  }
  return nullptr;
}

bool is_pinned_input(const onnx::OpSchema& schema, const std::string& op_type, int index) {
  static const std::map<std::string, std::set<std::string>> pinned = {
      {"Resize", {"roi", "scales"}},
      {"Upsample", {"scales"}},
      {"BatchNormalization", {"scale", "B", "mean", "var", "input_mean", "input_var"}},
      {"InstanceNormalization", {"scale", "B"}},
      // Attention's float attn_mask is not pinned although its type U is free of Q's:
      // ONNX Runtime 1.30 rejects a float32 mask beside float16 Q ("Type Error ...
      // QKAttnCast"). A constant mask of -1e9 or float32's lowest overflows the low type
      // and so keeps the Attention float32 (reason "overflow").
      // Sampling coordinates in [-1, 1]: bfloat16 resolves them only to 2^-8 (a pixel of a
      // 256-wide image), float16 to 2^-11; T2 is free of the image's T1.
      {"GridSample", {"grid"}},
  };
  return named_in(pinned, op_type, formal_name(schema.inputs(), index));
}

bool is_pinned_output(const onnx::OpSchema& schema, const std::string& op_type, int index) {
  static const std::map<std::string, std::set<std::string>> pinned = {
      {"BatchNormalization",
       {"mean", "var", "saved_mean", "saved_var", "running_mean", "running_var"}},
  };
  return named_in(pinned, op_type, formal_name(schema.outputs(), index));
}

bool is_index_input(const onnx::OpSchema& schema, const std::string& op_type, int index) {
  static const std::map<std::string, std::set<std::string>> index_inputs = {
      {"Reshape", {"shape"}},
      {"Expand", {"shape"}},
      {"ConstantOfShape", {"input"}},
      {"Range", {"start", "limit", "delta"}},
      {"Tile", {"repeats"}},
      {"Slice", {"starts", "ends", "axes", "steps"}},
      {"Gather", {"indices"}},
      {"GatherElements", {"indices"}},
      {"GatherND", {"indices"}},
      {"ScatterND", {"indices"}},
      {"ScatterElements", {"indices"}},
      {"Resize", {"roi", "scales", "sizes"}},
      {"Upsample", {"scales"}},
      {"Pad", {"pads", "axes"}},
      {"TopK", {"K"}},
      {"OneHot", {"depth"}},
      {"Unsqueeze", {"axes"}},
      {"Squeeze", {"axes"}},
      {"Split", {"split"}},
      {"CumSum", {"axis"}},
      {"Trilu", {"k"}},
      {"CumProd", {"axis"}},
      {"CenterCropPad", {"shape"}},
      {"Col2Im", {"image_shape", "block_shape"}},
      {"DFT", {"dft_length", "axis"}},
      {"STFT", {"frame_step", "frame_length"}},
      {"AffineGrid", {"size"}},
      {"TensorScatter", {"write_indices"}},
      {"RotaryEmbedding", {"position_ids"}},
      {"Attention", {"nonpad_kv_seqlen"}},
  };
  if (op_type.rfind("Reduce", 0) == 0) {
    return formal_name(schema.inputs(), index) == "axes";
  }
  return named_in(index_inputs, op_type, formal_name(schema.inputs(), index));
}

bool schema_accepts(const onnx::OpSchema& schema, const std::vector<int32_t>& input_types,
                    const std::vector<int32_t>& output_types) {
  std::map<std::string, int32_t> bound; // type parameter -> element type
  auto check = [&](const std::vector<onnx::OpSchema::FormalParameter>& params,
                   const std::vector<int32_t>& types) {
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] == 0) {
        continue;
      }
      const auto* param = formal(params, static_cast<int>(i));
      if (param == nullptr || !param_accepts(*param, types[i])) {
        return false;
      }
      // A heterogeneous variadic (Loop's V) binds each slot separately.
      bool shared = param->GetOption() != onnx::OpSchema::Variadic || param->GetIsHomogeneous();
      if (!shared) {
        continue;
      }
      auto [it, fresh] = bound.emplace(param->GetTypeStr(), types[i]);
      if (!fresh && it->second != types[i]) {
        return false;
      }
    }
    return true;
  };
  return check(schema.inputs(), input_types) && check(schema.outputs(), output_types);
}

bool input_accepts(const onnx::OpSchema& schema, int index, int32_t elem_type) {
  const auto* param = formal(schema.inputs(), index);
  return param != nullptr && param_accepts(*param, elem_type);
}

} // namespace npucc::precision

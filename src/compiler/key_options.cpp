#include "compiler/key_options.h"

#include "npucc/error.h"
#include "opset/raise_opset.h"
#include "passes/registry.h"
#include "precision/low_graph_opset.h"
#include "util/strings.h"

#include <unordered_set>

namespace npucc::compiler {

namespace {

std::string shape_text(const InputShape& shape) {
  std::vector<std::string> dims;
  for (int64_t dim : shape.dims) {
    dims.push_back(std::to_string(dim));
  }
  return shape.name + ":" + util::join(dims, ",");
}

// Below opset 22 a bfloat16 low graph is raised to 22 unless --target-opset is given
// (precision/low_graph_opset.cpp), so there the option changes the low graph. The
// precision modes are judged conservatively: any of them keeps the option in the key.
bool may_raise_low_graph(const CompileOptions& options, int64_t opset) {
  if (opset >= precision::k_bfloat16_opset) {
    return false;
  }
  bool fast1 =
      options.accelerate_train_mode && options.accelerate_train_mode->low == LowPrecision::bfloat16;
  return fast1 || !options.precision.precision_mode.empty() ||
         !options.precision.precision_mode_v2.empty();
}

bool target_opset_is_model_opset(const CompileOptions& options, const onnx::ModelProto& model) {
  const int64_t opset = opset::default_opset(model);
  // Above what npucc raises to, the option is an error, whatever the model's opset.
  return options.target_opset != 0 && options.target_opset == opset &&
         opset <= opset::k_max_target_opset && !may_raise_low_graph(options, opset);
}

void drop_declared_input_shapes(CompileOptions& keyed, const onnx::GraphProto& graph,
                                std::vector<KeyOmission>& omitted) {
  std::vector<InputShape> kept;
  for (auto& shape : keyed.input_shapes) {
    if (input_shape_is_declared(graph, shape)) {
      omitted.push_back({"input_shapes", shape_text(shape),
                         "equal to the model's declared shape: not part of the key"});
    } else {
      kept.push_back(std::move(shape));
    }
  }
  keyed.input_shapes = std::move(kept);
}

} // namespace

bool input_shape_is_declared(const onnx::GraphProto& graph, const InputShape& shape) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) {
    initializers.insert(init.name());
  }
  // As check::apply_input_shapes finds the input: the last of that name, not an initializer.
  const onnx::ValueInfoProto* input = nullptr;
  for (const auto& candidate : graph.input()) {
    if (candidate.name() == shape.name && initializers.count(candidate.name()) == 0) {
      input = &candidate;
    }
  }
  if (input == nullptr || !input->type().has_tensor_type() ||
      !input->type().tensor_type().has_shape()) {
    return false; // an error, or a shape the option would add
  }
  const auto& declared = input->type().tensor_type().shape();
  if (declared.dim_size() != static_cast<int>(shape.dims.size())) {
    return false; // a rank error, or dims added to a declared scalar
  }
  for (int i = 0; i < declared.dim_size(); ++i) {
    int64_t wanted = shape.dims[static_cast<size_t>(i)];
    const auto& dim = declared.dim(i);
    if (wanted >= 0 && !(dim.has_dim_value() && dim.dim_value() == wanted)) {
      return false; // a named or unknown dim given a value (or a mismatch: an error)
    }
  }
  return true;
}

const std::string& options_component(const CacheKey& key) {
  for (const auto& component : key.components) {
    if (component.name == "options") {
      return component.value;
    }
  }
  throw Error("internal error: a cache key without its options component");
}

bool key_options_need_model(const CompileOptions& options) {
  return !options.input_shapes.empty() || options.target_opset != 0;
}

KeyOptions key_options(const CompileOptions& options, const onnx::ModelProto* model) {
  KeyOptions out;
  CompileOptions keyed = options;
  if (options.accelerate_train_mode) {
    out.not_in_key.push_back(
        {"schedule", options.accelerate_train_mode->to_string(),
         "trigger and ratio: not part of the key (written at materialisation); its type " +
             options.accelerate_train_mode->type_name() + " is"});
  }
  if (model != nullptr) {
    drop_declared_input_shapes(keyed, model->graph(), out.not_in_key);
    if (target_opset_is_model_opset(options, *model)) {
      out.not_in_key.push_back({"target_opset", std::to_string(options.target_opset),
                                "the model's own opset: not part of the key"});
      keyed.target_opset = 0;
    }
  }
  if (!options.passes.empty() && options.passes == passes::default_pipeline()) {
    out.not_in_key.push_back({"passes", util::join(options.passes, ","),
                              "the default pipeline: keyed as if --passes were not given"});
    keyed.passes.clear();
  }
  out.canonical = canonical_options(keyed);
  return out;
}

} // namespace npucc::compiler

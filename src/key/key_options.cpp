#include "key/key_options.h"

#include "accuracy/checked.h"
#include "npucc/error.h"
#include "opset/raise_opset.h"
#include "passes/registry.h"
#include "precision/low_graph_opset.h"
#include "runtime/ort_session.h"
#include "util/hex.h"
#include "util/strings.h"

#include <nlohmann/json.hpp>
#include <unordered_set>

namespace npucc::key {

namespace {

std::string shape_text(const InputShape& shape) {
  std::vector<std::string> dims;
  for (int64_t dim : shape.dims) {
    dims.push_back(std::to_string(dim));
  }
  return shape.name + ":" + util::join(dims, ",");
}

// Below opset 22 a bfloat16 low graph is raised to 22, and below opset 15 fast's float16 low
// graph holding a BatchNormalization to 15, unless --target-opset is given
// (precision/low_graph_opset.cpp), so there the option changes the low graph. The
// precision modes are judged conservatively: any of them keeps the option in the key.
bool may_raise_low_graph(const CompileOptions& options, int64_t opset) {
  if (opset >= precision::k_bfloat16_opset) {
    return false;
  }
  const auto& mode = options.accelerate_train_mode;
  bool fast1 = mode && mode->low == LowPrecision::bfloat16;
  bool fast = mode && mode->low == LowPrecision::float16 && opset < precision::k_float16_opset;
  return fast1 || fast || !options.precision.precision_mode.empty() ||
         !options.precision.precision_mode_v2.empty();
}

bool target_opset_is_model_opset(const CompileOptions& options, const KeyFacts& model) {
  const int64_t opset = model.opset;
  // Above what npucc raises to, the option is an error, whatever the model's opset.
  return options.target_opset != 0 && options.target_opset == opset &&
         opset <= opset::k_max_target_opset && !may_raise_low_graph(options, opset);
}

void drop_declared_input_shapes(CompileOptions& keyed, const KeyFacts& model,
                                std::vector<KeyOmission>& omitted) {
  std::vector<InputShape> kept;
  for (auto& shape : keyed.input_shapes) {
    if (input_shape_is_declared(model, shape)) {
      omitted.push_back({"input_shapes", shape_text(shape),
                         "equal to the model's declared shape: not part of the key"});
    } else {
      kept.push_back(std::move(shape));
    }
  }
  keyed.input_shapes = std::move(kept);
}

} // namespace

KeyFacts key_facts(const onnx::ModelProto& model) {
  KeyFacts facts;
  facts.opset = opset::default_opset(model);
  const onnx::GraphProto& graph = model.graph();
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) {
    initializers.insert(init.name());
  }
  // As check::apply_input_shapes finds an input: the last of its name, not an initializer.
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name()) != 0) {
      continue;
    }
    facts.input_shapes.erase(input.name());
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
      continue; // an error, or a shape the option would add
    }
    std::vector<std::optional<int64_t>>& dims = facts.input_shapes[input.name()];
    for (const auto& dim : input.type().tensor_type().shape().dim()) {
      dims.push_back(dim.has_dim_value() ? std::optional<int64_t>(dim.dim_value()) : std::nullopt);
    }
  }
  return facts;
}

// One line of JSON; input names in hex, so that any bytes a model uses survive as they are.
std::string key_facts_text(const KeyFacts& facts) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& [name, dims] : facts.input_shapes) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& dim : dims) {
      values.push_back(dim ? nlohmann::json(*dim) : nlohmann::json());
    }
    inputs.push_back({util::hex_encode(name), std::move(values)});
  }
  return nlohmann::json{{"opset", facts.opset}, {"inputs", std::move(inputs)}}.dump();
}

std::optional<KeyFacts> parse_key_facts(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object() || !json.contains("opset") || !json["opset"].is_number_integer() ||
      !json.contains("inputs") || !json["inputs"].is_array()) {
    return std::nullopt;
  }
  KeyFacts facts;
  facts.opset = json["opset"].get<int64_t>();
  for (const auto& input : json["inputs"]) {
    std::optional<std::string> name = input.is_array() && input.size() == 2 && input[0].is_string()
                                          ? util::hex_decode(input[0].get<std::string>())
                                          : std::nullopt;
    if (!name || !input[1].is_array()) {
      return std::nullopt;
    }
    std::vector<std::optional<int64_t>>& dims = facts.input_shapes[*name];
    for (const auto& dim : input[1]) {
      if (!dim.is_null() && !dim.is_number_integer()) {
        return std::nullopt;
      }
      dims.push_back(dim.is_null() ? std::nullopt : std::optional<int64_t>(dim.get<int64_t>()));
    }
  }
  return facts;
}

bool input_shape_is_declared(const KeyFacts& model, const InputShape& shape) {
  auto input = model.input_shapes.find(shape.name);
  if (input == model.input_shapes.end()) {
    return false; // an error, or a shape the option would add
  }
  const std::vector<std::optional<int64_t>>& declared = input->second;
  if (declared.size() != shape.dims.size()) {
    return false; // a rank error, or dims added to a declared scalar
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    int64_t wanted = shape.dims[i];
    if (wanted >= 0 && declared[i] != wanted) {
      return false; // a named or unknown dim given a value (or a mismatch: an error)
    }
  }
  return true;
}

bool key_options_need_model(const CompileOptions& options) {
  return !options.input_shapes.empty() || options.target_opset != 0;
}

KeyOptions key_options(const CompileOptions& options, const onnx::ModelProto& model) {
  const KeyFacts facts = key_facts(model);
  return key_options(options, &facts);
}

KeyOptions key_options(const CompileOptions& options, const KeyFacts* model) {
  return key_options(options, model, runtime_identity(options));
}

std::string runtime_identity(const CompileOptions& options) {
  return accuracy::is_checked(options) ? runtime::detail::library_identity() : std::string();
}

KeyOptions key_options(const CompileOptions& options, const KeyFacts* model,
                       const std::string& runtime) {
  KeyOptions out;
  CompileOptions keyed = options;
  if (options.accelerate_train_mode) {
    out.not_in_key.push_back(
        {"schedule", options.accelerate_train_mode->to_string(),
         "trigger and ratio: not part of the key (written at materialisation); its type " +
             options.accelerate_train_mode->type_name() + " is"});
  }
  if (model != nullptr) {
    drop_declared_input_shapes(keyed, *model, out.not_in_key);
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
  out.canonical = canonical_text(keyed, runtime);
  return out;
}

} // namespace npucc::key

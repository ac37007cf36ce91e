#include "schemas/registry.h"

#include "schemas/inference.h"
#include "schemas/inference_ops.h"
#include "schemas/signature.h"
#include "schemas/type_names.h"

#include <onnx/defs/attr_proto_util.h>
#include <stdexcept>

namespace npucc::schemas {

namespace {

std::string key_of(const std::string& domain, const std::string& op) {
  return canonical_domain(domain) + ":" + op;
}

// "['Tanh', 'Tanh']" -> {"Tanh", "Tanh"}: the Changelog's spelling of a list default.
std::vector<std::string> parse_string_list(const std::string& text) {
  std::vector<std::string> items;
  size_t at = 0;
  while ((at = text.find('\'', at)) != std::string::npos) {
    size_t end = text.find('\'', at + 1);
    if (end == std::string::npos) {
      break;
    }
    items.push_back(text.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return items;
}

onnx::AttributeProto default_value(const AttributeSpec& spec) {
  const std::string text = spec.default_text;
  switch (spec.type) {
  case onnx::AttributeProto::INT:
    return onnx::MakeAttribute(spec.name, int64_t{std::stoll(text)});
  case onnx::AttributeProto::FLOAT:
    return onnx::MakeAttribute(spec.name, std::stof(text));
  case onnx::AttributeProto::STRING:
    return onnx::MakeAttribute(spec.name, text);
  case onnx::AttributeProto::STRINGS:
    return onnx::MakeAttribute(spec.name, parse_string_list(text));
  default:
    throw std::logic_error(std::string("schemas: no default of this type for attribute ") +
                           spec.name);
  }
}

void add_formals(onnx::OpSchema& schema, const std::vector<FormalSpec>& formals, bool inputs) {
  for (size_t i = 0; i < formals.size(); ++i) {
    const auto& f = formals[i];
    const int index = static_cast<int>(i);
    if (inputs) {
      schema.Input(index, f.name, "", f.type, f.option, f.homogeneous, f.min_arity,
                   f.differentiation);
    } else {
      schema.Output(index, f.name, "", f.type, f.option, f.homogeneous, f.min_arity,
                    f.differentiation);
    }
  }
}

onnx::OpSchema build_schema(const Signature& signature, const Inference& inference) {
  onnx::OpSchema schema(signature.op, "npucc/src/schemas/signatures.inc", signature.since);
  schema.SetDomain(signature.domain).SinceVersion(signature.since);
  if (signature.deprecated) {
    schema.Deprecate();
  }
  for (const auto& attribute : signature.attributes) {
    if (attribute.has_default) {
      schema.Attr(onnx::OpSchema::Attribute(attribute.name, "", default_value(attribute)));
    } else {
      schema.Attr(attribute.name, "", attribute.type, attribute.required);
    }
  }
  add_formals(schema, signature.inputs, true);
  add_formals(schema, signature.outputs, false);
  for (const auto& constraint : signature.constraints) {
    schema.TypeConstraint(
        constraint.parameter,
        std::vector<std::string>(constraint.types.begin(), constraint.types.end()), "");
  }
  schema.TypeAndShapeInferenceFunction(inference.infer);
  if (inference.propagate) {
    schema.PartialDataPropagationFunction(inference.propagate);
  }
  schema.Finalize();
  return schema;
}

// ONNX 1.12 versions whose inference npucc corrects, answered from a copy of ONNX's schema:
// the pools with ceil_mode (MaxPool 10-12, AveragePool 10-11) keep a last window that would
// start in the right padding, which ONNX's later docs and ONNX Runtime drop (4 wide, kernel
// 2, stride 2, pads (0, 1): 2 outputs, not 3), so npucc's plan would disagree with the run.
struct Corrected {
  const char* op;
  int version;
  size_t outputs; // that carry the pooled shape (MaxPool's Indices too)
};

constexpr Corrected k_corrected[] = {
    {"MaxPool", 10, 2},     {"MaxPool", 11, 2},     {"MaxPool", 12, 2},
    {"AveragePool", 10, 1}, {"AveragePool", 11, 1},
};

onnx::OpSchema corrected_schema(const Corrected& entry) {
  const auto* base = onnx::OpSchemaRegistry::Schema(entry.op, entry.version, "");
  if (base == nullptr || base->SinceVersion() != entry.version) {
    throw std::logic_error(std::string("schemas: ONNX 1.12 has no ") + entry.op + "-" +
                           std::to_string(entry.version));
  }
  onnx::OpSchema schema = *base;
  schema.TypeAndShapeInferenceFunction(
      with_ceil_mode_rule(base->GetTypeAndShapeInferenceFunction(), entry.outputs));
  return schema;
}

} // namespace

std::string canonical_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

std::string version_key(const std::string& domain, const std::string& op, int since) {
  const std::string d = canonical_domain(domain);
  return (d.empty() ? "" : d + ":") + op + "-" + std::to_string(since);
}

Inference inherit(const char* op, int version, const char* domain) {
  const auto* base = onnx::OpSchemaRegistry::Schema(op, version, domain);
  if (base == nullptr || base->SinceVersion() != version ||
      !base->has_type_and_shape_inference_function()) {
    throw std::logic_error(std::string("schemas: ONNX 1.12 has no inference for ") +
                           version_key(domain, op, version));
  }
  return {base->GetTypeAndShapeInferenceFunction(), base->GetDataPropagationFunction()};
}

Registry::Registry() {
  register_type_names();
  const auto& inferences = inference_table();
  for (const auto& signature : signatures()) {
    const std::string key = version_key(signature.domain, signature.op, signature.since);
    auto it = inferences.find(key);
    if (it == inferences.end()) {
      throw std::logic_error("schemas: no inference for " + key);
    }
    m_schemas[key_of(signature.domain, signature.op)].emplace(signature.since,
                                                              build_schema(signature, it->second));
  }
  for (const auto& entry : k_corrected) {
    m_schemas[key_of("", entry.op)].emplace(entry.version, corrected_schema(entry));
  }
}

const onnx::OpSchema* Registry::own_schema(const std::string& op, int max_inclusive_version,
                                           const std::string& domain) const {
  auto versions = m_schemas.find(key_of(domain, op));
  if (versions == m_schemas.end()) {
    return nullptr;
  }
  auto newer = versions->second.upper_bound(max_inclusive_version);
  if (newer == versions->second.begin()) {
    return nullptr;
  }
  return &std::prev(newer)->second;
}

const onnx::OpSchema* Registry::GetSchema(const std::string& op, int max_inclusive_version,
                                          const std::string& domain) const {
  if (const auto* own = own_schema(op, max_inclusive_version, domain)) {
    return own;
  }
  return onnx::OpSchemaRegistry::Schema(op, max_inclusive_version, canonical_domain(domain));
}

int Registry::max_opset(const std::string& domain) {
  const std::string d = canonical_domain(domain);
  if (d.empty()) {
    return static_cast<int>(k_max_default_opset);
  }
  if (d == "ai.onnx.ml") {
    return static_cast<int>(k_max_ml_opset);
  }
  if (d == "ai.onnx.training" || d == "ai.onnx.preview.training") {
    return static_cast<int>(k_max_training_opset);
  }
  return 0;
}

bool Registry::knows_default_op(const std::string& op) const {
  return m_schemas.count(key_of("", op)) != 0 || onnx::OpSchemaRegistry::Schema(op, "") != nullptr;
}

const Registry& registry() {
  static const Registry instance;
  return instance;
}

const onnx::OpSchema* find_schema(const std::string& op, int version, const std::string& domain) {
  return registry().GetSchema(op, version, domain);
}

} // namespace npucc::schemas

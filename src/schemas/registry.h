#pragma once

#include "npucc/model.h"

#include <map>
#include <onnx/defs/schema.h>
#include <string>

// ONNX operator schemas for every opset npucc reads: ONNX 1.12's own (ai.onnx up to 17,
// ai.onnx.ml up to 3) and npucc's for the versions introduced since (src/schemas/*),
// behind ONNX's own extension point, so its checker and shape inference, and npucc's
// passes and precision rewrite, all see one registry.
namespace npucc::schemas {

// The opsets Debian's ONNX 1.12 knows; beyond them the schemas are npucc's.
inline constexpr int k_onnx_library_default_opset = 17;
inline constexpr int k_onnx_library_ml_opset = 3;

class Registry final : public onnx::ISchemaRegistry {
public:
  Registry();
  // The schema in force for `op` at opset `max_inclusive_version` of `domain` ("" and
  // "ai.onnx" are the same domain); nullptr when there is none.
  const onnx::OpSchema* GetSchema(const std::string& op, int max_inclusive_version,
                                  const std::string& domain) const override;
  // The newest opset of `domain` npucc knows (npucc/model.h); 0 for a domain it does not
  // know (custom domains: their ops are not npucc's to check).
  static int max_opset(const std::string& domain);
  // Is `op` an operator of the default domain at any version?
  bool knows_default_op(const std::string& op) const;

private:
  const onnx::OpSchema* own_schema(const std::string& op, int max_inclusive_version,
                                   const std::string& domain) const;
  // domain + ":" + op -> since version -> schema
  std::map<std::string, std::map<int, onnx::OpSchema>> m_schemas;
};

// "" for the default domain however a model spells it ("" or "ai.onnx"), else `domain`.
std::string canonical_domain(const std::string& domain);

// The one registry, built on first use (thread-safe).
const Registry& registry();

// Shorthand for registry().GetSchema.
const onnx::OpSchema* find_schema(const std::string& op, int version, const std::string& domain);

} // namespace npucc::schemas

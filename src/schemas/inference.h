#pragma once

#include <map>
#include <onnx/defs/schema.h>
#include <string>

// Type and shape inference of the operator versions npucc adds (src/schemas/signature.h).
namespace npucc::schemas {

struct Inference {
  onnx::InferenceFunction infer;
  onnx::DataPropagationFunction propagate; // may be empty
};

// The inference (and data propagation) of ONNX 1.12's own schema `op`-`version`: for a
// version whose only change is wider types or an attribute whose absence keeps the old
// behaviour, the old inference is exactly right.
Inference inherit(const char* op, int version, const char* domain = "");

// "Op-N" (ai.onnx) or "ai.onnx.ml:Op-N" -> its inference. Every signature has an entry:
// a unit test checks it, so no operator version is ever inferred by a dummy.
const std::map<std::string, Inference>& inference_table();

std::string version_key(const std::string& domain, const std::string& op, int since);

} // namespace npucc::schemas

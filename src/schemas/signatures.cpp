#include "schemas/signature.h"

namespace npucc::schemas {

namespace {

using A = onnx::AttributeProto;
using F = onnx::OpSchema;
using D = onnx::OpSchema;

} // namespace

const std::vector<Signature>& signatures() {
  static const std::vector<Signature> table = {
#include "schemas/signatures.inc"
#include "schemas/signatures_ml.inc"
  };
  return table;
}

} // namespace npucc::schemas

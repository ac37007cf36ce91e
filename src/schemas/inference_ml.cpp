#include "schemas/inference_ops.h"

namespace npucc::schemas {

std::map<std::string, Inference> ml_inference_table() {
  return {};
}

} // namespace npucc::schemas

#include "npucc/compile.h"

#include "passes/registry.h"

#include <nlohmann/json.hpp>

namespace npucc {

std::string canonical_options(const CompileOptions& options) {
  // nlohmann::json objects keep keys sorted, so the dump is canonical.
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& shape : options.input_shapes) {
    shapes[shape.name] = shape.dims;
  }
  nlohmann::json out = {
      {"input_shapes", shapes},
      {"external_data", options.external_data == ExternalData::always ? "always" : "auto"},
      {"passes", options.passes.empty() ? passes::default_pipeline() : options.passes},
      {"max_tensor_bytes", options.limits.max_tensor_bytes},
  };
  return out.dump();
}

} // namespace npucc

#pragma once
// Helpers shared by the constant-folding tests (test_passes_fold_*.cpp).

#include "check/validate.h"
#include "passes/fold_values.h"
#include "test_passes_support.h"

#include <optional>
#include <string>
#include <vector>

namespace npucc::test {

// Parses and types a model: the fold passes read shapes and types from value_info.
inline onnx::ModelProto typed_model(const std::string& text) {
  auto model = parse_text_model(text);
  check::infer_shapes_strict(model);
  return model;
}

// The value of initializer `name` of `graph`, if there is one.
inline std::optional<passes::FoldValue> initializer_value(const onnx::GraphProto& graph,
                                                          const std::string& name) {
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == name) {
      return passes::read_fold_value(tensor);
    }
  }
  return std::nullopt;
}

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

} // namespace npucc::test

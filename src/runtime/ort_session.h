#pragma once

#include "runtime/tensor.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

// ONNX Runtime's C API, used inside the runtime process only (runtime_process.cpp): npucc
// itself never loads the library.
namespace npucc::runtime::detail {

class OrtRunner {
public:
  // Loads the library (onnxruntime_library_path(), library_location.h) and
  // its C API version 29. Throws npucc::Error in one line saying how to get it.
  OrtRunner();
  ~OrtRunner();
  OrtRunner(const OrtRunner&) = delete;
  OrtRunner& operator=(const OrtRunner&) = delete;

  std::string version() const;
  // The graph is `model` (serialised) or, when `file` is not empty, that file.
  std::vector<TensorSet> run(std::string_view model, const std::string& file,
                             const std::vector<TensorSet>& inputs,
                             const std::vector<std::string>& outputs);

private:
  struct State;
  std::unique_ptr<State> m_state;
};

// The library a runtime process would load, as the cache key records it: its resolved file
// name and size ("none" when npucc was built without ONNX Runtime). Does not load it.
std::string library_identity();

} // namespace npucc::runtime::detail

#pragma once

#include "npucc/model.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>

namespace npucc::test {

namespace fs = std::filesystem;

// The folder of this test run; removed at exit unless keep() is called.
class TempRoot {
public:
  TempRoot();
  ~TempRoot();
  void keep() { m_keep = true; }
  const fs::path& path() const { return m_path; }

private:
  fs::path m_path;
  bool m_keep = false;
};

// A fresh empty folder under the run's temporary root, named after `label`.
fs::path temp_dir(const std::string& label);

// Parses a model written in ONNX's text format (onnx::OnnxParser); fails the test
// on a syntax error.
onnx::ModelProto parse_text_model(const std::string& text);
// Writes the model `text` (as parse_text_model reads it) to `path`; returns `path`.
fs::path write_text_model(const fs::path& path, const std::string& text);

fs::path testdata(const std::string& relative);

// A fake environment for npucc::ConfigSources::getenv: `variables` and nothing else.
std::function<std::optional<std::string>(const std::string&)>
fake_getenv(std::map<std::string, std::string> variables);

// Makes `tensor` refer to `length` bytes of external data in `location` from `offset`.
void set_external(onnx::TensorProto& tensor, const std::string& location, uint64_t offset,
                  uint64_t length);

// What reading `path` with `weights` throws ("no error" when it reads).
std::string read_error(const fs::path& path, Weights weights);

} // namespace npucc::test

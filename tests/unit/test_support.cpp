#include "test_support.h"

#include "npucc/error.h"
#include "util/file_io.h"

#include <atomic>
#include <cstdint>
#include <doctest/doctest.h>
#include <onnx/defs/parser.h>
#include <string>
#include <unistd.h>
#include <utility>

namespace npucc::test {

namespace {
fs::path g_root;
std::atomic<int> g_counter{0};
} // namespace

TempRoot::TempRoot() {
  std::string pattern = (fs::temp_directory_path() / "npucc-test-XXXXXX").string();
  char* made = ::mkdtemp(pattern.data());
  m_path = made ? fs::path(made) : fs::temp_directory_path();
  g_root = m_path;
}

TempRoot::~TempRoot() {
  if (!m_keep) {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
}

fs::path temp_dir(const std::string& label) {
  fs::path dir = g_root / (label + "-" + std::to_string(g_counter++));
  fs::create_directories(dir);
  return dir;
}

onnx::ModelProto parse_text_model(const std::string& text) {
  onnx::ModelProto model;
  auto status = onnx::OnnxParser::Parse(model, text.c_str());
  INFO(status.ErrorMessage());
  REQUIRE(status.IsOK());
  return model;
}

fs::path write_text_model(const fs::path& path, const std::string& text) {
  std::string bytes;
  parse_text_model(text).SerializeToString(&bytes);
  util::write_file_atomic(path, bytes);
  return path;
}

void set_external(onnx::TensorProto& tensor, const std::string& location, uint64_t offset,
                  uint64_t length) {
  tensor.clear_raw_data();
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair<std::string, std::string>{"location", location},
                            {"offset", std::to_string(offset)},
                            {"length", std::to_string(length)}}) {
    auto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
}

fs::path testdata(const std::string& relative) {
  return fs::path(NPUCC_TESTDATA_DIR) / relative;
}

std::function<std::optional<std::string>(const std::string&)>
fake_getenv(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) {
      return std::nullopt;
    }
    return found->second;
  };
}

std::string read_error(const fs::path& path, Weights weights) {
  try {
    read_model(path, {}, weights);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace npucc::test

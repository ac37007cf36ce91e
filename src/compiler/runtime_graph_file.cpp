#include "compiler/runtime_graph_file.h"

#include "compiler/graph_writer.h"
#include "util/file_io.h"
#include "util/interrupt.h"

#include <system_error>

namespace npucc::compiler {

namespace {

constexpr const char* k_stem = "npucc-graph";

} // namespace

RuntimeGraphFile::RuntimeGraphFile(onnx::ModelProto& model) {
  const auto folder = util::temporary_folder();
  util::sweep_on_interrupt(folder, k_stem); // each name holds ".PID."
  const std::string name =
      util::temporary_sibling(folder / k_stem).filename().string() + ".onnx";
  m_path = folder / name;
  m_files.push_back(m_path);
  const auto written = write_graph(model, folder, name, ExternalData::automatic);
  for (const auto& data : written.external_data) {
    m_files.push_back(folder / data.file);
  }
}

RuntimeGraphFile::~RuntimeGraphFile() {
  for (const auto& file : m_files) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
  }
}

} // namespace npucc::compiler

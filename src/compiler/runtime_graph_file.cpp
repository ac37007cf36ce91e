#include "compiler/runtime_graph_file.h"

#include "compiler/graph_writer.h"

namespace npucc::compiler {

RuntimeGraphFile::RuntimeGraphFile(onnx::ModelProto& model) : m_file("npucc-graph", ".onnx") {
  const auto& path = m_file.path();
  const auto written =
      write_graph(model, path.parent_path(), path.filename().string(), ExternalData::automatic);
  for (const auto& data : written.external_data) {
    m_file.also_remove(path.parent_path() / data.file);
  }
}

} // namespace npucc::compiler

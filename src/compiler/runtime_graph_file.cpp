#include "compiler/runtime_graph_file.h"

#include "compiler/graph_writer.h"
#include "compiler/write_control.h"

namespace npucc::compiler {

RuntimeGraphFile::RuntimeGraphFile(onnx::ModelProto& model) : m_folder("npucc-graph") {
  WriteControl private_files;
  private_files.file_mode = util::FileMode::exactly(util::PrivateTempFolder::k_file_mode);
  write_graph(model, m_folder.path(), k_file_name, ExternalData::automatic, &private_files);
}

} // namespace npucc::compiler

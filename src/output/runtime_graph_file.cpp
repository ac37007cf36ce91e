#include "output/runtime_graph_file.h"

#include "output/graph_writer.h"
#include "output/write_control.h"

namespace npucc::output {

RuntimeGraphFile::RuntimeGraphFile(onnx::ModelProto& model) : m_folder("npucc-graph") {
  WriteControl private_files;
  private_files.file_mode = util::FileMode::exactly(util::PrivateTempFolder::k_file_mode);
  write_graph(model, m_folder.path(), k_file_name, ExternalData::automatic, &private_files);
}

} // namespace npucc::output
